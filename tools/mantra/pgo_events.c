/* The runtime events `mantra pgo` reads, decoded by the readers the generator makes from the
 * manifests; no layout is written here (docs/manifest.md "One source of truth"):
 *   generated/dotnet_readers.h  manifest/dotnet.yaml, the events mantra writes itself:
 *                               JitInstrumentationData(Verbose), MethodLoadVerbose,
 *                               MethodJittingStarted, ModuleLoad, the rundown's
 *                               MethodDCStart/EndVerbose and ModuleDCStart/End;
 *   generated/clr_readers.h     the built-in .NET runtime data, manifest/clr/runtime.yaml (readers
 *                               only, manifest/clr/readers.args): every version of those events
 *                               that the runtime writes, and AssemblyLoad, MethodDetails, BulkType
 *                               and the rundown's AssemblyDCStart/End.
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

/* 0 when the payload fits, else -1 with *why saying how it does not. */
static int check_fit(int rc, uint32_t version, unsigned latest, const char **why) {
    if (fits(rc, version, latest))
        return 0;
    *why = status_text(rc);
    return -1;
}

/* A UTF-16 view as a new UTF-8 string (mantra_str16_to_utf8: lone surrogates become U+FFFD); NULL
 * when out of memory. */
static char *utf8_of(mantra_str16 s) {
    size_t need = mantra_str16_to_utf8(s, NULL, 0);
    char *u = malloc(need + 1);
    if (u != NULL)
        mantra_str16_to_utf8(s, u, need + 1);
    return u;
}

/* The three name strings as new UTF-8 strings; -1 (nothing kept) when out of memory. */
static int names_of(mantra_str16 ns, mantra_str16 name, mantra_str16 sig, char **o_ns, char **o_name, char **o_sig) {
    *o_ns = utf8_of(ns);
    *o_name = utf8_of(name);
    *o_sig = utf8_of(sig);
    if (*o_ns && *o_name && *o_sig)
        return 0;
    free(*o_ns);
    free(*o_name);
    free(*o_sig);
    *o_ns = *o_name = *o_sig = NULL;
    return -1;
}

/* Reads the event ev with the every-version reader OURS (manifest/dotnet.yaml) when that manifest
 * declares ev's version, or when neither declares it and OURS knows the newer versions; else with
 * THEIRS (the built-in runtime data). Declares `f` (the reader's fields) for FILL, which moves them
 * into the caller's output; returns -1 from the function when the payload does not fit. */
#define READ_EITHER(OURS, THEIRS, FILL)                                                                   \
    do {                                                                                                \
        if (OURS_FIRST(OURS, THEIRS))                                                                   \
            READ_ONE(OURS, FILL);                                                                       \
        else                                                                                            \
            READ_ONE(THEIRS, FILL);                                                                     \
    } while (0)
/* Whether READ_EITHER reads ev with OURS. */
#define OURS_FIRST(OURS, THEIRS)                                                                        \
    (mantra_##OURS##_declares(ev->version) ||                                                           \
     (!mantra_##THEIRS##_declares(ev->version) &&                                                       \
      MANTRA_##OURS##_LATEST_VERSION >= MANTRA_##THEIRS##_LATEST_VERSION))
/* Reads ev with the every-version reader R; see READ_EITHER. */
#define READ_ONE(R, FILL)                                                                                 \
    do {                                                                                                  \
        mantra_##R##_any f;                                                                               \
        int rc_ = mantra_##R##_decode_any(ev->version, ev->payload, ev->payload_size, pointer_size, &f);  \
        if (check_fit(rc_, ev->version, MANTRA_##R##_LATEST_VERSION, why) < 0)                            \
            return -1;                                                                                    \
        FILL;                                                                                             \
    } while (0)

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

/* As check_fit, for 297/298, with instr_why's reasons. */
#define INSTR_FIT(R, BEFORE)                                                                              \
    do {                                                                                                  \
        if (!fits(rc_, ev->version, MANTRA_##R##_LATEST_VERSION)) {                                       \
            *why = instr_why(rc_, (BEFORE), f.DataSize, f.Data.data);                                     \
            return -1;                                                                                    \
        }                                                                                                 \
    } while (0)
#define INSTR_COMMON(f, e)                                                                                \
    ((e)->clr_instance = (f).ClrInstanceID, (e)->method_flags = (f).MethodFlags,                         \
     (e)->data_size = (f).DataSize, (e)->method_id = (f).MethodID, (e)->data = (f).Data.data)
#define READ_INSTR_VERBOSE(R)                                                                             \
    do {                                                                                                  \
        mantra_##R##_any f;                                                                               \
        int rc_ = mantra_##R##_decode_any(ev->version, ev->payload, ev->payload_size, pointer_size, &f);  \
        INSTR_FIT(R, f.MethodSignature.data != NULL);                                                     \
        INSTR_COMMON(f, e);                                                                               \
        e->module_id = f.ModuleID;                                                                        \
        e->token = f.MethodToken;                                                                         \
        if (names_of(f.MethodNamespace, f.MethodName, f.MethodSignature, &e->name_space, &e->name,       \
                     &e->signature) < 0)                                                                  \
            return -2;                                                                                    \
    } while (0)
/* MethodID, the field before Data, is a MethodDesc address: never 0 once read. */
#define READ_INSTR(R)                                                                                     \
    do {                                                                                                  \
        mantra_##R##_any f;                                                                               \
        int rc_ = mantra_##R##_decode_any(ev->version, ev->payload, ev->payload_size, pointer_size, &f);  \
        INSTR_FIT(R, f.MethodID != 0);                                                                    \
        INSTR_COMMON(f, e);                                                                               \
    } while (0)

int pgo_read_instr(const mantra_trace_event *ev, unsigned pointer_size, int verbose, pgo_instr_event *e,
                   const char **why) {
    memset(e, 0, sizeof *e);
    if (verbose) {
        if (OURS_FIRST(DotNETRuntime_JitInstrumentationDataVerbose, Clr_JitInstrumentationDataVerbose))
            READ_INSTR_VERBOSE(DotNETRuntime_JitInstrumentationDataVerbose);
        else
            READ_INSTR_VERBOSE(Clr_JitInstrumentationDataVerbose);
    } else if (OURS_FIRST(DotNETRuntime_JitInstrumentationData, Clr_JitInstrumentationData)) {
        READ_INSTR(DotNETRuntime_JitInstrumentationData);
    } else {
        READ_INSTR(Clr_JitInstrumentationData);
    }
    return 0;
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
     out->il_path = utf8_of(f.ModuleILPath))

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

int pgo_read_method(const mantra_trace_event *ev, unsigned pointer_size, int rundown, pgo_method_event *out,
                    const char **why) {
    memset(out, 0, sizeof *out);
    int mem = 0;
    if (!rundown && ev->metadata->event_id == 145)
        READ_EITHER(DotNETRuntime_MethodJittingStarted, Clr_MethodJittingStarted,
                    (out->il_size = f.MethodILSize, METHOD_FILL));
    else if (!rundown)
        READ_EITHER(DotNETRuntime_MethodLoadVerbose, Clr_MethodLoadVerbose, METHOD_FILL);
    else if (ev->metadata->event_id == 143)
        READ_EITHER(DotNETRuntimeRundown_MethodDCStartVerbose, ClrRundown_MethodDCStartVerbose, METHOD_FILL);
    else
        READ_EITHER(DotNETRuntimeRundown_MethodDCEndVerbose, ClrRundown_MethodDCEndVerbose, METHOD_FILL);
    return mem < 0 ? -2 : 0;
}

void pgo_method_event_free(pgo_method_event *e) { free_names(&e->name_space, &e->name, &e->signature); }

/* AssemblyLoad and the rundown's AssemblyDCStart/End (the built-in runtime data only). */
#define ASSEMBLY_FILL (out->assembly_id = f.AssemblyID, out->name = utf8_of(f.FullyQualifiedAssemblyName))

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
    mantra_array params = {NULL, 0};
    READ_ONE(Clr_MethodDetails, (out->method_id = f.MethodID, out->type_id = f.TypeID, out->token = f.MethodToken,
                                 out->loader_module = f.LoaderModuleID, params = f.TypeParameters));
    if (params.count) {
        out->type_parameters = malloc(params.count * sizeof *out->type_parameters);
        if (out->type_parameters == NULL)
            return -2;
        for (size_t i = 0; i < params.count; i++)
            out->type_parameters[i] = mantra_array_u64(params, i);
    }
    out->type_parameter_count = (uint32_t)params.count;
    return 0;
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
        char *name = utf8_of(v.Name);
        uint64_t *tp = NULL;
        size_t n = v.TypeParameters.count;
        if (name == NULL || (n && (tp = malloc(n * sizeof *tp)) == NULL)) {
            free(name);
            return -2;
        }
        for (size_t k = 0; k < n; k++)
            tp[k] = mantra_array_u64(v.TypeParameters, k);
        int cb = fn(ctx, v.TypeID, v.ModuleID, name, tp, (uint32_t)n);
        free(tp);
        free(name);
        if (cb < 0)
            return -2;
    }
    return 0;
}
