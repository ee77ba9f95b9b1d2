/* The payloads of the Microsoft-Windows-DotNETRuntime events `mantra pgo` reads, parsed by their
 * layout: the .NET runtime writes these events with empty metadata (no field list), so the
 * converter does not depend on a template being applied by the reader.
 *
 * Layouts: the templates of ClrEtwAll.man (dotnet/runtime src/coreclr/vm/ClrEtwAll.man; the copy
 * read is ../shared/fixtures/manifests/ClrEtwAll-coreclr-68813511f6a4.man and
 * ../shared/reference/clr-events.md), serialized by genEventPipe.py as packed little-endian fields
 * in template order, UTF-16LE strings with their NUL, counted arrays and length-field binaries as
 * raw bytes (../shared/reference/pgo-format.md §4.1):
 *   298 JitInstrumentationDataVerbose: u16 ClrInstanceID | u32 MethodFlags | u32 DataSize |
 *       u64 MethodID | u64 ModuleID | u32 MethodToken | UTF-16Z MethodNamespace | UTF-16Z MethodName |
 *       UTF-16Z MethodSignature | DataSize bytes
 *   297 JitInstrumentationData: u16 ClrInstanceID | u32 MethodFlags | u32 DataSize | u64 MethodID |
 *       DataSize bytes
 *   152 ModuleLoad V2: u64 ModuleID | u64 AssemblyID | u32 ModuleFlags | u32 Reserved1 |
 *       UTF-16Z ModuleILPath | UTF-16Z ModuleNativePath | u16 ClrInstanceID | GUID ManagedPdbSignature | ...
 *   143 MethodLoadVerbose V0-V2: u64 MethodID | u64 ModuleID | u64 MethodStartAddress | u32 MethodSize |
 *       u32 MethodToken | u32 MethodFlags | UTF-16Z MethodNamespace | UTF-16Z MethodName |
 *       UTF-16Z MethodSignature | ...
 *   145 MethodJittingStarted V1: u64 MethodID | u64 ModuleID | u32 MethodToken | u32 MethodILSize |
 *       UTF-16Z MethodNamespace | UTF-16Z MethodName | UTF-16Z MethodSignature | u16 ClrInstanceID
 *   154 AssemblyLoad V1: u64 AssemblyID | u64 AppDomainID | u64 BindingID | u32 AssemblyFlags |
 *       UTF-16Z FullyQualifiedAssemblyName | u16 ClrInstanceID
 *    72 MethodDetails: u64 MethodID | u64 TypeID | u32 MethodToken | u32 TypeParameterCount |
 *       u64 LoaderModuleID | u64 TypeParameters[TypeParameterCount]
 *    15 BulkType: u32 Count | u16 ClrInstanceID | Count x { u64 TypeID | u64 ModuleID | u32 TypeNameID |
 *       u32 Flags | u8 CorElementType | UTF-16Z Name | u32 TypeParameterCount |
 *       u64 TypeParameters[TypeParameterCount] }
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mantra/decode.h"

#include "pgo_tool.h"

/* The public bounds-checked cursor (mantra/decode.h) with a sticky failure flag, so that a parser
 * reads a whole layout and checks once: after a failure every read gives 0 and nothing advances. */
typedef struct cur {
    mantra_cursor m;
    int bad;
} cur;

static cur cur_of(const uint8_t *p, size_t n) {
    cur c = {{p, n, 0, 8}, 0};
    return c;
}

static uint64_t rd_le(cur *c, size_t bytes) {
    uint64_t v = 0;
    uint32_t v32 = 0;
    uint16_t v16 = 0;
    int rc = -1;
    if (!c->bad)
        rc = bytes == 8 ? mantra_cursor_u64(&c->m, &v) : bytes == 4 ? mantra_cursor_u32(&c->m, &v32)
                                                                    : mantra_cursor_u16(&c->m, &v16);
    if (rc < 0) {
        c->bad = 1;
        return 0;
    }
    return bytes == 8 ? v : bytes == 4 ? v32 : v16;
}
#define RD16(c) ((uint16_t)rd_le((c), 2))
#define RD32(c) ((uint32_t)rd_le((c), 4))
#define RD64(c) rd_le((c), 8)

static void skip(cur *c, uint64_t bytes) {
    const uint8_t *unused;
    if (!c->bad && (bytes > SIZE_MAX || mantra_cursor_bytes(&c->m, (size_t)bytes, &unused) < 0))
        c->bad = 1;
}

/* A NUL-terminated UTF-16LE string as a new UTF-8 string (mantra_str16_to_utf8: lone surrogates
 * become U+FFFD). With out NULL the string is only skipped. */
static void rd_str(cur *c, char **out) {
    if (out)
        *out = NULL;
    mantra_str16 s;
    if (c->bad || mantra_cursor_str16(&c->m, &s) < 0) {
        c->bad = 1;
        return;
    }
    if (out == NULL)
        return;
    size_t need = mantra_str16_to_utf8(s, NULL, 0);
    char *u = malloc(need + 1);
    if (u == NULL) {
        c->bad = 1;
        return;
    }
    mantra_str16_to_utf8(s, u, need + 1);
    *out = u;
}

int pgo_parse_instr(const uint8_t *p, size_t n, int verbose, pgo_instr_event *e, const char **why) {
    cur c = cur_of(p, n);
    memset(e, 0, sizeof *e);
    e->clr_instance = RD16(&c);
    e->method_flags = RD32(&c);
    e->data_size = RD32(&c);
    e->method_id = RD64(&c);
    if (verbose) {
        e->module_id = RD64(&c);
        e->token = RD32(&c);
        rd_str(&c, &e->name_space);
        rd_str(&c, &e->name);
        rd_str(&c, &e->signature);
    }
    if (c.bad) {
        *why = "the payload ends inside the fields before Data";
        pgo_instr_event_free(e);
        return -1;
    }
    if ((uint64_t)(n - c.m.pos) != e->data_size) {
        *why = n - c.m.pos < e->data_size ? "DataSize is larger than the bytes after the fields"
                                         : "the payload has bytes after DataSize bytes of Data";
        pgo_instr_event_free(e);
        return -1;
    }
    e->data = p + c.m.pos;
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

int pgo_parse_module(const uint8_t *p, size_t n, pgo_module_event *out) {
    cur c = cur_of(p, n);
    memset(out, 0, sizeof *out);
    out->module_id = RD64(&c);
    out->assembly_id = RD64(&c);
    skip(&c, 4 + 4);
    rd_str(&c, &out->il_path);
    rd_str(&c, NULL);
    skip(&c, 2);
    if (!c.bad && n - c.m.pos >= 16) {
        out->pdb_guid.data1 = RD32(&c);
        out->pdb_guid.data2 = RD16(&c);
        out->pdb_guid.data3 = RD16(&c);
        memcpy(out->pdb_guid.data4, p + c.m.pos, 8);
    }
    if (c.bad && out->il_path == NULL)
        return -1;
    return 0;
}

static int method_tail(cur *c, pgo_method_event *out) {
    rd_str(c, &out->name_space);
    rd_str(c, &out->name);
    rd_str(c, &out->signature);
    if (c->bad) {
        pgo_method_event_free(out);
        return -1;
    }
    return 0;
}

int pgo_parse_method_verbose(const uint8_t *p, size_t n, pgo_method_event *out) {
    cur c = cur_of(p, n);
    memset(out, 0, sizeof *out);
    out->method_id = RD64(&c);
    out->module_id = RD64(&c);
    skip(&c, 8 + 4);
    out->token = RD32(&c);
    skip(&c, 4);
    return method_tail(&c, out);
}

int pgo_parse_jitting_started(const uint8_t *p, size_t n, pgo_method_event *out) {
    cur c = cur_of(p, n);
    memset(out, 0, sizeof *out);
    out->method_id = RD64(&c);
    out->module_id = RD64(&c);
    out->token = RD32(&c);
    out->il_size = RD32(&c);
    return method_tail(&c, out);
}

void pgo_method_event_free(pgo_method_event *e) { free_names(&e->name_space, &e->name, &e->signature); }

int pgo_parse_assembly(const uint8_t *p, size_t n, pgo_assembly_event *out) {
    cur c = cur_of(p, n);
    out->assembly_id = RD64(&c);
    skip(&c, 8 + 8 + 4);
    rd_str(&c, &out->name);
    if (c.bad) {
        free(out->name);
        out->name = NULL;
        return -1;
    }
    return 0;
}

int pgo_parse_method_details(const uint8_t *p, size_t n, pgo_details_event *out) {
    cur c = cur_of(p, n);
    memset(out, 0, sizeof *out);
    out->method_id = RD64(&c);
    out->type_id = RD64(&c);
    out->token = RD32(&c);
    uint32_t count = RD32(&c);
    out->loader_module = RD64(&c);
    if (c.bad || (uint64_t)count * 8 != n - c.m.pos)
        return -1;
    if (count) {
        out->type_parameters = malloc((size_t)count * sizeof *out->type_parameters);
        if (out->type_parameters == NULL)
            return -1;
        for (uint32_t i = 0; i < count; i++)
            out->type_parameters[i] = RD64(&c);
    }
    out->type_parameter_count = count;
    return 0;
}

int pgo_parse_bulk_type(const uint8_t *p, size_t n, pgo_type_fn fn, void *ctx) {
    cur c = cur_of(p, n);
    uint32_t count = RD32(&c);
    (void)RD16(&c);
    for (uint32_t i = 0; i < count && !c.bad; i++) {
        uint64_t type_id = RD64(&c), module_id = RD64(&c);
        skip(&c, 4 + 4 + 1);
        char *name = NULL;
        rd_str(&c, &name);
        uint32_t params = RD32(&c);
        uint64_t *tp = NULL;
        if (!c.bad && params && (uint64_t)params * 8 <= c.m.size - c.m.pos && (tp = malloc((size_t)params * 8)) != NULL)
            for (uint32_t k = 0; k < params; k++)
                tp[k] = RD64(&c);
        else
            skip(&c, (uint64_t)params * 8);
        int rc = c.bad ? 0 : fn(ctx, type_id, module_id, name, tp, tp ? params : 0);
        free(tp);
        free(name);
        if (rc < 0)
            return -2;
    }
    return c.bad ? -1 : 0;
}
