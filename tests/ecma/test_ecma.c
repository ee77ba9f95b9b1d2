/* The PE/COFF and ECMA-335 reader and writer (mantra/ecma.h): a small assembly made with the
 * writer is read back with exact values (rows, heaps, tokens, names, method bodies, PE and CLI
 * headers), written twice to the same bytes, and damaged in one place at a time: each damage is
 * refused with its exact offset and message. System.Reflection.Metadata reads the writer's output
 * the same way (ecma-md-compare runs md_dump and the .NET reader on the file test_ecma writes). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "common/sha1-internal.h"
#include "mantra/decode.h"
#include "mantra/ecma.h"

static const mantra_guid MVID = {0x11223344, 0x5566, 0x7788, {1, 2, 3, 4, 5, 6, 7, 8}};
static const uint8_t TOKEN_KEY[8] = {0xb0, 0x3f, 0x5f, 0x7f, 0x11, 0xd5, 0x0a, 0x3a};
static const uint8_t SIG_VOID[] = {0x00, 0x00, 0x01};          /* default, 0 params, void */
static const uint8_t SIG_CTOR[] = {0x20, 0x00, 0x01};          /* hasthis, 0 params, void */
static const uint8_t SIG_LIST_INT[] = {0x15, 0x12, 0x09, 0x01, 0x08}; /* GENERICINST class TypeRef 2 <int32> */
static const uint8_t INST_INT[] = {0x0a, 0x01, 0x08};          /* GENERICINST method <int32> */
/* ldstr 0x70000001; pop; ret */
static uint8_t body_small[] = {0x72, 0x01, 0x00, 0x00, 0x70, 0x26, 0x2a};

#define ROW(...) ((const uint32_t[MANTRA_MD_MAX_COLUMNS]){__VA_ARGS__})
#define TOK(t, r) MANTRA_MD_TOKEN(MANTRA_MD_##t, r)

/* tiny.dll: Module, Assembly tiny 1.2.3.4, AssemblyRef System.Runtime 10.0.0.0, TypeRefs
 * System.Object, System.Collections.Generic.List`1 and Ns.Outer+Inner (nested TypeRef),
 * TypeDefs <Module>, Ns.C : Object and Ns.C+N, four methods (a global one with a tiny body, one
 * with a fat body of 70 bytes), a MemberRef, a TypeSpec, a MethodSpec and a user string. */
static uint8_t *build(size_t *size, uint32_t *rva_small, uint32_t *rva_fat) {
    mantra_md_builder *b = mantra_md_builder_new();
    ck_assert_ptr_nonnull(b);
    uint32_t us = mantra_md_add_user_string(b, "InstrumentationDataStart");
    ck_assert_uint_eq(us, 1);
    ck_assert_uint_eq(mantra_md_add_row(b, MANTRA_MD_MODULE, ROW(0, mantra_md_add_string(b, "tiny.dll"),
                                                                 mantra_md_add_guid(b, &MVID), 0, 0)), 1);
    ck_assert_uint_eq(mantra_md_add_row(b, MANTRA_MD_ASSEMBLY, ROW(0x8004, 1, 2, 3, 4, 0, 0,
                                                                   mantra_md_add_string(b, "tiny"), 0)), 1);
    ck_assert_uint_eq(mantra_md_add_row(b, MANTRA_MD_ASSEMBLY_REF,
                                        ROW(10, 0, 0, 0, 0, mantra_md_add_blob(b, TOKEN_KEY, 8),
                                            mantra_md_add_string(b, "System.Runtime"), 0, 0)), 1);
    uint32_t sys = mantra_md_add_string(b, "System");
    mantra_md_add_row(b, MANTRA_MD_TYPE_REF, ROW(TOK(ASSEMBLY_REF, 1), mantra_md_add_string(b, "Object"), sys));
    mantra_md_add_row(b, MANTRA_MD_TYPE_REF, ROW(TOK(ASSEMBLY_REF, 1), mantra_md_add_string(b, "List`1"),
                                                 mantra_md_add_string(b, "System.Collections.Generic")));
    uint32_t ns = mantra_md_add_string(b, "Ns");
    mantra_md_add_row(b, MANTRA_MD_TYPE_REF, ROW(TOK(ASSEMBLY_REF, 1), mantra_md_add_string(b, "Outer"), ns));
    mantra_md_add_row(b, MANTRA_MD_TYPE_REF, ROW(TOK(TYPE_REF, 3), mantra_md_add_string(b, "Inner"), 0));
    mantra_md_add_row(b, MANTRA_MD_TYPE_DEF, ROW(0, mantra_md_add_string(b, "<Module>"), 0, 0, 1, 1));
    mantra_md_add_row(b, MANTRA_MD_TYPE_DEF, ROW(0x100001, mantra_md_add_string(b, "C"), ns, TOK(TYPE_REF, 1), 1, 2));
    mantra_md_add_row(b, MANTRA_MD_TYPE_DEF, ROW(0x100002, mantra_md_add_string(b, "N"), 0, TOK(TYPE_REF, 1), 1, 4));
    uint8_t fat[70];
    memset(fat, 0x00, sizeof fat); /* nop ... */
    fat[sizeof fat - 1] = 0x2a;    /* ... ret */
    *rva_small = mantra_md_add_method_body(b, body_small, sizeof body_small, 8);
    *rva_fat = mantra_md_add_method_body(b, fat, sizeof fat, 8);
    uint32_t sig = mantra_md_add_blob(b, SIG_VOID, sizeof SIG_VOID);
    mantra_md_add_row(b, MANTRA_MD_METHOD_DEF, ROW(*rva_small, 0, 0x16, mantra_md_add_string(b, "AssemblyDictionary"),
                                                   sig, 1));
    mantra_md_add_row(b, MANTRA_MD_METHOD_DEF, ROW(*rva_fat, 0, 0x16, mantra_md_add_string(b, "Run"), sig, 1));
    mantra_md_add_row(b, MANTRA_MD_METHOD_DEF, ROW(0, 0, 0x16, mantra_md_add_string(b, "Other"), sig, 1));
    mantra_md_add_row(b, MANTRA_MD_METHOD_DEF, ROW(0, 0, 0x16, mantra_md_add_string(b, "InNested"), sig, 1));
    mantra_md_add_row(b, MANTRA_MD_MEMBER_REF, ROW(TOK(TYPE_REF, 1), mantra_md_add_string(b, ".ctor"),
                                                   mantra_md_add_blob(b, SIG_CTOR, sizeof SIG_CTOR)));
    mantra_md_add_row(b, MANTRA_MD_TYPE_SPEC, ROW(mantra_md_add_blob(b, SIG_LIST_INT, sizeof SIG_LIST_INT)));
    mantra_md_add_row(b, MANTRA_MD_METHOD_SPEC, ROW(TOK(METHOD_DEF, 2), mantra_md_add_blob(b, INST_INT, sizeof INST_INT)));
    mantra_md_add_row(b, MANTRA_MD_NESTED_CLASS, ROW(3, 2));
    ck_assert_uint_eq(mantra_md_builder_rows(b, MANTRA_MD_TYPE_REF), 4);
    ck_assert_int_eq(mantra_md_builder_status(b), MANTRA_OK);
    uint8_t *out = NULL;
    ck_assert_int_eq(mantra_md_write_pe(b, &out, size), MANTRA_OK);
    mantra_md_builder_free(b);
    return out;
}

static void write_file(const char *name, const uint8_t *d, size_t n) {
    const char *dir = getenv("MANTRA_BINARY_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/ecma/%s", dir ? dir : ".", name);
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "%s", path);
    ck_assert_uint_eq(fwrite(d, 1, n, f), n);
    fclose(f);
}

START_TEST(written_and_read_back) {
    size_t size, size2;
    uint32_t rva_small, rva_fat, r2, f2;
    uint8_t *d = build(&size, &rva_small, &rva_fat);
    uint8_t *d2 = build(&size2, &r2, &f2);
    ck_assert_uint_eq(size, size2); /* deterministic */
    ck_assert_mem_eq(d, d2, size);
    free(d2);
    write_file("tiny.dll", d, size); /* ecma-md-compare reads it with System.Reflection.Metadata */
    ck_assert_uint_eq(size % 0x200, 0);
    ck_assert_uint_eq(rva_small, 0x2000 + 72);
    ck_assert_uint_eq(rva_fat, 0x2000 + 72 + 8); /* after the 8 bytes of the tiny body: 4-byte aligned */
    mantra_pe pe;
    mantra_ecma_error err = {0, ""};
    ck_assert_int_eq(mantra_pe_parse(d, size, &pe, &err), MANTRA_OK);
    ck_assert_uint_eq(pe.machine_raw, 0x14C);
    ck_assert_uint_eq(pe.machine, 0x14C);
    ck_assert_uint_eq(pe.os, 0);
    ck_assert_int_eq(pe.pe32_plus, 0);
    ck_assert_uint_eq(pe.nsections, 1);
    ck_assert_str_eq(pe.sections[0].name, ".text");
    ck_assert_uint_eq(pe.sections[0].virtual_address, 0x2000);
    ck_assert_uint_eq(pe.sections[0].raw_offset, 0x200);
    ck_assert_int_eq(pe.has_cli, 1);
    ck_assert_uint_eq(pe.cli_major, 2);
    ck_assert_uint_eq(pe.cli_minor, 5);
    ck_assert_uint_eq(pe.cli_flags, 1);
    size_t at;
    ck_assert_int_eq(mantra_pe_rva_to_offset(&pe, rva_small, 8, &at), MANTRA_OK);
    ck_assert_uint_eq(at, 0x200 + 72);
    ck_assert_uint_eq(d[at], sizeof body_small << 2 | 2); /* tiny header */
    ck_assert_mem_eq(d + at + 1, body_small, sizeof body_small);
    ck_assert_int_eq(mantra_pe_rva_to_offset(&pe, rva_fat, 12, &at), MANTRA_OK);
    ck_assert_uint_eq(mantra_load_u16(d + at), 0x3003);
    ck_assert_uint_eq(mantra_load_u16(d + at + 2), 8);
    ck_assert_uint_eq(mantra_load_u32(d + at + 4), 70);
    ck_assert_int_eq(mantra_pe_rva_to_offset(&pe, 0x1000, 4, &at), MANTRA_EFORMAT);

    mantra_md *md;
    ck_assert_int_eq(mantra_md_open_pe(&pe, &md, &err), MANTRA_OK);
    ck_assert_str_eq(mantra_md_version(md), "v4.0.30319");
    ck_assert_uint_eq(mantra_md_row_count(md, MANTRA_MD_TYPE_REF), 4);
    ck_assert_uint_eq(mantra_md_row_count(md, MANTRA_MD_TYPE_DEF), 3);
    ck_assert_uint_eq(mantra_md_row_count(md, MANTRA_MD_METHOD_DEF), 4);
    ck_assert_uint_eq(mantra_md_row_count(md, MANTRA_MD_FIELD), 0);
    uint32_t v[MANTRA_MD_MAX_COLUMNS];
    ck_assert_int_eq(mantra_md_row(md, MANTRA_MD_MODULE, 1, v), MANTRA_OK);
    ck_assert_str_eq(mantra_md_string(md, v[1]), "tiny.dll");
    mantra_guid g;
    ck_assert_int_eq(mantra_md_guid(md, v[2], &g), MANTRA_OK);
    ck_assert_mem_eq(&g, &MVID, sizeof g);
    ck_assert_int_eq(mantra_md_row(md, MANTRA_MD_ASSEMBLY, 1, v), MANTRA_OK);
    ck_assert_uint_eq(v[0], 0x8004);
    ck_assert_uint_eq(v[1] * 1000 + v[2] * 100 + v[3] * 10 + v[4], 1234);
    ck_assert_str_eq(mantra_md_string(md, v[7]), "tiny");
    ck_assert_int_eq(mantra_md_row(md, MANTRA_MD_ASSEMBLY_REF, 1, v), MANTRA_OK);
    const uint8_t *blob;
    uint32_t n;
    ck_assert_int_eq(mantra_md_blob(md, v[5], &blob, &n), MANTRA_OK);
    ck_assert_uint_eq(n, 8);
    ck_assert_mem_eq(blob, TOKEN_KEY, 8);
    ck_assert_int_eq(mantra_md_row(md, MANTRA_MD_TYPE_REF, 4, v), MANTRA_OK);
    ck_assert_uint_eq(v[0], TOK(TYPE_REF, 3)); /* a coded index comes back as a token */
    char name[64];
    ck_assert_uint_eq(mantra_md_type_name(md, TOK(TYPE_REF, 4), name, sizeof name), strlen("Ns.Outer+Inner"));
    ck_assert_str_eq(name, "Ns.Outer+Inner");
    ck_assert_uint_eq(mantra_md_type_name(md, TOK(TYPE_REF, 2), name, 10), strlen("System.Collections.Generic.List`1"));
    ck_assert_str_eq(name, "System.Co"); /* cut, NUL-terminated */
    ck_assert_uint_eq(mantra_md_type_name(md, TOK(TYPE_DEF, 3), name, sizeof name), 6);
    ck_assert_str_eq(name, "Ns.C+N");
    ck_assert_uint_eq(mantra_md_type_name(md, TOK(METHOD_DEF, 1), name, sizeof name), 0);
    ck_assert_uint_eq(mantra_md_type_name(md, TOK(TYPE_DEF, 4), name, sizeof name), 0);
    ck_assert_uint_eq(mantra_md_method_owner(md, 1), 1);
    ck_assert_uint_eq(mantra_md_method_owner(md, 2), 2);
    ck_assert_uint_eq(mantra_md_method_owner(md, 3), 2);
    ck_assert_uint_eq(mantra_md_method_owner(md, 4), 3);
    ck_assert_uint_eq(mantra_md_method_owner(md, 5), 0);
    ck_assert_uint_eq(mantra_md_enclosing_type(md, 3), 2);
    ck_assert_uint_eq(mantra_md_enclosing_type(md, 2), 0);
    ck_assert_int_eq(mantra_md_row(md, MANTRA_MD_METHOD_DEF, 2, v), MANTRA_OK);
    ck_assert_uint_eq(v[0], rva_fat);
    ck_assert_str_eq(mantra_md_string(md, v[3]), "Run");
    ck_assert_int_eq(mantra_md_blob(md, v[4], &blob, &n), MANTRA_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert_mem_eq(blob, SIG_VOID, 3);
    ck_assert_int_eq(mantra_md_row(md, MANTRA_MD_METHOD_SPEC, 1, v), MANTRA_OK);
    ck_assert_uint_eq(v[0], TOK(METHOD_DEF, 2));
    ck_assert_int_eq(mantra_md_row(md, MANTRA_MD_METHOD_DEF, 5, v), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_md_row(md, MANTRA_MD_TABLES, 1, v), MANTRA_EINVAL);
    const uint8_t *u16;
    ck_assert_int_eq(mantra_md_user_string(md, 1, &u16, &n), MANTRA_OK);
    ck_assert_uint_eq(n, strlen("InstrumentationDataStart"));
    ck_assert_uint_eq(u16[0], 'I');
    ck_assert_uint_eq(u16[1], 0);
    ck_assert_uint_eq(u16[2 * n], 0); /* the flag byte: no special character */
    ck_assert_ptr_null(mantra_md_string(md, 0xFFFFFF));
    mantra_md_close(md);
    mantra_pe_free(&pe);
    free(d);
}
END_TEST

/* Where the writer put things (its fixed layout): the metadata and the table stream. */
typedef struct layout {
    size_t md;     /* file offset of the metadata root */
    size_t tables; /* file offset of the #~ stream */
    size_t rows;   /* file offset of the first row (Module) */
} layout;

static layout layout_of(const uint8_t *d) {
    layout l;
    uint32_t md_rva = mantra_load_u32(d + 0x200 + 8);
    l.md = md_rva - 0x2000 + 0x200;
    /* root: 16 bytes, the 12-byte version, flags and stream count; then #~'s header first */
    l.tables = l.md + mantra_load_u32(d + l.md + 32);
    uint64_t valid = mantra_load_u64(d + l.tables + 8);
    unsigned ntables = 0;
    for (int t = 0; t < 64; t++)
        ntables += (unsigned)(valid >> t & 1);
    l.rows = l.tables + 24 + 4 * ntables;
    return l;
}

/* d damaged by fn must be refused with exactly this offset and message. */
static void refused(const uint8_t *d, size_t size, size_t cut, uint64_t offset, const char *message) {
    mantra_pe pe;
    mantra_md *md = NULL;
    mantra_ecma_error err = {0, ""};
    int rc = mantra_pe_parse(d, cut ? cut : size, &pe, &err);
    if (rc == MANTRA_OK) {
        rc = mantra_md_open_pe(&pe, &md, &err);
        mantra_pe_free(&pe);
    }
    ck_assert_int_eq(rc, MANTRA_EFORMAT);
    ck_assert_ptr_null(md);
    ck_assert_str_eq(err.message, message);
    ck_assert_uint_eq(err.offset, offset);
}

START_TEST(damage_is_refused_with_its_location) {
    size_t size;
    uint32_t r1, r2;
    uint8_t *good = build(&size, &r1, &r2);
    uint8_t *d = malloc(size);
    layout l = layout_of(good);
    char msg[200];

#define FRESH() memcpy(d, good, size)
    FRESH();
    d[0] = 'Z';
    refused(d, size, 0, 0, "not a PE file: no MS-DOS header (\"MZ\" and 64 bytes)");
    FRESH();
    refused(d, size, 0x90, 0x3C, "the PE header offset 0x80 is past the end of the file (144 bytes)");
    FRESH();
    d[0x81] = 'X';
    refused(d, size, 0, 0x80, "no PE signature (\"PE\\0\\0\") where the MS-DOS header points");
    FRESH();
    d[0x98] = 0x0C; /* optional header magic 0x10C */
    refused(d, size, 0, 0x98, "optional header magic 0x10c is neither PE32 (0x10B) nor PE32+ (0x20B)");
    FRESH();
    refused(d, size, 0x190, 0x178, "the table of 1 sections ends past the end of the file");
    FRESH();
    refused(d, size, 0x300, 0x188, "section 0 (.text): its 1024 bytes at 0x200 end past the end of the file (768 bytes)");
    FRESH();
    d[0x200] = 8; /* the CLI header's cb */
    refused(d, size, 0, 0x200, "the CLI header says it is 8 bytes, less than 72");
    FRESH();
    d[l.md] = 'X';
    snprintf(msg, sizeof msg, "no metadata root signature (0x424A5342, \"BSJB\")");
    refused(d, size, 0, l.md, msg);
    FRESH();
    /* the second stream header (at 44: offset, size, name) names "#Xtrings", which no reader knows */
    d[l.md + 44 + 8 + 1] = 'X';
    /* the Module row's Name (2 bytes at row offset 2) now points past an empty #Strings heap */
    snprintf(msg, sizeof msg, "Module row 1, Name: string index %u is past the #Strings heap (0 bytes)",
             mantra_load_u16(good + l.rows + 2));
    refused(d, size, 0, l.rows + 2, msg);
    FRESH();
    /* TypeDef row 2's Extends (a TypeDefOrRef coded index at row offset 8): tag 3 names no table.
     * Rows before: Module 1 x 10 bytes, TypeRef 4 x 6; TypeDef rows are 14 bytes. */
    size_t extends = l.rows + 10 + 4 * 6 + 14 + 8;
    d[extends] = 0x07; /* row 1, tag 3 */
    d[extends + 1] = 0;
    refused(d, size, 0, extends, "TypeDef row 2, Extends: coded index 0x7 has tag 3, which names no table");
    FRESH();
    d[extends] = (uint8_t)(9 << 2 | 1); /* TypeRef row 9 of 4 */
    refused(d, size, 0, extends, "TypeDef row 2, Extends: row 9 of TypeRef, which has 4 rows");
    FRESH();
    d[l.tables + 24 + 4 * 2] = 0xFF; /* TypeDef's row count: 255 rows */
    snprintf(msg, sizeof msg, "TypeDef: 255 rows of 14 bytes end past the table stream");
    refused(d, size, 0, l.rows + 10 + 4 * 6, msg);
    FRESH();
    d[l.tables + 8 + 6] = 0x80; /* Valid bit 0x37: a Portable PDB table */
    refused(d, size, 0, l.tables + 8, "the table stream has table 0x37, which is not a table of an assembly's "
                                      "metadata (ECMA-335 defines 0x00-0x2c)");
#undef FRESH
    free(d);
    free(good);
}
END_TEST

/* Regression (fuzz_ecma): index 0 of #Blob and #Strings is the empty entry even when the heap's
 * first byte is not 0; a row holding index 0 used to pass the open and then fail mantra_md_blob. */
START_TEST(index_zero_is_empty) {
    size_t size;
    uint32_t r1, r2;
    uint8_t *d = build(&size, &r1, &r2);
    layout l = layout_of(d);
    /* stream headers: #~ at 32, #Strings at 44, #US at 64, #GUID at 76, #Blob at 92 */
    d[l.md + mantra_load_u32(d + l.md + 92)] = 0x7F;
    d[l.md + mantra_load_u32(d + l.md + 44)] = 'x';
    mantra_pe pe;
    mantra_md *md;
    mantra_ecma_error err = {0, ""};
    ck_assert_int_eq(mantra_pe_parse(d, size, &pe, &err), MANTRA_OK);
    ck_assert_int_eq(mantra_md_open_pe(&pe, &md, &err), MANTRA_OK);
    const uint8_t *blob = d;
    uint32_t n = 1;
    ck_assert_int_eq(mantra_md_blob(md, 0, &blob, &n), MANTRA_OK);
    ck_assert_uint_eq(n, 0);
    ck_assert_str_eq(mantra_md_string(md, 0), "");
    mantra_md_close(md);
    mantra_pe_free(&pe);
    free(d);
}
END_TEST

START_TEST(writer_refusals) {
    mantra_md_builder *b = mantra_md_builder_new();
    /* a coded index naming a table it cannot name: TypeDef.Extends = a MethodDef token */
    mantra_md_add_row(b, MANTRA_MD_TYPE_DEF, ROW(0, 0, 0, TOK(METHOD_DEF, 1), 1, 1));
    uint8_t *out = NULL;
    size_t size = 0;
    ck_assert_int_eq(mantra_md_write_pe(b, &out, &size), MANTRA_EINVAL);
    ck_assert_ptr_null(out);
    ck_assert_uint_eq(mantra_md_add_row(b, MANTRA_MD_TABLES, ROW(0)), 0);
    ck_assert_int_eq(mantra_md_builder_status(b), MANTRA_EINVAL);
    ck_assert_uint_eq(mantra_md_add_string(b, "x"), 0); /* sticky */
    mantra_md_builder_free(b);
    b = mantra_md_builder_new();
    ck_assert_uint_eq(mantra_md_add_user_string(b, "\xff"), 0); /* not UTF-8 */
    ck_assert_int_eq(mantra_md_builder_status(b), MANTRA_EINVAL);
    mantra_md_builder_free(b);
    /* deduplication and the user-string flag byte */
    b = mantra_md_builder_new();
    ck_assert_uint_eq(mantra_md_add_string(b, "abc"), 1);
    ck_assert_uint_eq(mantra_md_add_string(b, "abc"), 1);
    ck_assert_uint_eq(mantra_md_add_string(b, ""), 0);
    ck_assert_uint_eq(mantra_md_add_string(b, "d"), 5);
    ck_assert_uint_eq(mantra_md_add_blob(b, "xy", 2), 1);
    ck_assert_uint_eq(mantra_md_add_blob(b, "xy", 2), 1);
    ck_assert_uint_eq(mantra_md_add_blob(b, "", 0), 0);
    ck_assert_uint_eq(mantra_md_add_user_string(b, "a-b"), 1);
    ck_assert_uint_eq(mantra_md_add_user_string(b, "\xc3\xa9"), 1 + 1 + 7); /* after "a-b": 1 + 6 + 1 bytes */
    mantra_md_builder_free(b);
}
END_TEST

START_TEST(compressed_integers) {
    uint32_t v;
    ck_assert_uint_eq(mantra_md_uncompress((const uint8_t[]){0x03}, 1, &v), 1);
    ck_assert_uint_eq(v, 3);
    ck_assert_uint_eq(mantra_md_uncompress((const uint8_t[]){0x80, 0x80}, 2, &v), 2); /* §23.2 example */
    ck_assert_uint_eq(v, 0x80);
    ck_assert_uint_eq(mantra_md_uncompress((const uint8_t[]){0xC0, 0x00, 0x40, 0x00}, 4, &v), 4);
    ck_assert_uint_eq(v, 0x4000);
    ck_assert_uint_eq(mantra_md_uncompress((const uint8_t[]){0xDF, 0xFF, 0xFF, 0xFF}, 4, &v), 4);
    ck_assert_uint_eq(v, 0x1FFFFFFF);
    ck_assert_uint_eq(mantra_md_uncompress((const uint8_t[]){0xC0, 0x00, 0x40}, 3, &v), 0);
    ck_assert_uint_eq(mantra_md_uncompress((const uint8_t[]){0xE0, 0, 0, 0}, 4, &v), 0);
    ck_assert_uint_eq(mantra_md_uncompress(NULL, 0, &v), 0);
}
END_TEST

START_TEST(schema_names) {
    ck_assert_str_eq(mantra_md_table_name(MANTRA_MD_TYPE_DEF), "TypeDef");
    ck_assert_uint_eq(mantra_md_column_count(MANTRA_MD_ASSEMBLY), 9);
    ck_assert_str_eq(mantra_md_column_name(MANTRA_MD_METHOD_DEF, 4), "Signature");
    ck_assert_int_eq(mantra_md_column_kind(MANTRA_MD_TYPE_REF, 0), MANTRA_MD_COL_CODED);
    ck_assert_uint_eq(mantra_md_column_target(MANTRA_MD_TYPE_REF, 0), MANTRA_MD_RESOLUTION_SCOPE);
    ck_assert_uint_eq(mantra_md_column_target(MANTRA_MD_TYPE_DEF, 5), MANTRA_MD_METHOD_DEF);
    ck_assert_ptr_null(mantra_md_table_name(MANTRA_MD_TABLES));
    ck_assert_ptr_null(mantra_md_column_name(MANTRA_MD_MODULE, 5));
}
END_TEST

/* SHA-1 (common/sha1.c: FIPS 180-4 examples, one and two blocks) and the public key token of the
 * ECMA standard key. */
START_TEST(sha1_and_token) {
    uint8_t d[20];
    cm_sha1 s;
    cm_sha1_init(&s);
    cm_sha1_update(&s, "abc", 3);
    cm_sha1_final(&s, d);
    const uint8_t abc[20] = {0xa9, 0x99, 0x3e, 0x36, 0x47, 0x06, 0x81, 0x6a, 0xba, 0x3e,
                             0x25, 0x71, 0x78, 0x50, 0xc2, 0x6c, 0x9c, 0xd0, 0xd8, 0x9d};
    ck_assert_mem_eq(d, abc, 20);
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"; /* 56 bytes: two blocks */
    cm_sha1_init(&s);
    cm_sha1_update(&s, two, strlen(two));
    cm_sha1_final(&s, d);
    const uint8_t two_d[20] = {0x84, 0x98, 0x3e, 0x44, 0x1c, 0x3b, 0xd2, 0x6e, 0xba, 0xae,
                               0x4a, 0xa1, 0xf9, 0x51, 0x29, 0xe5, 0xe5, 0x46, 0x70, 0xf1};
    ck_assert_mem_eq(d, two_d, 20);
    /* the ECMA standard public key (ECMA-335 II.6.2.1.3) and its token b77a5c561934e089 */
    const uint8_t ecma[16] = {0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0};
    uint8_t token[8];
    mantra_ecma_public_key_token(ecma, sizeof ecma, token);
    const uint8_t want[8] = {0xb7, 0x7a, 0x5c, 0x56, 0x19, 0x34, 0xe0, 0x89};
    ck_assert_mem_eq(token, want, 8);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("ecma");
    TCase *tc = tcase_create("ecma");
    tcase_add_test(tc, written_and_read_back);
    tcase_add_test(tc, damage_is_refused_with_its_location);
    tcase_add_test(tc, index_zero_is_empty);
    tcase_add_test(tc, writer_refusals);
    tcase_add_test(tc, compressed_integers);
    tcase_add_test(tc, schema_names);
    tcase_add_test(tc, sha1_and_token);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
