/* Shared declarations of `mantra pgo` (tools/mantra/pgo*.c): the converter from
 * JitInstrumentationData events to a profile (docs/cli.md "mantra pgo", docs/pgo.md).
 *
 *   pgo.c          the command: arguments, --check, --top, the summary
 *   pgo_maps.c     hash maps (uint64 -> uint64, string -> index) and string helpers
 *   pgo_events.c   the runtime events the converter reads, through the generated readers
 *   pgo_collect.c  one trace: events -> reassembled, decoded, named methods
 *   pgo_profile.c  the merged profile: method identity and the merge rules of PgoFormat.cs
 *   pgo_write.c    text (CLR format), JSON and the --top table
 */
#ifndef MANTRA_TOOL_PGO_H
#define MANTRA_TOOL_PGO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dotnet_defs.h" /* MANTRA_PGO_<Name>: the PGO kinds of manifest/dotnet.yaml */
#include "mantra/decode.h"
#include "mantra/pgo.h"
#include "mantra/reader.h"

/* ---- pgo_maps.c ------------------------------------------------------------------------------ */
typedef struct pgo_u64map {
    uint64_t *keys;
    uint64_t *vals;
    unsigned char *used;
    size_t cap, count;
} pgo_u64map;
/* 0, or -1 when out of memory. */
int pgo_u64map_put(pgo_u64map *m, uint64_t key, uint64_t val);
/* Pointer to the value, NULL when absent. */
uint64_t *pgo_u64map_get(const pgo_u64map *m, uint64_t key);
void pgo_u64map_free(pgo_u64map *m);

typedef struct pgo_strmap {
    char **keys;
    size_t *vals;
    size_t *hashes;
    size_t cap, count;
} pgo_strmap;
/* Index stored for key, or (size_t)-1. */
size_t pgo_strmap_get(const pgo_strmap *m, const char *key);
/* Stores key (copied) -> val, replacing the value of a key already there; 0 or -1 when out of memory. */
int pgo_strmap_put(pgo_strmap *m, const char *key, size_t val);
void pgo_strmap_free(pgo_strmap *m);

char *pgo_strdup(const char *s);
/* A UTF-16 view as a new UTF-8 string (lone surrogates become U+FFFD); NULL when out of memory. */
char *pgo_str16_dup(mantra_str16 s);
/* The elements of an array of UInt64 as a new array; NULL when empty or out of memory. */
uint64_t *pgo_u64_array_dup(mantra_array a);
/* printf into a new string (NULL when out of memory). */
char *pgo_strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- pgo_events.c: the runtime events read, through the generated readers ------------------- */
/* Each pgo_read_* decodes one event of the trace (its version and payload; pointer_size: the
 * trace's) with the every-version reader of its manifest (pgo_events.c says which) and returns 0,
 * -1 with *why set when the payload does not fit the template, or -2 when memory ran out; on -1 and
 * -2 it leaves nothing allocated. */

/* JitInstrumentationDataVerbose (298) and JitInstrumentationData (297). Strings are UTF-8 copies
 * (NULL for 297); data points into the payload. */
typedef struct pgo_instr_event {
    uint16_t clr_instance;
    uint32_t method_flags;
    uint32_t data_size;
    uint64_t method_id;
    uint64_t module_id;
    uint32_t token;
    char *name_space, *name, *signature;
    const uint8_t *data;
} pgo_instr_event;
/* verbose: 298, else 297. */
int pgo_read_instr(const mantra_trace_event *ev, unsigned pointer_size, int verbose, pgo_instr_event *out,
                   const char **why);
void pgo_instr_event_free(pgo_instr_event *e);

/* ModuleLoad (152) / the rundown's ModuleDCStart/End (153/154): what identifies a module. */
typedef struct pgo_module_event {
    uint64_t module_id, assembly_id;
    char *il_path;
    mantra_guid pdb_guid;
} pgo_module_event;
int pgo_read_module(const mantra_trace_event *ev, unsigned pointer_size, int rundown, pgo_module_event *out,
                    const char **why);

/* MethodLoadVerbose (143) / MethodJittingStarted (145) / the rundown's MethodDCStart/EndVerbose
 * (143/144): names of a MethodID. */
typedef struct pgo_method_event {
    uint64_t method_id, module_id;
    uint32_t token, il_size; /* il_size: MethodJittingStarted only (else 0) */
    char *name_space, *name, *signature;
    uint64_t start;          /* MethodStartAddress, MethodSize, MethodFlags (not MethodJittingStarted) */
    uint32_t size, flags;
} pgo_method_event;
int pgo_read_method(const mantra_trace_event *ev, unsigned pointer_size, int rundown, pgo_method_event *out,
                    const char **why);
void pgo_method_event_free(pgo_method_event *e);
/* MethodUnloadVerbose (144), into the same fields. */
int pgo_read_method_unload(const mantra_trace_event *ev, unsigned pointer_size, pgo_method_event *out, const char **why);
/* ModuleUnload (153). */
int pgo_read_module_unload(const mantra_trace_event *ev, unsigned pointer_size, pgo_module_event *out, const char **why);
/* MethodILToNativeMap (190) and the rundown's MethodDCStart/EndILToNativeMap (149/150): a method's
 * IL-to-native map, its two arrays views into the event's payload (valid while the event is). */
typedef struct pgo_il_map_event {
    uint64_t method_id;
    mantra_array il_offsets, native_offsets; /* uint32 elements, the same count */
} pgo_il_map_event;
int pgo_read_il_map(const mantra_trace_event *ev, unsigned pointer_size, int rundown, pgo_il_map_event *out,
                    const char **why);
/* R2RGetEntryPoint (159): method_id, names, start = EntryPoint; size = MethodSize of version 1
 * (mantra's, manifest/dotnet.yaml), 0 for version 0 (the .NET runtime's: no size). */
int pgo_read_r2r_entry(const mantra_trace_event *ev, unsigned pointer_size, pgo_method_event *out, const char **why);
/* mantra's R2RMethodLoad (runtime provider, 1000) and its rundown R2RMethodDCStart/End (1001, 1000;
 * manifest/dotnet.yaml): a precompiled method's hot and cold parts. which: 0 load, 1 DCStart, 2 DCEnd. */
typedef struct pgo_r2r_method_event {
    uint64_t method_id, module_id, hot_start, cold_start;
    uint32_t hot_size, cold_size, token, flags;
} pgo_r2r_method_event;
int pgo_read_r2r_method(const mantra_trace_event *ev, unsigned pointer_size, int which, pgo_r2r_method_event *out,
                        const char **why);

/* AssemblyLoad (154) / the rundown's AssemblyDCStart/End (155/156): an assembly's full name. */
typedef struct pgo_assembly_event {
    uint64_t assembly_id;
    char *name; /* FullyQualifiedAssemblyName */
} pgo_assembly_event;
int pgo_read_assembly(const mantra_trace_event *ev, unsigned pointer_size, int rundown, pgo_assembly_event *out,
                      const char **why);

/* MethodDetails (72): MethodID -> its type, token and method instantiation. */
typedef struct pgo_details_event {
    uint64_t method_id, type_id, loader_module;
    uint32_t token;
    uint32_t type_parameter_count;
    uint64_t *type_parameters; /* malloc'd */
} pgo_details_event;
int pgo_read_method_details(const mantra_trace_event *ev, unsigned pointer_size, pgo_details_event *out,
                            const char **why);

/* TypeLoadStop (74): the name the type loader gives a TypeID ("Outer+Inner`1<System.Int32>[]": enclosing
 * types in full, type arguments unqualified in angle brackets). */
typedef struct pgo_type_load_event {
    uint64_t type_id;
    char *name; /* malloc'd */
} pgo_type_load_event;
int pgo_read_type_load(const mantra_trace_event *ev, unsigned pointer_size, pgo_type_load_event *out,
                       const char **why);

/* BulkType (15): calls fn for every type of the event, with views into the payload (its Name, and
 * TypeParameters: UInt64 elements); -2 also when fn fails. */
typedef int (*pgo_type_fn)(void *ctx, uint64_t type_id, uint64_t module_id, mantra_str16 name,
                           mantra_array type_parameters);
int pgo_read_bulk_type(const mantra_trace_event *ev, unsigned pointer_size, pgo_type_fn fn, void *ctx,
                       const char **why);

/* ---- pgo_collect.c / pgo_profile.c ----------------------------------------------------------- */
/* Why a handle has no name: the innermost thing the trace does not name, and the keyword that would
 * have named it (pgo_unnamed_reasons[] in pgo_write.c: JSON key and text). */
enum {
    PGO_UNNAMED_TYPE_UNKNOWN,      /* a TypeID in no BulkType or TypeLoadStop event */
    PGO_UNNAMED_TYPE_NAMELESS,     /* BulkType without names and no TypeLoadStop */
    PGO_UNNAMED_TYPE_DEPTH,        /* type arguments nested deeper than the converter follows */
    PGO_UNNAMED_METHOD_NO_DETAILS, /* a MethodID without MethodDetails */
    PGO_UNNAMED_METHOD_NAMELESS,   /* a MethodID with MethodDetails but no method event naming it */
    PGO_UNNAMED_MIBC_TOKEN,        /* a .mibc's handle token that names no type or method this reader names */
    PGO_UNNAMED_IMAGE_UNKNOWN,     /* a handle a ReadyToRun image's embedded data leaves unknown */
    PGO_UNNAMED_IMAGE_CELL,        /* an image's import cell this reader cannot name */
    PGO_UNNAMED_REASONS,
    PGO_UNNAMED_OUT_OF_MEMORY = PGO_UNNAMED_REASONS /* not a reason: the naming ran out of memory */
};
typedef struct pgo_unnamed_reason {
    const char *key;  /* JSON "unnamed_by" key */
    const char *text; /* the summary's explanation */
} pgo_unnamed_reason;
extern const pgo_unnamed_reason pgo_unnamed_reasons[PGO_UNNAMED_REASONS];

/* Counts of a conversion (the JSON "stats" object and the summary line). */
typedef struct pgo_counts {
    uint64_t traces, truncated_traces, unreadable_traces;
    uint64_t profiles;         /* profiles read (.mibc) */
    uint64_t events;           /* 297 + 298 events read */
    uint64_t bad_payloads;     /* 297/298 events whose payload does not fit its template */
    uint64_t unfit_naming;     /* naming events (module, assembly, method, type) that do not fit: ignored */
    uint64_t chunks_dropped, discard_out_of_order, discard_after_final, incomplete;
    uint64_t undecodable;      /* reassembled methods whose data does not decode */
    uint64_t methods_read;     /* decoded methods, over every trace */
    uint64_t merged;           /* methods met again (same identity) and merged */
    uint64_t merge_conflicts;  /* records that could not be merged (kept from the first) */
    uint64_t handles, handles_unnamed; /* non-null, non-unknown handle values; without a name */
    uint64_t unnamed_by[PGO_UNNAMED_REASONS]; /* handles_unnamed by reason */
} pgo_counts;

/* One method of the profile. */
typedef struct pgo_method {
    char *module;       /* identity of the module: IL file name (or "module#ID" when unknown) */
    char *module_path;  /* ModuleILPath ("" when unknown) */
    char *pdb_guid;     /* ManagedPdbSignature, "" when unknown */
    uint32_t token;
    char *name_space, *name, *signature;
    uint32_t il_size;
    mantra_pgo_data data;
    char **handle_names; /* per value: a handle's name, NULL when none (or not a handle) */
    uint32_t *weights;   /* per value: how many times it counts, NULL for once each (a merged
                            histogram holds each distinct entry once: pgo_profile.c) */
    char *owner_type;    /* the declaring type's handle name (MethodDetails' TypeID), NULL when unknown */
    char **method_args;  /* a generic method's type arguments (MethodDetails' TypeParameters), by name */
    uint32_t nmethod_args; /* 0 also when a type argument has no name (method_args NULL then) */
    unsigned runs;       /* occurrences merged */
} pgo_method;

typedef struct pgo_profile {
    pgo_method *methods;
    size_t count, cap;
    pgo_strmap by_identity;
    pgo_counts counts;
} pgo_profile;

/* The identity of a method whose module, PDB signature, token, names and method type arguments are
 * known (a .mibc's or a JSON profile's; pgo_collect.c makes the same for a trace's):
 * "MODULE|PDB|TOKEN|NAMESPACE|NAME|SIGNATURE[|<ARG,...]"; NULL when out of memory. */
char *pgo_method_identity(const pgo_method *m);
/* m as the formats write it: a merged histogram's entries repeated as their weights say. 0 (view is m
 * itself), 1 (view owns new arrays: pgo_method_view_free) or -1 out of memory. */
int pgo_method_view(const pgo_method *m, pgo_method *view);
void pgo_method_view_free(pgo_method *view, int owned);
/* Names m's handles (m->handle_names, NULL for what is not a named handle): fn is called for each
 * TypeHandle or MethodHandle value other than 0 and returns its name, or NULL with *reason
 * (PGO_UNNAMED_*: counted in c) or PGO_HANDLE_NOT_COUNTED (an unknown handle that was never a name);
 * fn may rewrite *value. 0, or -2 out of memory (fn's reason PGO_UNNAMED_OUT_OF_MEMORY). */
#define PGO_HANDLE_NOT_COUNTED (-1)
typedef char *(*pgo_handle_namer)(void *ctx, int element, int64_t *value, int *reason);
int pgo_name_handles(pgo_method *m, pgo_counts *c, pgo_handle_namer fn, void *ctx);
/* The value a handle read by name gets (neither null, 0, nor one of the runtime's unnamed 1..33). */
#define PGO_NAMED_HANDLE INT64_C(0x7FFFFFFF00000000)

/* ---- pgo_profile_read.c: profiles as inputs ---------------------------------------------------- */
/* A text profile (the CLR's format) or a JSON profile (`--format json`) read into p, its methods
 * merged as a trace's: 0, -1 (the reason printed; a text profile's located errors drop their
 * methods only), -2 out of memory. */
int pgo_read_text(pgo_profile *p, const char *path);
int pgo_read_json(pgo_profile *p, const char *path);

/* Adds one decoded method under identity (pgo_collect.c says what it is made of; takes ownership
 * of m's strings and data on success and on failure): a new identity is appended, a known one
 * merged into it. 0, or -1 when out of memory. */
int pgo_profile_add(pgo_profile *p, pgo_method *m, const char *identity);
void pgo_profile_free(pgo_profile *p);
void pgo_method_free(pgo_method *m);

/* Reads one trace into p (warnings on stderr, counts in p->counts). Returns 0 (read to its end),
 * 1 (truncated: what was complete is kept), -1 (unreadable: open failed or bad bytes; message
 * printed), -2 out of memory. */
int pgo_collect_trace(pgo_profile *p, const char *path);

/* ---- pgo_write.c ----------------------------------------------------------------------------- */
int pgo_write_text(FILE *out, const pgo_profile *p);
int pgo_write_json(FILE *out, const pgo_profile *p);
/* The --top table of the n hottest methods. */
void pgo_write_top(FILE *out, const pgo_profile *p, size_t n);

/* Messages of the shared readers and writers of profiles, traces and assemblies (pgo_profile.c):
 * "mantra CMD: " then fmt, on stderr. CMD is pgo_cmd_name: "pgo", or the command that reads
 * profiles with them (mantra precompile sets "precompile"), so a message names the command run. */
extern const char *pgo_cmd_name;
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 1, 2)))
#endif
void pgo_errf(const char *fmt, ...);

#endif
