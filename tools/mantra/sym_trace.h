/* sym_trace.h - a trace's symbol map (mantra/symbols.h) as the tools build it from the runtime's
 * events (sym_trace.c), and frames named as TraceEvent's TraceLog names them. */
#ifndef MANTRA_TOOL_SYM_TRACE_H
#define MANTRA_TOOL_SYM_TRACE_H

#include <stdint.h>

#include "mantra/reader.h"
#include "mantra/symbols.h"

#define SYM_SAMPLE_PROVIDER "Microsoft-DotNETCore-SampleProfiler"

typedef struct sym_trace {
    const char *cmd, *path;
    mantra_symbols *map;
    unsigned pointer_size;
    uint64_t events, modules, module_unloads, methods, method_unloads, rundown_methods, r2r_entries;
    uint64_t r2r_without_size; /* R2RGetEntryPoint version 0: no size, so no range */
    uint64_t bad;              /* events of those kinds that did not decode (counted, skipped) */
    int truncated;             /* the trace ended early: what came before was read */
} sym_trace;

/* Reads every module and method event of the trace at path into a new, finished map. 0; -1 (the
 * trace cannot be read: message printed as `mantra CMD: PATH: ...`); -2 out of memory. */
int sym_trace_build(sym_trace *st, const char *cmd, const char *path);
void sym_trace_free(sym_trace *st);

/* A frame as TraceLog names it: "Module!Namespace.Name(parameters)" (Module: the module file's name
 * without its extension; parameters: the signature text from its '('), a cold part with "[cold]"
 * after the name when cold_mark; "0x<address>" when unresolved. Into buf (truncated to size). */
void sym_frame_text(const mantra_sym_result *r, uint64_t address, int cold_mark, char *buf, size_t size);

/* Is ev a sample with a stack (SampleProfiler's ThreadSample, or mantra's interpreter's)? */
int sym_is_sample(const mantra_trace_event *ev);

#endif
