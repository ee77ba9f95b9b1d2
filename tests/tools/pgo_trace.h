/* pgo_trace.h - writes nettrace files shaped like a .NET runtime's PGO trace, for the tests of
 * `mantra pgo` (test_pgo_convert.c) and its benchmark (bench/pgo_convert_trace.c).
 *
 * Events of Microsoft-Windows-DotNETRuntime are defined with empty metadata (an id and no field
 * list), as the runtime writes them (dotnet/runtime src/native/eventpipe/ep-event.c); payloads are
 * laid out by hand by the ClrEtwAll.man templates (dotnet/runtime src/coreclr/vm/ClrEtwAll.man), so
 * that the converter's generated readers are checked against a layout written independently of
 * them. Aborts on any failure of the writer (test helper). */
#ifndef MANTRA_TESTS_PGO_TRACE_H
#define MANTRA_TESTS_PGO_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "mantra/event.h"
#include "dotnet_defs.h" /* MANTRA_PGO_<Name>: the PGO kinds of manifest/dotnet.yaml */
#include "mantra/pgo.h"

typedef struct pgo_trace pgo_trace;

pgo_trace *pgo_trace_open(const char *path);
/* Finishes the trace (end-of-stream tag) and frees it. */
void pgo_trace_close(pgo_trace *t);

/* Any runtime event with payload[0..size). */
void pgo_trace_event(pgo_trace *t, uint32_t event_id, uint32_t version, const void *payload, size_t size);
/* Any event of Microsoft-Windows-DotNETRuntimeRundown with payload[0..size). */
void pgo_trace_rundown_event(pgo_trace *t, uint32_t event_id, uint32_t version, const void *payload, size_t size);
/* ModuleLoad V2 (152) and AssemblyLoad V1 (154). */
void pgo_trace_module(pgo_trace *t, uint64_t module_id, uint64_t assembly_id, const char *il_path,
                      const mantra_guid *pdb);
void pgo_trace_assembly(pgo_trace *t, uint64_t assembly_id, const char *full_name);
/* TypeLoadStop (74): TypeLoadStartID 1, ClrInstanceID, LoadLevel 6, TypeID, TypeName. */
void pgo_trace_type_load(pgo_trace *t, uint64_t type_id, const char *name);
/* One BulkType (15) of up to 16 types (Name "" when name is NULL, as without GCHeapAndTypeNames). */
typedef struct pgo_trace_type {
    uint64_t type_id, module_id;
    uint8_t cor_element_type;
    const char *name;
    uint32_t nparams;
    const uint64_t *params;
} pgo_trace_type;
void pgo_trace_bulk_types(pgo_trace *t, const pgo_trace_type *types, size_t n);
/* MethodDetails (72): MethodID, TypeID, MethodToken, TypeParameterCount, LoaderModuleID, parameters. */
void pgo_trace_method_details(pgo_trace *t, uint64_t method_id, uint64_t type_id, uint32_t token, uint64_t module_id,
                              uint32_t nparams, const uint64_t *params);
/* One JitInstrumentationDataVerbose (298) chunk. */
void pgo_trace_chunk(pgo_trace *t, uint16_t clr, uint32_t method_flags, uint64_t method_id, uint64_t module_id,
                     uint32_t token, const char *ns, const char *name, const char *sig, const void *data,
                     uint32_t size);
/* A method's schema and values encoded (mantra_pgo_encode) and written as its chunks, in order. */
void pgo_trace_method(pgo_trace *t, uint64_t method_id, uint64_t module_id, uint32_t token, const char *ns,
                      const char *name, const char *sig, const mantra_pgo_schema *schema, size_t records,
                      const int64_t *values, size_t value_count);

#endif
