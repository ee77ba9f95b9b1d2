/* mantra/symbols.h - a time-aware symbol map of a process's code: what method was loaded at an
 * address at a given time, its hot or cold part, its module (docs/symbols.md).
 *
 * It is fed facts, in any order: modules loaded and unloaded, methods loaded (a method-load event:
 * live from its time; a start rundown: loaded before the trace began; an end rundown: loaded since
 * its module's load, as TraceEvent's TraceLog treats methods it sees only there) and unloaded, each
 * method with a hot range and an optional cold range. mantra_symbols_finish() then builds the index;
 * mantra_symbols_resolve() answers (address, time) questions. A range unloaded and then used by
 * another method resolves to each in its own time. Times are the trace's ticks. Not thread-safe:
 * one thread builds, any number resolve after finish. */
#ifndef MANTRA_SYMBOLS_H
#define MANTRA_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "mantra/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mantra_symbols mantra_symbols;

/* How a method's range became known (the time given with it means what this says). */
enum mantra_sym_origin {
    MANTRA_SYM_LOAD = 0,          /* a load event (MethodLoadVerbose, R2RGetEntryPoint): from that time */
    MANTRA_SYM_START_RUNDOWN = 1, /* loaded before the trace's start (MethodDCStartVerbose) */
    MANTRA_SYM_END_RUNDOWN = 2,   /* loaded at the time given, or since its module's load when no
                                     earlier fact knows it (MethodDCEndVerbose) */
    MANTRA_SYM_IMAGE = 3          /* from the module's image file (a ReadyToRun method placed where
                                     the module was mapped): for the module's whole lifetime (time
                                     is ignored). A fact of the trace about the same method's
                                     precompiled code (module and token, not jitted) takes
                                     precedence, and gets the image's cold part when it has none
                                     (the runtime's events give hot sizes only). */
};

/* MethodFlags' Jitted bit (ClrEtwAll.man MethodFlagsMap: 0x8). */
#define MANTRA_SYM_FLAG_JITTED 0x8u

typedef struct mantra_sym_method {
    uint64_t module_id;
    uint64_t method_id; /* the runtime's MethodDesc (0 when unknown) */
    uint32_t token;
    uint32_t flags;     /* the runtime's MethodFlags (MANTRA_SYM_FLAG_JITTED, ...) */
    const char *name_space, *name, *signature; /* copied; NULL as "" */
    uint64_t hot_start;
    uint32_t hot_size;
    uint64_t cold_start; /* 0 and 0 when the method has no cold part */
    uint32_t cold_size;
} mantra_sym_method;

enum mantra_sym_part { MANTRA_SYM_NONE = 0, MANTRA_SYM_HOT = 1, MANTRA_SYM_COLD = 2 };

typedef struct mantra_sym_result {
    int part;                    /* MANTRA_SYM_NONE when nothing was loaded there then */
    uint64_t module_id;
    const char *module_path;     /* the module's IL path, "" when unknown (owned by the map) */
    const mantra_sym_method *method; /* owned by the map */
    uint64_t offset;             /* from the start of the part */
    int il_mapped;               /* 1 when the hot part has an IL-to-native map entry there */
    int64_t il_offset;           /* that entry's IL offset (the runtime's special values stay: -1
                                    no mapping, -2 prolog, -3 epilog); -1 when il_mapped is 0 */
} mantra_sym_result;

int mantra_symbols_new(mantra_symbols **out);
void mantra_symbols_free(mantra_symbols *s);

/* A module loaded at time (origin as for methods: a rundown's module was loaded before the trace
 * or, at its end, since an unknown time). MANTRA_ENOMEM. */
int mantra_symbols_module_load(mantra_symbols *s, int64_t time, int origin, uint64_t module_id, const char *il_path);
/* A module unloaded: its methods' ranges end there. */
int mantra_symbols_module_unload(mantra_symbols *s, int64_t time, uint64_t module_id);
/* A method's code. A method already known at the same start in the same module (a rundown
 * repeating a load) is kept once. MANTRA_EINVAL (a hot size of 0), MANTRA_ENOMEM. */
int mantra_symbols_method_load(mantra_symbols *s, int64_t time, int origin, const mantra_sym_method *m);
/* Completes method_id's last fact (a load or rundown fact given before: mantra's R2RMethodLoad
 * follows its R2RGetEntryPoint, R2RMethodDCStart/End their MethodDCStart/EndVerbose, with the same
 * MethodID): its module and token where it has none (R2RGetEntryPoint carries neither), and its
 * cold part when cold_size is not 0. MANTRA_OK, MANTRA_ENOENT (no fact has that id: nothing kept),
 * MANTRA_EINVAL. */
int mantra_symbols_method_r2r(mantra_symbols *s, uint64_t method_id, uint64_t module_id, uint32_t token,
                              uint64_t cold_start, uint32_t cold_size);
/* The method whose hot part starts at hot_start is unloaded at time (MethodUnloadVerbose). */
int mantra_symbols_method_unload(mantra_symbols *s, int64_t time, uint64_t hot_start);

/* The IL-to-native map of the code of method_id: count pairs of a native offset from the hot part's
 * start and the IL offset there (the runtime's NO_MAPPING -1, PROLOG -2, EPILOG -3 kept). The
 * runtime writes MethodILToNativeMap just after its method's load event, so a map from a load
 * (rundown 0) belongs to the method id's last fact; in a rundown it writes
 * MethodDCStart/EndILToNativeMap just before the method's DCStart/EndVerbose, so a rundown map
 * (rundown 1) belongs to the method id's next rundown fact. A map no fact takes is ignored.
 * MANTRA_ENOMEM. */
int mantra_symbols_il_map(mantra_symbols *s, uint64_t method_id, int rundown, const uint32_t *native,
                          const int32_t *il, size_t count);

/* Builds the index; facts after this are refused (MANTRA_ESTATE). */
int mantra_symbols_finish(mantra_symbols *s);

/* What ran at address at time. A return address (a stack frame after the first) is looked up one
 * byte before it, where its call instruction lies, so that a call ending a method resolves to it.
 * MANTRA_OK (out->part says whether anything was found), MANTRA_ESTATE (not finished). */
int mantra_symbols_resolve(const mantra_symbols *s, uint64_t address, int64_t time, int return_address,
                           mantra_sym_result *out);

/* Counts: method facts held; of the image's (MANTRA_SYM_IMAGE), those that gave a cold part to a
 * fact of the trace, and those the trace knew nothing of (valid after finish). */
size_t mantra_symbols_method_count(const mantra_symbols *s);
void mantra_symbols_image_counts(const mantra_symbols *s, size_t *merged, size_t *alone);

#ifdef __cplusplus
}
#endif
#endif
