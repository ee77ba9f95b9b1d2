/* The runtime events `mantra pgo` reads, decoded by the readers the generator makes from the
 * manifests; no layout is written here (docs/manifest.md "One source of truth"):
 *   generated/dotnet_readers.h  manifest/dotnet.yaml, the events mantra writes itself:
 *                               JitInstrumentationData(Verbose), MethodLoadVerbose,
 *                               MethodJittingStarted, ModuleLoad, the rundown's
 *                               MethodDCStart/EndVerbose and ModuleDCStart/End;
 *   generated/clr_readers.h     the built-in .NET runtime data, manifest/clr/runtime.yaml (readers
 *                               only, manifest/clr/readers.args): every version of those events
 *                               that the runtime writes, and AssemblyLoad, MethodDetails, BulkType,
 *                               TypeLoadStop and the rundown's AssemblyDCStart/End.
 * An event version that manifest/dotnet.yaml declares is read with its readers, any other with the
 * runtime data's; a version newer than both know with the one that knows the newer versions. Every
 * event is read with an every-version reader (..._decode_any: the trace's version in, the newest
 * declared version's fields out), so that a version added to a manifest and regenerated is read with
 * no edit here. A payload fits when every field decoded and, for a version the manifest declares,
 * nothing follows them (a newer version may have appended fields). */
#include <stdlib.h>
#include <string.h>

#include "clr_readers.h"
#include "dotnet_readers.h"
#include "pgo_tool.h"

/* MANTRA_DECODE_OK, or TRAILING from a version newer than the manifest's newest. */
static int fits(int rc, uint32_t version, unsigned latest) {
    return rc == MANTRA_DECODE_OK || (rc == MANTRA_DECODE_TRAILING && version > latest);
}

static const char *status_text(int rc) {
    switch (rc) {
    case MANTRA_DECODE_TRAILING:
        return "bytes after the last field";
    case MANTRA_DECODE_SHORT:
        return "the payload ends inside a field";
    case MANTRA_DECODE_BAD_STRING:
        return "a string without its terminator";
    default:
        return "does not decode";
    }
}

/* The three name strings as new UTF-8 strings; -1 (nothing kept) when out of memory. */
static int names_of(mantra_str16 ns, mantra_str16 name, mantra_str16 sig, char **o_ns, char **o_name, char **o_sig) {
    *o_ns = pgo_str16_dup(ns);
    *o_name = pgo_str16_dup(name);
    *o_sig = pgo_str16_dup(sig);
    if (*o_ns && *o_name && *o_sig)
        return 0;
    free(*o_ns);
    free(*o_name);
    free(*o_sig);
    *o_ns = *o_name = *o_sig = NULL;
    return -1;
}

/* Reads ev with the every-version reader R into `f` (its fields) for FILL, which moves them into the
 * caller's output. When the payload does not fit, *why = WHY (an expression of rc_, the reader's
 * status, and f) and the function returns -1. */
#define READ_AS(R, WHY, FILL)                                                                             \
    do {                                                                                                  \
        mantra_##R##_any f;                                                                               \
        int rc_ = mantra_##R##_decode_any(ev->version, ev->payload, ev->payload_size, pointer_size, &f);  \
        if (!fits(rc_, ev->version, MANTRA_##R##_LATEST_VERSION)) {                                       \
            *why = (WHY);                                                                                 \
            return -1;                                                                                    \
        }                                                                                                 \
        FILL;                                                                                             \
    } while (0)
#define READ_ONE(R, FILL) READ_AS(R, status_text(rc_), FILL)
/* READ_AS with OURS (manifest/dotnet.yaml) when that manifest declares ev's version, or when
 * neither declares it and OURS knows the newer versions; else with THEIRS (the built-in data). */
#define READ_EITHER_AS(OURS, THEIRS, WHY, FILL)                                                           \
    do {                                                                                                  \
        if (mantra_##OURS##_declares(ev->version) ||                                                      \
            (!mantra_##THEIRS##_declares(ev->version) &&                                                  \
             MANTRA_##OURS##_LATEST_VERSION >= MANTRA_##THEIRS##_LATEST_VERSION))                         \
            READ_AS(OURS, WHY, FILL);                                                                     \
        else                                                                                              \
            READ_AS(THEIRS, WHY, FILL);                                                                   \
    } while (0)
#define READ_EITHER(OURS, THEIRS, FILL) READ_EITHER_AS(OURS, THEIRS, status_text(rc_), FILL)

/* Why an instrumentation payload does not fit, from where its reader stopped (the readers leave the
 * fields before the failing one decoded, dotnet_readers.h): DataSize is 0 until read, and Data
 * cannot fail with 0 bytes; `before` says whether the field before Data was read. */
static const char *instr_why(int rc, int before, uint32_t data_size, const uint8_t *data) {
    if (rc == MANTRA_DECODE_TRAILING)
        return "the payload has bytes after DataSize bytes of Data";
    if (data != NULL)
        return "the payload ends inside the fields after Data";
    if (before && data_size != 0)
        return "DataSize is larger than the bytes after the fields";
    return "the payload ends inside the fields before Data";
}

/* The fields 297 and 298 share. */
#define INSTR_FILL                                                                                        \
    (e->clr_instance = f.ClrInstanceID, e->method_flags = f.MethodFlags, e->data_size = f.DataSize,        \
     e->method_id = f.MethodID, e->data = f.Data.data)

int pgo_read_instr(const mantra_trace_event *ev, unsigned pointer_size, int verbose, pgo_instr_event *e,
                   const char **why) {
    memset(e, 0, sizeof *e);
    int mem = 0;
    if (verbose)
        READ_EITHER_AS(DotNETRuntime_JitInstrumentationDataVerbose, Clr_JitInstrumentationDataVerbose,
                       instr_why(rc_, f.MethodSignature.data != NULL, f.DataSize, f.Data.data),
                       (INSTR_FILL, e->module_id = f.ModuleID, e->token = f.MethodToken,
                        mem = names_of(f.MethodNamespace, f.MethodName, f.MethodSignature, &e->name_space,
                                       &e->name, &e->signature)));
    else /* MethodID, the field before Data, is a MethodDesc address: never 0 once read */
        READ_EITHER_AS(DotNETRuntime_JitInstrumentationData, Clr_JitInstrumentationData,
                       instr_why(rc_, f.MethodID != 0, f.DataSize, f.Data.data), INSTR_FILL);
    return mem < 0 ? -2 : 0;
}

/* Frees the three name strings of an event and clears the pointers. */
static void free_names(char **name_space, char **name, char **signature) {
    free(*name_space);
    free(*name);
    free(*signature);
    *name_space = *name = *signature = NULL;
}

void pgo_instr_event_free(pgo_instr_event *e) { free_names(&e->name_space, &e->name, &e->signature); }

/* ModuleLoad and the rundown's ModuleDCStart/End. */
#define MODULE_FILL                                                                                       \
    (out->module_id = f.ModuleID, out->assembly_id = f.AssemblyID, out->pdb_guid = f.ManagedPdbSignature, \
     out->il_path = pgo_str16_dup(f.ModuleILPath))

int pgo_read_module(const mantra_trace_event *ev, unsigned pointer_size, int rundown, pgo_module_event *out,
                    const char **why) {
    memset(out, 0, sizeof *out);
    if (!rundown)
        READ_EITHER(DotNETRuntime_ModuleLoad, Clr_ModuleLoad, MODULE_FILL);
    else if (ev->metadata->event_id == 153)
        READ_EITHER(DotNETRuntimeRundown_ModuleDCStart, ClrRundown_ModuleDCStart, MODULE_FILL);
    else
        READ_EITHER(DotNETRuntimeRundown_ModuleDCEnd, ClrRundown_ModuleDCEnd, MODULE_FILL);
    return out->il_path == NULL ? -2 : 0;
}

/* MethodLoadVerbose, MethodJittingStarted and the rundown's MethodDCStart/EndVerbose: a MethodID's
 * names. */
#define METHOD_FILL                                                                                       \
    (out->method_id = f.MethodID, out->module_id = f.ModuleID, out->token = f.MethodToken,                \
     mem = names_of(f.MethodNamespace, f.MethodName, f.MethodSignature, &out->name_space, &out->name,   \
                    &out->signature))

/* ... and the code range of the verbose load, unload and rundown events */
#define METHOD_RANGE_FILL (METHOD_FILL, out->start = f.MethodStartAddress, out->size = f.MethodSize, out->flags = f.MethodFlags)

int pgo_read_method(const mantra_trace_event *ev, unsigned pointer_size, int rundown, pgo_method_event *out,
                    const char **why) {
    memset(out, 0, sizeof *out);
    int mem = 0;
    if (!rundown && ev->metadata->event_id == 145)
        READ_EITHER(DotNETRuntime_MethodJittingStarted, Clr_MethodJittingStarted,
                    (out->il_size = f.MethodILSize, METHOD_FILL));
    else if (!rundown)
        READ_EITHER(DotNETRuntime_MethodLoadVerbose, Clr_MethodLoadVerbose, METHOD_RANGE_FILL);
    else if (ev->metadata->event_id == 143)
        READ_EITHER(DotNETRuntimeRundown_MethodDCStartVerbose, ClrRundown_MethodDCStartVerbose, METHOD_RANGE_FILL);
    else
        READ_EITHER(DotNETRuntimeRundown_MethodDCEndVerbose, ClrRundown_MethodDCEndVerbose, METHOD_RANGE_FILL);
    return mem < 0 ? -2 : 0;
}

int pgo_read_method_unload(const mantra_trace_event *ev, unsigned pointer_size, pgo_method_event *out, const char **why) {
    memset(out, 0, sizeof *out);
    int mem = 0;
    READ_ONE(Clr_MethodUnloadVerbose, METHOD_RANGE_FILL);
    return mem < 0 ? -2 : 0;
}

int pgo_read_module_unload(const mantra_trace_event *ev, unsigned pointer_size, pgo_module_event *out, const char **why) {
    memset(out, 0, sizeof *out);
    READ_EITHER(DotNETRuntime_ModuleUnload, Clr_ModuleUnload, MODULE_FILL);
    return out->il_path == NULL ? -2 : 0;
}

#define IL_MAP_FILL (out->method_id = f.MethodID, out->il_offsets = f.ILOffsets, out->native_offsets = f.NativeOffsets)

int pgo_read_il_map(const mantra_trace_event *ev, unsigned pointer_size, int rundown, pgo_il_map_event *out,
                    const char **why) {
    memset(out, 0, sizeof *out);
    if (!rundown)
        READ_ONE(Clr_MethodILToNativeMap, IL_MAP_FILL);
    else if (ev->metadata->event_id == 149)
        READ_ONE(ClrRundown_MethodDCStartILToNativeMap, IL_MAP_FILL);
    else
        READ_ONE(ClrRundown_MethodDCEndILToNativeMap, IL_MAP_FILL);
    if (out->il_offsets.count != out->native_offsets.count) {
        *why = "ILOffsets and NativeOffsets differ in length";
        return -1;
    }
    return 0;
}

#define R2R_ENTRY_FILL                                                                                    \
    (out->method_id = f.MethodID, out->start = f.EntryPoint,                                              \
     mem = names_of(f.MethodNamespace, f.MethodName, f.MethodSignature, &out->name_space, &out->name,   \
                    &out->signature))

int pgo_read_r2r_entry(const mantra_trace_event *ev, unsigned pointer_size, pgo_method_event *out, const char **why) {
    memset(out, 0, sizeof *out);
    int mem = 0;
    if (mantra_DotNETRuntime_R2RGetEntryPoint_declares(ev->version) || ev->version > MANTRA_Clr_R2RGetEntryPoint_LATEST_VERSION)
        READ_AS(DotNETRuntime_R2RGetEntryPoint, status_text(rc_),
                (R2R_ENTRY_FILL, out->size = ev->version >= 1 ? f.MethodSize : 0));
    else
        READ_ONE(Clr_R2RGetEntryPoint, R2R_ENTRY_FILL);
    return mem < 0 ? -2 : 0;
}

#define R2R_METHOD_FILL                                                                                    \
    (out->method_id = f.MethodID, out->module_id = f.ModuleID, out->hot_start = f.HotStartAddress,           \
     out->hot_size = f.HotSize, out->cold_start = f.ColdStartAddress, out->cold_size = f.ColdSize,           \
     out->token = f.MethodToken, out->flags = f.MethodFlags)

int pgo_read_r2r_method(const mantra_trace_event *ev, unsigned pointer_size, int which, pgo_r2r_method_event *out,
                        const char **why) {
    memset(out, 0, sizeof *out);
    if (which == 0)
        READ_ONE(DotNETRuntime_R2RMethodLoad, R2R_METHOD_FILL);
    else if (which == 1)
        READ_ONE(DotNETRuntimeRundown_R2RMethodDCStart, R2R_METHOD_FILL);
    else
        READ_ONE(DotNETRuntimeRundown_R2RMethodDCEnd, R2R_METHOD_FILL);
    return 0;
}

void pgo_method_event_free(pgo_method_event *e) { free_names(&e->name_space, &e->name, &e->signature); }

/* AssemblyLoad and the rundown's AssemblyDCStart/End (the built-in runtime data only). */
#define ASSEMBLY_FILL (out->assembly_id = f.AssemblyID, out->name = pgo_str16_dup(f.FullyQualifiedAssemblyName))

int pgo_read_assembly(const mantra_trace_event *ev, unsigned pointer_size, int rundown, pgo_assembly_event *out,
                      const char **why) {
    memset(out, 0, sizeof *out);
    if (!rundown)
        READ_ONE(Clr_AssemblyLoad, ASSEMBLY_FILL);
    else if (ev->metadata->event_id == 155)
        READ_ONE(ClrRundown_AssemblyDCStart, ASSEMBLY_FILL);
    else
        READ_ONE(ClrRundown_AssemblyDCEnd, ASSEMBLY_FILL);
    return out->name == NULL ? -2 : 0;
}

int pgo_read_method_details(const mantra_trace_event *ev, unsigned pointer_size, pgo_details_event *out,
                            const char **why) {
    memset(out, 0, sizeof *out);
    READ_ONE(Clr_MethodDetails,
             (out->method_id = f.MethodID, out->type_id = f.TypeID, out->token = f.MethodToken,
              out->loader_module = f.LoaderModuleID, out->type_parameter_count = (uint32_t)f.TypeParameters.count,
              out->type_parameters = pgo_u64_array_dup(f.TypeParameters)));
    return out->type_parameter_count && out->type_parameters == NULL ? -2 : 0;
}

int pgo_read_type_load(const mantra_trace_event *ev, unsigned pointer_size, pgo_type_load_event *out,
                       const char **why) {
    memset(out, 0, sizeof *out);
    READ_ONE(Clr_TypeLoadStop, (out->type_id = f.TypeID, out->name = pgo_str16_dup(f.TypeName)));
    return out->name == NULL ? -2 : 0;
}

int pgo_read_bulk_type(const mantra_trace_event *ev, unsigned pointer_size, pgo_type_fn fn, void *ctx,
                       const char **why) {
    mantra_bytes values = {NULL, 0, 0};
    READ_ONE(Clr_BulkType, values = f.Values);
    mantra_cursor c = mantra_cursor_of(values, pointer_size);
    for (size_t i = 0; i < values.count; i++) {
        mantra_Clr_BulkType_any_Values_elem v;
        if (mantra_Clr_BulkType_any_Values_next(&c, &v) < 0)
            break; /* cannot happen: the whole payload decoded */
        if (fn(ctx, v.TypeID, v.ModuleID, v.Name, v.TypeParameters) < 0)
            return -2;
    }
    return 0;
}
