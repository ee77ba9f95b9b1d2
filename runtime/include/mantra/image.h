/* mantra/image.h - precompiled images of the reference interpreter (docs/image-format.md).
 *
 * An image holds a module's methods precompiled and laid out from a profile: each method's blocks
 * that ran in a hot part, in the hot section ordered by weight (hottest first), its blocks that
 * never ran in a cold part in the cold section, branches between the parts fixed up. An image is
 * opened read-only and executed in place, so the addresses in events and samples are addresses of
 * the mapped file, in the hot or the cold section. Every check that opening makes (magic,
 * version, size, checksum, sections, method table, and every instruction of every part) must
 * pass before anything runs; a failure names the check and the file offset.
 *
 * Images load and unload at run time (mantra_image_open / mantra_image_close), in any number and
 * any order; a listener (the runtime's event writer, mantra_dotnet) learns of loads, unloads and
 * each method's first call, the per-method load step of precompiled code. */
#ifndef MANTRA_IMAGE_H
#define MANTRA_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "mantra/interp.h"
#include "mantra/status.h"

MANTRA_BEGIN_DECLS

typedef struct mantra_image mantra_image;

/* The CRC-32 of ZIP and of images (polynomial 0xEDB88320 reflected, initial and final XOR
 * 0xFFFFFFFF). crc: 0 to start, or the value of the bytes before (to continue). */
uint32_t mantra_crc32(uint32_t crc, const void *data, size_t size);

/* ---- building ------------------------------------------------------------------------------- */

/* The basic blocks of method (mantra_interp_module_method order): writes the IL offsets where
 * they start, in IL order (the probes of MANTRA_InterpPgo=2 stand there), up to cap of them.
 * Returns their number (which may exceed cap), or MANTRA_EINVAL. */
int64_t mantra_image_blocks(const mantra_interp_module *m, size_t method, uint32_t *il_offsets, size_t cap);

/* The number of instructions of each of method's blocks (the order of mantra_image_blocks), up to
 * cap: a block count times its instructions is what the block executed. Returns the number of
 * blocks, or MANTRA_EINVAL. */
int64_t mantra_image_block_insns(const mantra_interp_module *m, size_t method, uint32_t *insns, size_t cap);

/* How one method is laid out. */
typedef struct mantra_image_layout {
    uint64_t weight;          /* hot parts go in decreasing weight (ties: method order) */
    const uint8_t *block_hot; /* per block of mantra_image_blocks: nonzero = hot part, 0 = cold part;
                               * NULL: every block as whole_hot says */
    int whole_hot;            /* with block_hot NULL: 1 the whole method is hot, 0 it is cold */
} mantra_image_layout;

/* Builds the image of module m (assembled, not precompiled) with layout[i] for method i: *out
 * (malloc'd) and *size. A method whose entry block is cold but that has hot blocks keeps its
 * entry block hot (its hot part holds its entry); a method with no hot block is placed whole in
 * the cold section (flag MANTRA_IMAGE_PLACED_COLD, no split). 0, MANTRA_EINVAL (also: m has no
 * method; an image holds at least one), MANTRA_ENOMEM, MANTRA_ERANGE (over 4 GiB). */
int mantra_image_build(const mantra_interp_module *m, const mantra_image_layout *layout, uint8_t **out, size_t *size);

/* ---- checking and opening ------------------------------------------------------------------- */

/* Why bytes are not an image that can run: the file offset of what failed, and a sentence. */
typedef struct mantra_image_error {
    uint64_t offset;
    char message[256];
} mantra_image_error;

#define MANTRA_IMAGE_NO_CHECKSUM 1u /* skip the checksum (fuzzing reaches the checks behind it) */

/* Every check of opening without opening: 0, or MANTRA_EFORMAT with *err (may be NULL). */
int mantra_image_check(const void *bytes, size_t size, unsigned flags, mantra_image_error *err);

/* Opens the image at path: maps it read-only (reads it into memory where the host cannot map, as
 * under WASI) at address_hint when that range is free (NULL: anywhere), checks it, and makes its
 * program (no code runs). The listener's loaded() follows. 0 and *out; MANTRA_EFORMAT (*err),
 * MANTRA_EIO (cannot open or read: err->message says why), MANTRA_ENOMEM. */
int mantra_image_open(const char *path, const void *address_hint, mantra_image **out, mantra_image_error *err);
/* The same over bytes a host holds (they must stay unchanged and alive until mantra_image_close):
 * executed in place. name stands for the path in events. */
int mantra_image_open_memory(const void *bytes, size_t size, const char *name, unsigned flags, mantra_image **out,
                             mantra_image_error *err);
/* Unloads: the listener's unloading() first (events), then the program and the mapping are freed.
 * No thread may be running the image's program or hold a thread created on it. */
void mantra_image_close(mantra_image *im);

const mantra_interp_module *mantra_image_module(const mantra_image *im);
const mantra_interp_program *mantra_image_program(const mantra_image *im);
/* The image of a program, or NULL when p runs from source (the rundown tells them apart). */
const mantra_image *mantra_image_of_program(const mantra_interp_program *p);
const void *mantra_image_base(const mantra_image *im); /* where its first byte is mapped */
size_t mantra_image_size(const mantra_image *im);
const char *mantra_image_path(const mantra_image *im);

#define MANTRA_IMAGE_PLACED_COLD 1u /* the whole method sits in the cold section (never ran) */
#define MANTRA_IMAGE_ASYNC 2u       /* an async method (docs/interp.md "Async methods") */

/* One method of the method table. RVAs are offsets from the image's base. cold_size 0: no cold
 * part. */
typedef struct mantra_image_method_info {
    mantra_interp_method_identity id;
    uint32_t hot_rva, hot_size;   /* the part that holds the entry */
    uint32_t cold_rva, cold_size; /* the split-off part that never ran */
    uint64_t hot_start;           /* the parts' addresses as mapped (cold_start 0: no cold part) */
    uint64_t cold_start;
    uint32_t flags;               /* MANTRA_IMAGE_PLACED_COLD, MANTRA_IMAGE_ASYNC */
} mantra_image_method_info;

size_t mantra_image_method_count(const mantra_image *im);
int mantra_image_method(const mantra_image *im, size_t i, mantra_image_method_info *out);
/* 1 once method i has been called (its load events written), else 0. */
int mantra_image_method_called(const mantra_image *im, size_t i);

/* ---- the listener ---------------------------------------------------------------------------- */

/* Called on the thread that loads, unloads or first calls. first_call runs before the method's
 * first instruction, once per method and load. */
typedef struct mantra_image_listener {
    void (*loaded)(void *ctx, const mantra_image *im);
    void (*unloading)(void *ctx, const mantra_image *im);
    void (*first_call)(void *ctx, const mantra_image *im, size_t method);
    void *ctx;
} mantra_image_listener;
/* Sets the process's one listener (copied; NULL removes it). Set it before images load. */
void mantra_image_set_listener(const mantra_image_listener *l);

MANTRA_END_DECLS

#endif /* MANTRA_IMAGE_H */
