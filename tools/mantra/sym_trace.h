/* sym_trace.h - a trace's symbol map (mantra/symbols.h) as the tools build it from the runtime's
 * events (sym_trace.c), and frames named as TraceEvent's TraceLog names them. */
#ifndef MANTRA_TOOL_SYM_TRACE_H
#define MANTRA_TOOL_SYM_TRACE_H

#include <stdint.h>

#include "mantra/reader.h"
#include "mantra/types.h"
#include "mantra/symbols.h"

#define SYM_SAMPLE_PROVIDER "Microsoft-DotNETCore-SampleProfiler"

/* What image placement needs from the trace (sym_image.c). */
typedef struct sym_module {
    uint64_t id;
    char *path;
    mantra_guid pdb_guid; /* all zeros when no event gave it */
} sym_module;
typedef struct sym_code {       /* where a method's precompiled code began (not jitted) */
    uint64_t module_id, start;
    uint32_t token;             /* 0 for R2RGetEntryPoint (it has names, no token) */
    char *name_space, *name;    /* R2RGetEntryPoint version 0 only */
} sym_code;

typedef struct sym_trace {
    const char *cmd, *path;
    mantra_symbols *map;
    unsigned pointer_size;
    uint64_t events, modules, module_unloads, methods, method_unloads, rundown_methods, r2r_entries;
    uint64_t r2r_without_size; /* R2RGetEntryPoint version 0: no size, so no range */
    uint64_t r2r_methods;      /* mantra's R2RMethodLoad and R2RMethodDCStart/End read */
    uint64_t cold_parts;       /* ... of which gave a cold part to a method fact */
    uint64_t cold_without_method; /* ... whose MethodID no fact before had (kept nowhere) */
    uint64_t il_maps;          /* IL-to-native maps read */
    uint64_t bad;              /* events of those kinds that did not decode (counted, skipped) */
    int truncated;             /* the trace ended early: what came before was read */
    int64_t freq;              /* the trace's ticks per second */
    sym_module *mods;
    size_t nmods, cap_mods;
    sym_code *codes;
    size_t ncodes, cap_codes;
    /* images (sym_image.c) */
    uint64_t images_placed, image_methods, images_unplaced;
    size_t image_cold_given, image_alone;
} sym_trace;

/* Reads every module and method event of the trace at path, places the ReadyToRun images (the
 * files images[0..nimages) matched to the trace's modules by file name, and the modules' own files
 * where readable), and finishes the map. 0; -1 (the trace cannot be read, or an image given does
 * not match its module: message printed as `mantra CMD: PATH: ...`); -2 out of memory. */
int sym_trace_build(sym_trace *st, const char *cmd, const char *path, const char *const *images, size_t nimages);
void sym_trace_free(sym_trace *st);

/* sym_image.c: places the images (see sym_trace_build) as MANTRA_SYM_IMAGE facts. 0, -1, -2. */
int sym_images_place(sym_trace *st, const char *const *images, size_t nimages);

/* Reads the trace st was built from once more: fn(ctx, ev, frames) for every event, frames[i] its
 * stack's frame i resolved (frames after the first as return addresses) when it has a stack and is
 * a sample, or an event resolve says to resolve (resolve NULL: samples only; sym_has_stack: every
 * event with a stack); NULL otherwise. 0, -1 (cannot be read: printed), -2 (out of memory), or fn's
 * non-zero result. */
typedef int (*sym_walk_fn)(void *ctx, const mantra_trace_event *ev, const mantra_sym_result *frames);
typedef int (*sym_resolve_fn)(const mantra_trace_event *ev);
int sym_trace_walk(const sym_trace *st, sym_resolve_fn resolve, sym_walk_fn fn, void *ctx);

/* A frame as TraceLog names it: "Module!Namespace.Name(parameters)" (Module: the module file's name
 * without its extension; parameters: the signature text from its '('), a cold part with "[cold]"
 * after the name when cold_mark; "0x<address>" when unresolved. Into buf (truncated to size). */
void sym_frame_text(const mantra_sym_result *r, uint64_t address, int cold_mark, char *buf, size_t size);

/* Is ev a sample with a stack (SampleProfiler's ThreadSample, or mantra's interpreter's)? */
int sym_is_sample(const mantra_trace_event *ev);
/* Has ev a stack (any event)? A sym_resolve_fn resolving every stack. */
int sym_has_stack(const mantra_trace_event *ev);

#endif
