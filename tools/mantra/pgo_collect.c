/* `mantra pgo`: one trace -> reassembled, decoded, named methods added to the profile.
 *
 * Events read (provider Microsoft-Windows-DotNETRuntime unless said): JitInstrumentationDataVerbose
 * (298) and JitInstrumentationData (297) carry the data; ModuleLoad (152) and the rundown's
 * ModuleDCStart/End (153/154) name modules; MethodLoadVerbose (143), MethodJittingStarted (145) and
 * the rundown's MethodDCStart/EndVerbose (143/144) name methods (145 also gives the IL size);
 * MethodDetails (72), BulkType (15) and TypeLoadStop (74) name the type and method handles of the data
 * (../shared/reference/pgo-format.md §4). Payloads are decoded by the generated readers
 * (pgo_events.c); a naming event that does not fit its template is warned about, counted and
 * ignored.
 *
 * Chunks are reassembled per (ClrInstanceID, MethodID) of the trace by dotnet-pgo's rules
 * (pgo-format.md §5, mantra_pgo_reassembler): an out-of-order chunk or one after the final chunk
 * discards that method's data (a warning and a count); methods without their final chunk are
 * counted as incomplete. Everything is resolved at the end of the trace, so the order of the
 * naming events does not matter. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pgo_tool.h"

#define RUNTIME "Microsoft-Windows-DotNETRuntime"
#define RUNDOWN "Microsoft-Windows-DotNETRuntimeRundown"
#define WARNINGS_SHOWN 20

/* What the first chunk of a (ClrInstanceID, MethodID) said, and where its last chunk was. */
typedef struct chunk_owner {
    uint64_t method_id, module_id;
    uint32_t token;
    char *name_space, *name, *signature;
    uint64_t offset, index; /* stream offset and event index of its latest chunk */
} chunk_owner;

typedef struct module_info {
    char *il_path;
    mantra_guid guid;
    uint64_t assembly_id;
    char *name, *guid_text; /* the module's identity, made on first use (module_identity) */
} module_info;

typedef struct type_info {
    char *name;      /* BulkType's (NULL: none) */
    char *load_name; /* TypeLoadStop's (NULL: none) */
    int bulk;        /* a BulkType event gave module_id and params */
    uint64_t module_id;
    uint64_t *params; /* type arguments of a generic instantiation */
    uint32_t nparams;
} type_info;

typedef struct trace_state {
    const char *path;
    pgo_profile *profile;
    unsigned pointer_size;
    mantra_pgo_reassembler *ra;
    pgo_u64map owner_of; /* reassembly key -> index in owners */
    chunk_owner *owners;
    size_t nowners, capowners;
    pgo_u64map module_of; /* ModuleID -> index in modules */
    module_info *modules;
    size_t nmodules, capmodules;
    pgo_u64map method_of; /* MethodID -> index in methods */
    pgo_method_event *methods;
    size_t nmethods, capmethods;
    pgo_u64map details_of; /* MethodID -> index in details */
    pgo_details_event *details;
    size_t ndetails, capdetails;
    pgo_u64map type_of; /* TypeID -> index in types */
    type_info *types;
    size_t ntypes, captypes;
    pgo_u64map assembly_of; /* AssemblyID -> index in assemblies */
    char **assemblies;
    size_t nassemblies, capassemblies;
    pgo_strmap seen; /* identities of this trace's methods */
    pgo_strmap nested_of; /* "ModuleID|Inner" -> index in nested */
    char **nested;        /* "Outer+Inner" (NULL: two types of the module end in "+Inner") */
    size_t nnested, capnested;
} trace_state;

static uint64_t warnings;

/* `mantra pgo: PATH: offset N: event #I: MESSAGE` (the first WARNINGS_SHOWN; later ones are
 * only counted, in the summary). */
static void warn(const trace_state *t, uint64_t offset, uint64_t index, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void warn(const trace_state *t, uint64_t offset, uint64_t index, const char *fmt, ...) {
    if (++warnings > WARNINGS_SHOWN) {
        if (warnings == WARNINGS_SHOWN + 1)
            pgo_errf("more warnings are only counted (see the summary)\n");
        return;
    }
    pgo_errf("%s: offset %" PRIu64 ": event #%" PRIu64 ": ", t->path, offset, index);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* Grows *arr (element size sz) to hold one more; NULL when out of memory. */
static void *push(void **arr, size_t *n, size_t *cap, size_t sz) {
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        void *a = realloc(*arr, nc * sz);
        if (a == NULL)
            return NULL;
        *arr = a;
        *cap = nc;
    }
    void *e = (char *)*arr + (*n)++ * sz;
    memset(e, 0, sz);
    return e;
}
#define PUSH(t, name) push((void **)&(t)->name, &(t)->n##name, &(t)->cap##name, sizeof *(t)->name)

/* A new entry of a table indexed by id (map: id -> index): the entry, or NULL with *status 0 when
 * the id is known already (the first event wins) or -2 when out of memory. */
static void *add_entry(pgo_u64map *map, uint64_t id, void **arr, size_t *n, size_t *cap, size_t sz, int *status) {
    *status = 0;
    if (pgo_u64map_get(map, id))
        return NULL;
    void *e = push(arr, n, cap, sz);
    if (e == NULL || pgo_u64map_put(map, id, *n - 1) < 0) {
        *status = -2;
        return NULL;
    }
    return e;
}
#define ADD(t, map, name, id, status) \
    add_entry(&(t)->map, (id), (void **)&(t)->name, &(t)->n##name, &(t)->cap##name, sizeof *(t)->name, (status))

/* The reassembly key of (ClrInstanceID, MethodID): MethodIDs are MethodDesc addresses, below 2^56
 * on every 64-bit target the runtime supports, so the instance id takes the top byte. */
static uint64_t chunk_key(uint16_t clr, uint64_t method_id) { return method_id ^ ((uint64_t)clr << 56); }

static int learn_nested(trace_state *t, uint64_t module_id, const char *ns);

static int on_instr(trace_state *t, const mantra_trace_event *ev, uint64_t index, int verbose) {
    pgo_instr_event e;
    const char *why = NULL;
    pgo_counts *c = &t->profile->counts;
    c->events++;
    int read = pgo_read_instr(ev, t->pointer_size, verbose, &e, &why);
    if (read == -2)
        return -2;
    if (read < 0) {
        c->bad_payloads++;
        warn(t, ev->offset, index, "%s: bad payload (%zu bytes: %s): ignored",
             verbose ? "JitInstrumentationDataVerbose" : "JitInstrumentationData", ev->payload_size, why);
        return 0;
    }
    uint64_t key = chunk_key(e.clr_instance, e.method_id);
    uint64_t *have = pgo_u64map_get(&t->owner_of, key);
    chunk_owner *o;
    if (have) {
        o = &t->owners[*have];
        pgo_instr_event_free(&e);
    } else {
        o = PUSH(t, owners);
        if (o == NULL || pgo_u64map_put(&t->owner_of, key, t->nowners - 1) < 0) {
            pgo_instr_event_free(&e);
            return -2;
        }
        if (learn_nested(t, e.module_id, e.name_space) < 0)
            return -2;
        o->method_id = e.method_id;
        o->module_id = e.module_id;
        o->token = e.token;
        o->name_space = e.name_space;
        o->name = e.name;
        o->signature = e.signature;
    }
    o->offset = ev->offset;
    o->index = index;
    mantra_pgo_reassembly_stats before, after;
    mantra_pgo_reassembler_stats(t->ra, &before);
    int rc = mantra_pgo_reassembler_add(t->ra, key, e.method_flags, e.data, e.data_size);
    if (rc < 0)
        return -2;
    if (rc == 2) {
        mantra_pgo_reassembler_stats(t->ra, &after);
        warn(t, ev->offset, index, "method 0x%" PRIx64 ": chunk %" PRIu32 " %s: the method's data is discarded (dotnet-pgo's rule)",
             e.method_id, e.method_flags & ~MANTRA_PGO_CHUNK_FINAL,
             after.discard_after_final > before.discard_after_final ? "comes after the final chunk" : "is out of order");
    }
    return 0;
}

/* A naming event that pgo_read_* could not read (rc -1 or -2): out of memory (-2), or one that does
 * not fit its template: a warning and a count, then it is ignored (0). */
static int not_read(trace_state *t, const mantra_trace_event *ev, uint64_t index, int rc, const char *why) {
    if (rc == -2)
        return -2;
    t->profile->counts.unfit_naming++;
    warn(t, ev->offset, index, "%s/%" PRIu32 "/v%" PRIu32 ": the payload (%zu bytes) does not fit its template (%s): ignored",
         ev->metadata->provider, ev->metadata->event_id, ev->version, ev->payload_size, why);
    return 0;
}

static int on_module(trace_state *t, const mantra_trace_event *ev, uint64_t index, int rundown) {
    pgo_module_event m;
    const char *why = NULL;
    int rc = pgo_read_module(ev, t->pointer_size, rundown, &m, &why);
    if (rc < 0)
        return not_read(t, ev, index, rc, why);
    int status;
    module_info *mi = ADD(t, module_of, modules, m.module_id, &status);
    if (mi == NULL) {
        free(m.il_path);
        return status;
    }
    mi->il_path = m.il_path;
    mi->guid = m.pdb_guid;
    mi->assembly_id = m.assembly_id;
    return 0;
}

static int on_assembly(trace_state *t, const mantra_trace_event *ev, uint64_t index, int rundown) {
    pgo_assembly_event a;
    const char *why = NULL;
    int rc = pgo_read_assembly(ev, t->pointer_size, rundown, &a, &why);
    if (rc < 0)
        return not_read(t, ev, index, rc, why);
    int status;
    char **slot = ADD(t, assembly_of, assemblies, a.assembly_id, &status);
    if (slot == NULL) {
        free(a.name);
        return status;
    }
    *slot = a.name;
    return 0;
}

/* Learns the full name of a nested type from a method's namespace ("Outer+Inner" or
 * "Outer+Inner[args]"): BulkType names a nested type by its own name only. */
static int learn_nested(trace_state *t, uint64_t module_id, const char *ns) {
    const char *plus = ns ? strrchr(ns, '+') : NULL;
    const char *bracket = ns ? strchr(ns, '[') : NULL;
    if (plus == NULL || (bracket && bracket < plus))
        return 0;
    size_t full = bracket ? (size_t)(bracket - ns) : strlen(ns);
    char *key = pgo_strf("%" PRIx64 "|%.*s", module_id, (int)(full - (size_t)(plus + 1 - ns)), plus + 1);
    if (key == NULL)
        return -2;
    size_t at = pgo_strmap_get(&t->nested_of, key);
    int rc = 0;
    if (at != (size_t)-1) {
        if (t->nested[at] && (strlen(t->nested[at]) != full || strncmp(t->nested[at], ns, full) != 0)) {
            free(t->nested[at]);
            t->nested[at] = NULL;
        }
    } else {
        char **slot = PUSH(t, nested);
        if (slot == NULL || (*slot = pgo_strf("%.*s", (int)full, ns)) == NULL ||
            pgo_strmap_put(&t->nested_of, key, t->nnested - 1) < 0)
            rc = -2;
    }
    free(key);
    return rc;
}

static int on_method(trace_state *t, const mantra_trace_event *ev, uint64_t index, int rundown) {
    pgo_method_event m;
    const char *why = NULL;
    int rc = pgo_read_method(ev, t->pointer_size, rundown, &m, &why);
    if (rc < 0)
        return not_read(t, ev, index, rc, why);
    uint64_t *have = pgo_u64map_get(&t->method_of, m.method_id);
    if (have) {
        if (m.il_size)
            t->methods[*have].il_size = m.il_size;
        pgo_method_event_free(&m);
        return 0;
    }
    pgo_method_event *d = PUSH(t, methods);
    if (d == NULL || pgo_u64map_put(&t->method_of, m.method_id, t->nmethods - 1) < 0 ||
        learn_nested(t, m.module_id, m.name_space) < 0) {
        pgo_method_event_free(&m);
        return -2;
    }
    *d = m;
    return 0;
}

static int on_details(trace_state *t, const mantra_trace_event *ev, uint64_t index) {
    pgo_details_event d;
    const char *why = NULL;
    int rc = pgo_read_method_details(ev, t->pointer_size, &d, &why);
    if (rc < 0)
        return not_read(t, ev, index, rc, why);
    int status;
    pgo_details_event *e = ADD(t, details_of, details, d.method_id, &status);
    if (e == NULL) {
        free(d.type_parameters);
        return status;
    }
    *e = d;
    return 0;
}

/* The entry of a TypeID, made when new; NULL when out of memory. */
static type_info *type_entry(trace_state *t, uint64_t type_id) {
    uint64_t *i = pgo_u64map_get(&t->type_of, type_id);
    if (i)
        return &t->types[*i];
    int status;
    return ADD(t, type_of, types, type_id, &status);
}

/* BulkType: a type's module and parameters, and its name when the event has names (the first
 * BulkType of a TypeID wins). */
static int on_type(void *ctx, uint64_t type_id, uint64_t module_id, mantra_str16 name, mantra_array params) {
    trace_state *t = ctx;
    type_info *ti = type_entry(t, type_id);
    if (ti == NULL)
        return -1;
    if (ti->bulk)
        return 0;
    ti->bulk = 1;
    if (name.units && (ti->name = pgo_str16_dup(name)) == NULL)
        return -1;
    ti->module_id = module_id;
    if (params.count) {
        if ((ti->params = pgo_u64_array_dup(params)) == NULL)
            return -1;
        ti->nparams = (uint32_t)params.count;
    }
    return 0;
}

/* TypeLoadStop: the loader's name of a TypeID (the first wins). */
static int on_type_load(trace_state *t, const mantra_trace_event *ev, uint64_t index) {
    pgo_type_load_event e;
    const char *why = NULL;
    int rc = pgo_read_type_load(ev, t->pointer_size, &e, &why);
    if (rc < 0)
        return not_read(t, ev, index, rc, why);
    type_info *ti = type_entry(t, e.type_id);
    if (ti == NULL) {
        free(e.name);
        return -2;
    }
    if (ti->load_name == NULL && e.name[0] != '\0')
        ti->load_name = e.name;
    else
        free(e.name);
    return 0;
}

static int on_event(trace_state *t, const mantra_trace_event *ev, uint64_t index) {
    const mantra_trace_metadata *md = ev->metadata;
    int runtime = strcmp(md->provider, RUNTIME) == 0;
    if (!runtime && strcmp(md->provider, RUNDOWN) != 0)
        return 0;
    uint32_t id = md->event_id;
    if (runtime) {
        switch (id) {
        case 298: return on_instr(t, ev, index, 1);
        case 297: return on_instr(t, ev, index, 0);
        case 152: return on_module(t, ev, index, 0);
        case 154: return on_assembly(t, ev, index, 0);
        case 143: return on_method(t, ev, index, 0);
        case 145: return ev->version >= 1 ? on_method(t, ev, index, 0) : 0;
        case 72: return on_details(t, ev, index);
        case 74: return on_type_load(t, ev, index);
        case 15: {
            const char *why = NULL;
            int rc = pgo_read_bulk_type(ev, t->pointer_size, on_type, t, &why);
            return rc < 0 ? not_read(t, ev, index, rc, why) : 0;
        }
        default: return 0;
        }
    }
    switch (id) {
    case 153: case 154: return on_module(t, ev, index, 1);
    case 155: case 156: return on_assembly(t, ev, index, 1);
    case 143: case 144: return on_method(t, ev, index, 1);
    default: return 0;
    }
}

/* ---- resolving ------------------------------------------------------------------------------ */

/* The assembly's simple name from an IL path: the file name without its extension. */
static char *assembly_name(const char *path) {
    const char *b = strrchr(path, '/');
    const char *b2 = strrchr(path, '\\');
    if (b2 && (!b || b2 > b))
        b = b2;
    b = b ? b + 1 : path;
    const char *dot = strrchr(b, '.');
    size_t n = dot && dot != b ? (size_t)(dot - b) : strlen(b);
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, b, n);
        s[n] = '\0';
    }
    return s;
}

static const module_info *module_at(const trace_state *t, uint64_t module_id) {
    uint64_t *i = pgo_u64map_get(&t->module_of, module_id);
    return i ? &t->modules[*i] : NULL;
}

/* The assembly part of a type's name: the FullyQualifiedAssemblyName of the AssemblyLoad event of
 * its module's assembly, else the simple name from the module's path; NULL when unknown. */
static char *type_assembly(const trace_state *t, const type_info *ti) {
    const module_info *mi = module_at(t, ti->module_id);
    uint64_t *ai = mi ? pgo_u64map_get(&t->assembly_of, mi->assembly_id) : NULL;
    if (ai && t->assemblies[*ai] && t->assemblies[*ai][0])
        return pgo_strdup(t->assemblies[*ai]);
    if (mi == NULL || mi->il_path == NULL || mi->il_path[0] == '\0')
        return NULL;
    return assembly_name(mi->il_path);
}

#define TYPE_DEPTH_MAX 16

static char *type_name_at(const trace_state *t, uint64_t type_id, int depth, int *why);

/* Where the last balanced group closed by s[end - 1] (`close`) opens, or (size_t)-1. */
static size_t group_start(const char *s, size_t end, char open, char close) {
    int depth = 0;
    for (size_t i = end; i-- > 0;) {
        if (s[i] == close)
            depth++;
        else if (s[i] == open && --depth == 0)
            return i;
    }
    return (size_t)-1;
}

/* The length of the last type modifier of a name ("[]", "[,]", "[*]", "*", "&"), 0 when none. */
static size_t modifier_len(const char *s) {
    size_t len = strlen(s);
    if (len == 0)
        return 0;
    if (s[len - 1] == '*' || s[len - 1] == '&')
        return 1;
    if (s[len - 1] != ']')
        return 0;
    size_t i = len - 1;
    while (i > 0 && (s[i - 1] == ',' || s[i - 1] == '*'))
        i--;
    return i > 0 && s[i - 1] == '[' ? len - i + 1 : 0;
}

/* A BulkType name of a nested type is its own name only ("Inner"): the full name "Outer+Inner"
 * from the methods' namespaces of its module (learn_nested), or s unchanged. Takes s. */
static char *nested_full_name(const trace_state *t, const type_info *ti, char *s) {
    if (strchr(s, '+') || strchr(s, '.'))
        return s;
    char *key = pgo_strf("%" PRIx64 "|%s", ti->module_id, s);
    size_t at = key ? pgo_strmap_get(&t->nested_of, key) : (size_t)-1;
    free(key);
    if (at == (size_t)-1 || t->nested[at] == NULL)
        return s;
    free(s);
    return pgo_strdup(t->nested[at]);
}

/* A type's name without its assembly, as the runtime's dump writes it (TypeString): type arguments
 * assembly-qualified in double brackets ("List`1[[System.Int32, System.Private.CoreLib, ...]]"),
 * then the modifier of an array, pointer or byref ("[]", "*", "&") after its element's name. Made
 * from the type's name in the trace, its TypeParameters (BulkType: the type arguments of an
 * instantiation, the element type of a modified type) and their own names, recursively:
 *   TypeLoadStop (keyword TypeDiagnostic 0x8000000000) names every type the loader loads, enclosing
 *     types included, arguments unqualified: "Outer+Inner`1<System.Int32>[]";
 *   BulkType names types only with GCHeapAndTypeNames (0x1000000; eventtrace.cpp,
 *     BulkTypeEventLogger::LogSingleType), a nested type by its own name, arguments in brackets:
 *     "Inner`1[System.Int32]".
 * NULL when the trace does not name it (*why: a PGO_UNNAMED_* reason) or out of memory. */
static char *type_core_at(const trace_state *t, uint64_t type_id, int depth, int *why) {
    uint64_t *i = pgo_u64map_get(&t->type_of, type_id);
    if (i == NULL || depth > TYPE_DEPTH_MAX) {
        *why = i == NULL ? PGO_UNNAMED_TYPE_UNKNOWN : PGO_UNNAMED_TYPE_DEPTH;
        return NULL;
    }
    const type_info *ti = &t->types[*i];
    int loaded = ti->load_name != NULL;
    char *s = pgo_strdup(loaded ? ti->load_name : ti->name ? ti->name : "");
    if (s == NULL || s[0] == '\0') {
        *why = PGO_UNNAMED_TYPE_NAMELESS;
        free(s);
        return NULL;
    }
    size_t mod = ti->nparams == 1 ? modifier_len(s) : 0;
    if (mod) { /* array, pointer or byref: the element's name, then the modifier */
        int ignored;
        char *elem = type_core_at(t, ti->params[0], depth + 1, &ignored);
        if (elem == NULL)
            return s; /* the element is not named: the name as the trace gives it */
        char *n = pgo_strf("%s%s", elem, s + strlen(s) - mod);
        free(elem);
        free(s);
        return n;
    }
    size_t len = strlen(s), inst = (size_t)-1;
    if (ti->nparams && len > 0 && s[len - 1] == (loaded ? '>' : ']'))
        inst = group_start(s, len, loaded ? '<' : '[', loaded ? '>' : ']');
    if (inst != (size_t)-1)
        s[inst] = '\0';
    if (!loaded && (s = nested_full_name(t, ti, s)) == NULL)
        return NULL;
    for (uint32_t k = 0; inst != (size_t)-1 && s && k < ti->nparams; k++) {
        char *arg = type_name_at(t, ti->params[k], depth + 1, why);
        char *n = arg ? pgo_strf("%s%s[%s]%s", s, k ? "," : "[", arg, k + 1 == ti->nparams ? "]" : "") : NULL;
        free(arg);
        free(s);
        s = n;
    }
    return s;
}

/* A type handle's name as the runtime's dump writes it: type_core_at's name, then ", " and the
 * assembly of the type's module (type_assembly). NULL when not named. */
static char *type_name_at(const trace_state *t, uint64_t type_id, int depth, int *why) {
    char *s = type_core_at(t, type_id, depth, why);
    uint64_t *i = s ? pgo_u64map_get(&t->type_of, type_id) : NULL;
    char *a = i ? type_assembly(t, &t->types[*i]) : NULL;
    if (a) {
        char *n = pgo_strf("%s, %s", s, a);
        free(s);
        s = n;
    }
    free(a);
    return s;
}

static char *type_name(const trace_state *t, uint64_t type_id, int *why) { return type_name_at(t, type_id, 0, why); }

/* A method handle's name, "method|@|type" as the runtime's dump writes it. */
static char *method_handle_name(const trace_state *t, uint64_t method_id, int *why) {
    uint64_t *d = pgo_u64map_get(&t->details_of, method_id);
    uint64_t *m = pgo_u64map_get(&t->method_of, method_id);
    if (d == NULL || m == NULL || t->methods[*m].name == NULL) {
        *why = d == NULL ? PGO_UNNAMED_METHOD_NO_DETAILS : PGO_UNNAMED_METHOD_NAMELESS;
        return NULL;
    }
    char *tn = type_name(t, t->details[*d].type_id, why);
    if (tn == NULL)
        return NULL;
    char *s = pgo_strf("%s|@|%s", t->methods[*m].name, tn);
    free(tn);
    return s;
}

/* A handle value of the trace (a TypeID or MethodID) by name; the runtime's unknown 1..33 are not
 * counted (pgo_name_handles). */
static char *trace_handle_name(void *ctx, int element, int64_t *value, int *why) {
    const trace_state *t = ctx;
    int64_t h = *value;
    if (h >= MANTRA_PGO_UNKNOWN_HANDLE_MIN && h <= MANTRA_PGO_UNKNOWN_HANDLE_MAX) {
        *why = PGO_HANDLE_NOT_COUNTED;
        return NULL;
    }
    return element == MANTRA_PGO_TypeHandle ? type_name(t, (uint64_t)h, why) : method_handle_name(t, (uint64_t)h, why);
}

/* Names the handle values of m->data (m->handle_names). */
static int name_handles(trace_state *t, pgo_method *m) {
    if (m->data.value_count == 0)
        return 0;
    return pgo_name_handles(m, &t->profile->counts, trace_handle_name, t);
}

/* The assembly name and GUID text of a module (computed once); -2 when out of memory. */
static int module_identity(module_info *mi) {
    if (mi->name)
        return 0;
    const mantra_guid *g = &mi->guid;
    mi->name = assembly_name(mi->il_path);
    mi->guid_text = pgo_strf("%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x", g->data1, g->data2, g->data3,
                             g->data4[0], g->data4[1], g->data4[2], g->data4[3], g->data4[4], g->data4[5],
                             g->data4[6], g->data4[7]);
    return mi->name && mi->guid_text ? 0 : -2;
}

static int fill_identity(const trace_state *t, const chunk_owner *o, pgo_method *m) {
    uint64_t module_id = o->module_id;
    uint32_t token = o->token;
    const char *ns = o->name_space, *name = o->name, *sig = o->signature;
    uint64_t *mi = pgo_u64map_get(&t->method_of, o->method_id);
    if (mi) {
        const pgo_method_event *me = &t->methods[*mi];
        m->il_size = me->il_size;
        if (name == NULL) { /* a 297 event: names from the method events */
            module_id = me->module_id;
            token = me->token;
            ns = me->name_space;
            name = me->name;
            sig = me->signature;
        }
    }
    module_info *mod = (module_info *)module_at(t, module_id);
    m->token = token;
    if (mod && mod->il_path && mod->il_path[0]) {
        if (module_identity(mod) < 0)
            return -2;
        m->module = pgo_strdup(mod->name);
        m->module_path = pgo_strdup(mod->il_path);
        m->pdb_guid = pgo_strdup(mod->guid_text);
    } else {
        m->module = pgo_strf("module@0x%" PRIx64, module_id);
        m->module_path = pgo_strdup("");
        m->pdb_guid = pgo_strdup("");
    }
    m->name_space = pgo_strdup(ns ? ns : "");
    m->name = pgo_strdup(name ? name : "");
    m->signature = pgo_strdup(sig ? sig : "");
    if (!m->module || !m->module_path || !m->pdb_guid || !m->name_space || !m->name || !m->signature)
        return -2;
    return 0;
}

/* The declaring type and method type arguments of a method by name (MethodDetails' TypeID and
 * TypeParameters, named as handles are), for the .mibc's references to generic instantiations;
 * left NULL / 0 when the trace cannot name them. -2 when out of memory. */
static int fill_instantiation(const trace_state *t, const chunk_owner *o, pgo_method *m) {
    uint64_t *di = pgo_u64map_get(&t->details_of, o->method_id);
    if (di == NULL)
        return 0;
    const pgo_details_event *d = &t->details[*di];
    int why = PGO_UNNAMED_OUT_OF_MEMORY;
    m->owner_type = type_name(t, d->type_id, &why);
    if (m->owner_type == NULL && why == PGO_UNNAMED_OUT_OF_MEMORY)
        return -2;
    if (d->type_parameter_count == 0)
        return 0;
    char **args = calloc(d->type_parameter_count, sizeof *args);
    if (args == NULL)
        return -2;
    for (uint32_t i = 0; i < d->type_parameter_count; i++) {
        why = PGO_UNNAMED_OUT_OF_MEMORY;
        args[i] = type_name(t, d->type_parameters[i], &why);
        if (args[i] == NULL) {
            for (uint32_t k = 0; k < i; k++)
                free(args[k]);
            free(args);
            return why == PGO_UNNAMED_OUT_OF_MEMORY ? -2 : 0;
        }
    }
    m->method_args = args;
    m->nmethod_args = d->type_parameter_count;
    return 0;
}

/* The identity of a method across traces (pgo_profile.c): module, PDB GUID, token, names and
 * signature, and for a generic method instantiation the names of its type arguments (MethodDetails'
 * TypeParameters). Two MethodIDs of one trace are never merged (the runtime keeps one entry per
 * MethodDesc): when the names cannot tell them apart (type arguments without names), the identity
 * gets the trace and the MethodID, which no other trace matches. NULL when out of memory. */
static char *method_identity(trace_state *t, const chunk_owner *o, const pgo_method *m) {
    char *id = pgo_strf("%s|%s|%08x|%s|%s|%s", m->module, m->pdb_guid, m->token, m->name_space, m->name, m->signature);
    uint64_t *di = pgo_u64map_get(&t->details_of, o->method_id);
    const pgo_details_event *d = di ? &t->details[*di] : NULL;
    int local = 0;
    for (uint32_t i = 0; id && d && i < d->type_parameter_count && !local; i++) {
        int why = PGO_UNNAMED_OUT_OF_MEMORY;
        char *tn = type_name(t, d->type_parameters[i], &why);
        if (tn == NULL && why == PGO_UNNAMED_OUT_OF_MEMORY) {
            free(id);
            return NULL;
        }
        char *n = tn ? pgo_strf("%s%s%s", id, i ? "," : "|<", tn) : NULL;
        local = tn == NULL;
        free(tn);
        if (!local) {
            free(id);
            id = n;
        }
    }
    if (id && !local && pgo_strmap_get(&t->seen, id) != (size_t)-1)
        local = 1;
    if (id && local) {
        char *n = pgo_strf("%s|@%s#0x%" PRIx64, id, t->path, o->method_id);
        free(id);
        id = n;
    }
    if (id && pgo_strmap_put(&t->seen, id, 0) < 0) {
        free(id);
        id = NULL;
    }
    return id;
}

static int resolve(trace_state *t) {
    pgo_counts *c = &t->profile->counts;
    size_t n = mantra_pgo_reassembler_finish(t->ra);
    mantra_pgo_reassembly_stats st;
    mantra_pgo_reassembler_stats(t->ra, &st);
    c->chunks_dropped += st.chunks_dropped;
    c->discard_out_of_order += st.discard_out_of_order;
    c->discard_after_final += st.discard_after_final;
    c->incomplete += st.incomplete;
    if (st.incomplete)
        pgo_errf("%s: %" PRIu64 " method%s without a final chunk: not converted\n", t->path,
                st.incomplete, st.incomplete == 1 ? "" : "s");
    for (size_t i = 0; i < n; i++) {
        uint64_t key;
        const uint8_t *data;
        size_t size, where = 0;
        if (mantra_pgo_reassembler_get(t->ra, i, &key, &data, &size) < 0)
            continue;
        const chunk_owner *o = &t->owners[*pgo_u64map_get(&t->owner_of, key)];
        pgo_method m;
        memset(&m, 0, sizeof m);
        int rc = mantra_pgo_decode(data, size, t->pointer_size, &m.data, &where);
        if (rc == MANTRA_ENOMEM)
            return -2;
        if (rc < 0) {
            c->undecodable++;
            warn(t, o->offset, o->index, "method 0x%" PRIx64 ": its data (%zu bytes) does not decode at byte %zu (%s): ignored",
                 o->method_id, size, where, mantra_status_name(rc));
            continue;
        }
        c->methods_read++;
        m.runs = 1;
        char *id = NULL;
        if (fill_identity(t, o, &m) < 0 || name_handles(t, &m) < 0 || fill_instantiation(t, o, &m) < 0 ||
            (id = method_identity(t, o, &m)) == NULL) {
            pgo_method_free(&m);
            return -2;
        }
        rc = pgo_profile_add(t->profile, &m, id);
        free(id);
        if (rc < 0)
            return -2;
    }
    return 0;
}

static void trace_state_free(trace_state *t) {
    mantra_pgo_reassembler_free(t->ra);
    for (size_t i = 0; i < t->nowners; i++) {
        free(t->owners[i].name_space);
        free(t->owners[i].name);
        free(t->owners[i].signature);
    }
    for (size_t i = 0; i < t->nmodules; i++) {
        free(t->modules[i].il_path);
        free(t->modules[i].name);
        free(t->modules[i].guid_text);
    }
    for (size_t i = 0; i < t->nmethods; i++)
        pgo_method_event_free(&t->methods[i]);
    for (size_t i = 0; i < t->ntypes; i++) {
        free(t->types[i].name);
        free(t->types[i].load_name);
        free(t->types[i].params);
    }
    for (size_t i = 0; i < t->ndetails; i++)
        free(t->details[i].type_parameters);
    for (size_t i = 0; i < t->nassemblies; i++)
        free(t->assemblies[i]);
    free(t->assemblies);
    pgo_u64map_free(&t->assembly_of);
    pgo_strmap_free(&t->seen);
    for (size_t i = 0; i < t->nnested; i++)
        free(t->nested[i]);
    free(t->nested);
    pgo_strmap_free(&t->nested_of);
    free(t->owners);
    free(t->modules);
    free(t->methods);
    free(t->details);
    free(t->types);
    pgo_u64map_free(&t->owner_of);
    pgo_u64map_free(&t->module_of);
    pgo_u64map_free(&t->method_of);
    pgo_u64map_free(&t->details_of);
    pgo_u64map_free(&t->type_of);
}

int pgo_collect_trace(pgo_profile *p, const char *path) {
    trace_state t;
    memset(&t, 0, sizeof t);
    t.path = path;
    t.profile = p;
    mantra_reader *r = mantra_reader_new(NULL);
    t.ra = mantra_pgo_reassembler_new();
    if (r == NULL || t.ra == NULL) {
        mantra_reader_free(r);
        trace_state_free(&t);
        return -2;
    }
    int rc = strcmp(path, "-") == 0 ? mantra_reader_open_fd(r, 0) : mantra_reader_open_file(r, path);
    if (rc < 0) {
        pgo_errf("%s: cannot read the trace: %s\n", path, mantra_reader_last_error(r));
        p->counts.unreadable_traces++;
        mantra_reader_free(r);
        trace_state_free(&t);
        return -1;
    }
    p->counts.traces++;
    t.pointer_size = mantra_reader_info(r)->pointer_size == 4 ? 4 : 8;
    const mantra_trace_event *ev;
    uint64_t index = 0;
    int status = 0;
    while ((rc = mantra_reader_next(r, &ev)) > 0) {
        if (on_event(&t, ev, index++) == -2) {
            status = -2;
            break;
        }
    }
    if (status == 0 && rc < 0) {
        if (rc == MANTRA_ETRUNCATED) {
            pgo_errf("%s: the trace is truncated (%s): converting what was complete\n", path,
                    mantra_reader_last_error(r));
            p->counts.truncated_traces++;
            status = 1;
        } else {
            pgo_errf("%s: unreadable from here on: %s (converting what came before)\n", path,
                    mantra_reader_last_error(r));
            p->counts.unreadable_traces++;
            status = -1;
        }
    }
    if (status != -2 && resolve(&t) < 0)
        status = -2;
    mantra_reader_free(r);
    trace_state_free(&t);
    return status;
}
