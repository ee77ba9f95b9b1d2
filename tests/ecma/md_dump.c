/* md_dump.c - an assembly as libmantra's PE and ECMA-335 reader (mantra/ecma.h) sees it, in the
 * text form that tests/interop/TraceEventDump's `metadata` command prints with
 * System.Reflection.Metadata, so that the two compare line for line (tests/ecma/md_compare.sh).
 *
 *   md_dump FILE
 *
 * Lines: the PE and CLI headers, the sections, the row count of every table, then per row the
 * columns both readers expose (tokens in hex, blobs in hex, strings as they are), the owner of
 * every field and method, and the full name of every TypeDef and TypeRef. Exit 0, or 1 with
 * `md_dump: FILE: offset N: MESSAGE` when the reader refuses the file. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mantra/ecma.h"

static const mantra_md *md;

static void hex(const char *key, uint32_t blob) {
    const uint8_t *d;
    uint32_t n;
    printf(" %s=", key);
    if (mantra_md_blob(md, blob, &d, &n) != MANTRA_OK) {
        printf("?");
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        printf("%02x", d[i]);
}

static const char *str(uint32_t i) { return mantra_md_string(md, i); }

static void full_name(uint32_t token) {
    char small[512];
    size_t n = mantra_md_type_name(md, token, small, sizeof small);
    if (n < sizeof small) {
        printf(" full=%s", small);
        return;
    }
    char *big = malloc(n + 1);
    if (big == NULL)
        exit(2);
    mantra_md_type_name(md, token, big, n + 1);
    printf(" full=%s", big);
    free(big);
}

static void guid(const char *key, uint32_t index) {
    mantra_guid g;
    mantra_md_guid(md, index, &g);
    printf(" %s=%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x", key, g.data1, g.data2, g.data3, g.data4[0],
           g.data4[1], g.data4[2], g.data4[3], g.data4[4], g.data4[5], g.data4[6], g.data4[7]);
}

/* Every row of table t through fn. */
#define ROWS(t) for (uint32_t r = 1, n_ = mantra_md_row_count(md, t); r <= n_ && mantra_md_row(md, t, r, v) == 0; r++)

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: md_dump FILE\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (f == NULL) {
        perror(argv[1]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = malloc(size > 0 ? (size_t)size : 1);
    if (data == NULL || fread(data, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "md_dump: %s: cannot read\n", argv[1]);
        return 1;
    }
    fclose(f);
    mantra_pe pe;
    mantra_ecma_error err = {0, ""};
    mantra_md *m = NULL;
    int rc = mantra_pe_parse(data, (size_t)size, &pe, &err);
    if (rc == MANTRA_OK)
        rc = mantra_md_open_pe(&pe, &m, &err);
    if (rc != MANTRA_OK) {
        fprintf(stderr, "md_dump: %s: offset %" PRIu64 ": %s\n", argv[1], err.offset, err.message);
        return 1;
    }
    md = m;
    printf("pe machine=0x%04x pe32plus=%d sections=%u cli=%u.%u flags=0x%x entry=0x%08x metadata=0x%x/%u "
           "native=0x%x/%u\n", pe.machine_raw, pe.pe32_plus, pe.nsections, pe.cli_major, pe.cli_minor, pe.cli_flags,
           pe.cli_entry_point, pe.cli_metadata.rva, pe.cli_metadata.size, pe.cli_managed_native_header.rva,
           pe.cli_managed_native_header.size);
    for (uint32_t i = 0; i < pe.nsections; i++) {
        const mantra_pe_section *s = &pe.sections[i];
        printf("section %s va=0x%x vsize=0x%x raw=0x%x/0x%x\n", s->name, s->virtual_address, s->virtual_size,
               s->raw_offset, s->raw_size);
    }
    printf("metadata version=%s\n", mantra_md_version(md));
    for (unsigned t = 0; t < MANTRA_MD_TABLES; t++)
        if (mantra_md_row_count(md, t))
            printf("rows 0x%02x=%u\n", t, mantra_md_row_count(md, t));
    uint32_t v[MANTRA_MD_MAX_COLUMNS];
    ROWS(MANTRA_MD_MODULE) {
        printf("Module %u: name=%s", r, str(v[1]));
        guid("mvid", v[2]);
        printf("\n");
    }
    ROWS(MANTRA_MD_TYPE_REF) {
        printf("TypeRef %u: scope=0x%08x ns=%s name=%s", r, v[0], str(v[2]), str(v[1]));
        full_name(MANTRA_MD_TOKEN(MANTRA_MD_TYPE_REF, r));
        printf("\n");
    }
    ROWS(MANTRA_MD_TYPE_DEF) {
        uint32_t e = mantra_md_enclosing_type(md, r);
        printf("TypeDef %u: flags=0x%x ns=%s name=%s extends=0x%08x enclosing=0x%08x", r, v[0], str(v[2]), str(v[1]),
               v[3], e ? MANTRA_MD_TOKEN(MANTRA_MD_TYPE_DEF, e) : 0);
        full_name(MANTRA_MD_TOKEN(MANTRA_MD_TYPE_DEF, r));
        printf("\n");
    }
    ROWS(MANTRA_MD_METHOD_DEF) {
        uint32_t owner = mantra_md_method_owner(md, r);
        printf("MethodDef %u: rva=0x%x impl=0x%x flags=0x%x name=%s", r, v[0], v[1], v[2], str(v[3]));
        hex("sig", v[4]);
        printf(" owner=0x%08x\n", owner ? MANTRA_MD_TOKEN(MANTRA_MD_TYPE_DEF, owner) : 0);
    }
    ROWS(MANTRA_MD_FIELD) {
        printf("Field %u: flags=0x%x name=%s", r, v[0], str(v[1]));
        hex("sig", v[2]);
        printf("\n");
    }
    ROWS(MANTRA_MD_PARAM) printf("Param %u: flags=0x%x seq=%u name=%s\n", r, v[0], v[1], str(v[2]));
    ROWS(MANTRA_MD_INTERFACE_IMPL) printf("InterfaceImpl %u: interface=0x%08x\n", r, v[1]);
    ROWS(MANTRA_MD_MEMBER_REF) {
        printf("MemberRef %u: parent=0x%08x name=%s", r, v[0], str(v[1]));
        hex("sig", v[2]);
        printf("\n");
    }
    ROWS(MANTRA_MD_CUSTOM_ATTRIBUTE) {
        printf("CustomAttribute %u: parent=0x%08x ctor=0x%08x", r, v[0], v[1]);
        hex("value", v[2]);
        printf("\n");
    }
    ROWS(MANTRA_MD_STAND_ALONE_SIG) {
        printf("StandAloneSig %u:", r);
        hex("sig", v[0]);
        printf("\n");
    }
    ROWS(MANTRA_MD_MODULE_REF) printf("ModuleRef %u: name=%s\n", r, str(v[0]));
    ROWS(MANTRA_MD_TYPE_SPEC) {
        printf("TypeSpec %u:", r);
        hex("sig", v[0]);
        printf("\n");
    }
    ROWS(MANTRA_MD_ASSEMBLY) {
        printf("Assembly %u: name=%s version=%u.%u.%u.%u flags=0x%x culture=%s hashalg=0x%x", r, str(v[7]), v[1], v[2],
               v[3], v[4], v[5], str(v[8]), v[0]);
        hex("key", v[6]);
        printf("\n");
    }
    ROWS(MANTRA_MD_ASSEMBLY_REF) {
        printf("AssemblyRef %u: name=%s version=%u.%u.%u.%u flags=0x%x culture=%s", r, str(v[6]), v[0], v[1], v[2], v[3],
               v[4], str(v[7]));
        hex("key", v[5]);
        hex("hash", v[8]);
        printf("\n");
    }
    ROWS(MANTRA_MD_EXPORTED_TYPE)
    printf("ExportedType %u: flags=0x%x typedef=0x%x ns=%s name=%s impl=0x%08x\n", r, v[0], v[1], str(v[3]), str(v[2]),
           v[4]);
    ROWS(MANTRA_MD_GENERIC_PARAM)
    printf("GenericParam %u: number=%u flags=0x%x owner=0x%08x name=%s\n", r, v[0], v[1], v[2], str(v[3]));
    ROWS(MANTRA_MD_METHOD_SPEC) {
        printf("MethodSpec %u: method=0x%08x", r, v[0]);
        hex("inst", v[1]);
        printf("\n");
    }
    ROWS(MANTRA_MD_GENERIC_PARAM_CONSTRAINT)
    printf("GenericParamConstraint %u: owner=0x%08x constraint=0x%08x\n", r,
           MANTRA_MD_TOKEN(MANTRA_MD_GENERIC_PARAM, v[0]), v[1]);
    mantra_md_close(m);
    mantra_pe_free(&pe);
    free(data);
    return 0;
}
