/* flush_test_util.h - helpers of the PGO flush tests: programs run on the PGO store, traces read
 * back with the reader and their JitInstrumentationDataVerbose chunks reassembled and decoded. */
#ifndef FLUSH_TEST_UTIL_H
#define FLUSH_TEST_UTIL_H

#include <stdint.h>

#include "mantra/interp.h"

#define FT_MAX_METHODS 8

typedef struct ft_method {
    uint64_t method_id;
    uint32_t token;
    char name[64];
    char probes[512];  /* decoded: "IL:COUNT IL:COUNT ..." (hex IL, counts as uint32) */
    uint32_t chunks;   /* 298 events seen */
    uint32_t complete; /* complete sequences (final chunk after 0, 1, ...) */
    int in_order;      /* every chunk's index was the previous + 1 */
    uint32_t method_loads; /* MethodLoadVerbose events with this MethodID */
} ft_method;

typedef struct ft_trace {
    int complete;
    uint32_t module_loads, method_loads, chunks;
    uint32_t nmethods;
    ft_method methods[FT_MAX_METHODS];
} ft_trace;

/* Reads path (it must be complete and read without error). */
void ft_read(const char *path, ft_trace *t);
/* The method named name in t, or NULL. */
const ft_method *ft_find(const ft_trace *t, const char *name);

/* Assembles and loads text on the PGO store (mode, filter as the load options). */
mantra_interp_program *ft_load(const char *text, int mode, const char *filter, mantra_interp_module **mod);
/* Runs entry n times on one interpreter thread. */
void ft_run(mantra_interp_program *p, const char *entry, int n);
/* Pumps (threadless) or sleeps for ms milliseconds. */
void ft_pump_for(uint32_t ms);

#endif
