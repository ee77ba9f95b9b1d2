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
#include <stdlib.h>
#include <string.h>

#include "pgo_tool.h"

typedef struct cur {
    const uint8_t *p;
    size_t n, off;
    int bad;
} cur;

static uint64_t rd_le(cur *c, size_t bytes) {
    if (c->bad || c->n - c->off < bytes) {
        c->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; i++)
        v |= (uint64_t)c->p[c->off + i] << (8 * i);
    c->off += bytes;
    return v;
}
#define RD16(c) ((uint16_t)rd_le((c), 2))
#define RD32(c) ((uint32_t)rd_le((c), 4))
#define RD64(c) rd_le((c), 8)

static void skip(cur *c, uint64_t bytes) {
    if (c->bad || c->n - c->off < bytes)
        c->bad = 1;
    else
        c->off += (size_t)bytes;
}

static size_t put_utf8(char *o, uint32_t cp) {
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* A NUL-terminated UTF-16LE string as a new UTF-8 string (lone surrogates become U+FFFD). With
 * out NULL the string is only skipped. */
static void rd_str(cur *c, char **out) {
    if (out)
        *out = NULL;
    if (c->bad)
        return;
    size_t units = 0;
    while (1) {
        if (c->n - c->off < 2 * (units + 1)) {
            c->bad = 1;
            return;
        }
        const uint8_t *u = c->p + c->off + 2 * units;
        if (u[0] == 0 && u[1] == 0)
            break;
        units++;
    }
    if (out) {
        char *s = malloc(units * 3 + 1);
        if (s == NULL) {
            c->bad = 1;
            return;
        }
        size_t o = 0;
        const uint8_t *u = c->p + c->off;
        for (size_t i = 0; i < units; i++) {
            uint32_t w = (uint32_t)u[2 * i] | ((uint32_t)u[2 * i + 1] << 8);
            if (w >= 0xD800 && w < 0xDC00 && i + 1 < units) {
                uint32_t w2 = (uint32_t)u[2 * i + 2] | ((uint32_t)u[2 * i + 3] << 8);
                if (w2 >= 0xDC00 && w2 < 0xE000) {
                    o += put_utf8(s + o, 0x10000 + ((w - 0xD800) << 10) + (w2 - 0xDC00));
                    i++;
                    continue;
                }
            }
            if (w >= 0xD800 && w < 0xE000)
                w = 0xFFFD;
            o += put_utf8(s + o, w);
        }
        s[o] = '\0';
        *out = s;
    }
    c->off += 2 * (units + 1);
}

int pgo_parse_instr(const uint8_t *p, size_t n, int verbose, pgo_instr_event *e, const char **why) {
    cur c = {p, n, 0, 0};
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
    if ((uint64_t)(n - c.off) != e->data_size) {
        *why = n - c.off < e->data_size ? "DataSize is larger than the bytes after the fields"
                                         : "the payload has bytes after DataSize bytes of Data";
        pgo_instr_event_free(e);
        return -1;
    }
    e->data = p + c.off;
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
    cur c = {p, n, 0, 0};
    memset(out, 0, sizeof *out);
    out->module_id = RD64(&c);
    out->assembly_id = RD64(&c);
    skip(&c, 4 + 4);
    rd_str(&c, &out->il_path);
    rd_str(&c, NULL);
    skip(&c, 2);
    if (!c.bad && n - c.off >= 16) {
        out->pdb_guid.data1 = RD32(&c);
        out->pdb_guid.data2 = RD16(&c);
        out->pdb_guid.data3 = RD16(&c);
        memcpy(out->pdb_guid.data4, p + c.off, 8);
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
    cur c = {p, n, 0, 0};
    memset(out, 0, sizeof *out);
    out->method_id = RD64(&c);
    out->module_id = RD64(&c);
    skip(&c, 8 + 4);
    out->token = RD32(&c);
    skip(&c, 4);
    return method_tail(&c, out);
}

int pgo_parse_jitting_started(const uint8_t *p, size_t n, pgo_method_event *out) {
    cur c = {p, n, 0, 0};
    memset(out, 0, sizeof *out);
    out->method_id = RD64(&c);
    out->module_id = RD64(&c);
    out->token = RD32(&c);
    out->il_size = RD32(&c);
    return method_tail(&c, out);
}

void pgo_method_event_free(pgo_method_event *e) { free_names(&e->name_space, &e->name, &e->signature); }

int pgo_parse_assembly(const uint8_t *p, size_t n, pgo_assembly_event *out) {
    cur c = {p, n, 0, 0};
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
    cur c = {p, n, 0, 0};
    memset(out, 0, sizeof *out);
    out->method_id = RD64(&c);
    out->type_id = RD64(&c);
    out->token = RD32(&c);
    uint32_t count = RD32(&c);
    out->loader_module = RD64(&c);
    if (c.bad || (uint64_t)count * 8 != n - c.off)
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
    cur c = {p, n, 0, 0};
    uint32_t count = RD32(&c);
    (void)RD16(&c);
    for (uint32_t i = 0; i < count && !c.bad; i++) {
        uint64_t type_id = RD64(&c), module_id = RD64(&c);
        skip(&c, 4 + 4 + 1);
        char *name = NULL;
        rd_str(&c, &name);
        uint32_t params = RD32(&c);
        uint64_t *tp = NULL;
        if (!c.bad && params && (uint64_t)params * 8 <= c.n - c.off && (tp = malloc((size_t)params * 8)) != NULL)
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
