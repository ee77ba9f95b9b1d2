/* mantra pgo --format mibc (tools/mantra/pgo_mibc.c): a crafted trace (pgo_trace.c) whose module is
 * an assembly made with mantra's metadata writer (app.dll: Ns.C with Run(int32) and Lib.Helper
 * with one Go() and two Ov() methods, Ns.Gen`1 with a generic method), converted to a .mibc and read
 * back with mantra's reader: exact rows and exact IL of the group method and AssemblyDictionary; the
 * ZIP container with its one entry; a generic method counted and left out; handles as ldtoken or
 * as unknown; a module whose PDB signature differs from the trace's refused ("Dll mismatch") with
 * nothing written; usage errors. crossgen2 and System.Reflection.Metadata read real .mibc files in
 * tests/interop/pgo-mibc.sh. */
#define _POSIX_C_SOURCE 200809L

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check_main.h"
#include "gen/run_tool.h"
#include "tools/pgo_cli.h"
#include "mantra/decode.h"
#include "mantra/ecma.h"
#include "tools/pgo_trace.h"

static char *path_of(const char *name) { return pgo_cli_path("build/tests/tools/pgo-mibc", name); }

static void run(run_tool_result *r, const char *const *args) { pgo_cli_run(r, args); }

#define ROW(...) ((const uint32_t[MANTRA_MD_MAX_COLUMNS]){__VA_ARGS__})
#define TOK(t, r) MANTRA_MD_TOKEN(MANTRA_MD_##t, r)

static const uint8_t SIG_RUN[] = {0x00, 0x01, 0x01, 0x08};             /* static void (int32) */
static const uint8_t SIG_GO[] = {0x00, 0x01, 0x01, 0x12, 0x05};        /* static void (class TypeRef 1) */
static const uint8_t SIG_OV[] = {0x00, 0x00, 0x01};                    /* static void () */
static const uint8_t SIG_GM[] = {0x10, 0x01, 0x00, 0x01};              /* static void <T> () */

/* app.dll, version 1.2.0.0: TypeRef System.Object (System.Runtime); TypeDefs <Module>, Ns.C
 * (Run = MethodDef 1), Lib.Helper (Go = 2, Ov = 3 and 4), Ns.Gen`1 (with its generic parameter;
 * Make = 5, generic). Written to path. */
static void write_app(const char *path) {
    mantra_md_builder *b = mantra_md_builder_new();
    const mantra_guid mvid = {1, 2, 3, {4, 5, 6, 7, 8, 9, 10, 11}};
    mantra_md_add_row(b, MANTRA_MD_MODULE, ROW(0, mantra_md_add_string(b, "app.dll"), mantra_md_add_guid(b, &mvid), 0, 0));
    mantra_md_add_row(b, MANTRA_MD_ASSEMBLY, ROW(0x8004, 1, 2, 0, 0, 0, 0, mantra_md_add_string(b, "app"), 0));
    mantra_md_add_row(b, MANTRA_MD_ASSEMBLY_REF, ROW(10, 0, 0, 0, 0, 0, mantra_md_add_string(b, "System.Runtime"), 0, 0));
    mantra_md_add_row(b, MANTRA_MD_TYPE_REF, ROW(TOK(ASSEMBLY_REF, 1), mantra_md_add_string(b, "Object"),
                                                 mantra_md_add_string(b, "System")));
    uint32_t ns = mantra_md_add_string(b, "Ns");
    mantra_md_add_row(b, MANTRA_MD_TYPE_DEF, ROW(0, mantra_md_add_string(b, "<Module>"), 0, 0, 1, 1));
    mantra_md_add_row(b, MANTRA_MD_TYPE_DEF, ROW(0x100001, mantra_md_add_string(b, "C"), ns, TOK(TYPE_REF, 1), 1, 1));
    mantra_md_add_row(b, MANTRA_MD_TYPE_DEF, ROW(0x100001, mantra_md_add_string(b, "Helper"),
                                                 mantra_md_add_string(b, "Lib"), TOK(TYPE_REF, 1), 1, 2));
    mantra_md_add_row(b, MANTRA_MD_TYPE_DEF, ROW(0x100001, mantra_md_add_string(b, "Gen`1"), ns, TOK(TYPE_REF, 1), 1, 5));
    uint32_t ov = mantra_md_add_string(b, "Ov");
    mantra_md_add_row(b, MANTRA_MD_METHOD_DEF, ROW(0, 0, 0x16, mantra_md_add_string(b, "Run"),
                                                   mantra_md_add_blob(b, SIG_RUN, sizeof SIG_RUN), 1));
    mantra_md_add_row(b, MANTRA_MD_METHOD_DEF, ROW(0, 0, 0x16, mantra_md_add_string(b, "Go"),
                                                   mantra_md_add_blob(b, SIG_GO, sizeof SIG_GO), 1));
    mantra_md_add_row(b, MANTRA_MD_METHOD_DEF, ROW(0, 0, 0x16, ov, mantra_md_add_blob(b, SIG_OV, sizeof SIG_OV), 1));
    mantra_md_add_row(b, MANTRA_MD_METHOD_DEF, ROW(0, 0, 0x16, ov, mantra_md_add_blob(b, SIG_RUN, sizeof SIG_RUN), 1));
    mantra_md_add_row(b, MANTRA_MD_METHOD_DEF, ROW(0, 0, 0x16, mantra_md_add_string(b, "Make"),
                                                   mantra_md_add_blob(b, SIG_GM, sizeof SIG_GM), 1));
    mantra_md_add_row(b, MANTRA_MD_GENERIC_PARAM, ROW(0, 0, TOK(TYPE_DEF, 4), mantra_md_add_string(b, "T")));
    uint8_t *d;
    size_t n;
    ck_assert_int_eq(mantra_md_write_pe(b, &d, &n), MANTRA_OK);
    mantra_md_builder_free(b);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(d, 1, n, f), n);
    fclose(f);
    free(d);
}

/* A trace of module 0x1000 at app_path (PDB signature pdb): Run (block 7, a class histogram of
 * System.Object, Lib.Helper, an unknown handle 5 and a type the assembly lacks; a method histogram
 * of Go and Ov), and Make (generic). */
static void write_trace(const char *trace, const char *app_path, const mantra_guid *pdb) {
    pgo_trace *t = pgo_trace_open(trace);
    pgo_trace_module(t, 0x1000, 0x2000, app_path, pdb);
    pgo_trace_assembly(t, 0x2000, "app, Version=1.2.0.0, Culture=neutral, PublicKeyToken=null");
    mantra_pgo_schema s[] = {{MANTRA_PGO_BasicBlockIntCount, 0, 1, 0},
                             {MANTRA_PGO_HandleHistogramTypes, 3, 4, 0},
                             {MANTRA_PGO_HandleHistogramMethods, 9, 2, 0}};
    /* type and method handles have no naming events here: they stay unnamed (UNKNOWN) */
    int64_t v[] = {7, 0x7000, 0x7001, 5, 0x7002, 0xA000, 0xA001};
    pgo_trace_method(t, 0x50, 0x1000, 0x06000001, "Ns.C", "Run", "void  (int32)", s, 3, v, 7);
    mantra_pgo_schema g[] = {{MANTRA_PGO_BasicBlockIntCount, 0, 1, 0}};
    int64_t gv[] = {3};
    pgo_trace_method(t, 0x51, 0x1000, 0x06000005, "Ns.Gen`1[System.Int32]", "Make", "void  ()", g, 1, gv, 1);
    pgo_trace_close(t);
}

static uint8_t *slurp(const char *path, size_t *n) {
    uint8_t *d = (uint8_t *)run_tool_read_file(path, n);
    ck_assert_msg(d != NULL, "%s", path);
    return d;
}

/* A plain .mibc read and opened with mantra's reader (which must accept it): its bytes. */
static uint8_t *open_mibc(const char *path, size_t *n, mantra_pe *pe, mantra_md **md) {
    mantra_ecma_error err = {0, ""};
    uint8_t *d = slurp(path, n);
    ck_assert_int_eq(mantra_pe_parse(d, *n, pe, &err), MANTRA_OK);
    ck_assert_int_eq(mantra_md_open_pe(pe, md, &err), MANTRA_OK);
    return d;
}

static void close_mibc(uint8_t *d, mantra_pe *pe, mantra_md *md) {
    mantra_md_close(md);
    mantra_pe_free(pe);
    free(d);
}

START_TEST(mibc_rows_and_il) {
    char *app = path_of("app.dll"), *trace = path_of("app.nettrace"), *plain = path_of("plain.mibc"),
         *zip = path_of("zip.mibc");
    const mantra_guid none = {0, 0, 0, {0}};
    write_app(app);
    write_trace(trace, app, &none);
    run_tool_result r;
    run(&r, (const char *[]){trace, "-o", plain, "--format", "mibc", "--uncompressed", NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "mantra pgo: .mibc: 1 of 2 methods written (1 generic instantiations whose "
                                "type arguments have no names, 0 without their assembly file, 0 unresolved); 6 handles: 0 as tokens, 6 unknown\n"),
                  "%s", r.err);
    run_tool_free(&r);
    size_t n;
    mantra_pe pe;
    mantra_md *md;
    uint8_t *d = open_mibc(plain, &n, &pe, &md);
    uint32_t v[MANTRA_MD_MAX_COLUMNS];
    ck_assert_int_eq(mantra_md_row(md, MANTRA_MD_MODULE, 1, v), MANTRA_OK);
    ck_assert_str_eq(mantra_md_string(md, v[1]), "plain.mibc");
    /* AssemblyRef 1: app 1.2.0.0, no key; TypeRef 1: Ns.C in it; MemberRef 1: Run with the same sig */
    ck_assert_uint_eq(mantra_md_row_count(md, MANTRA_MD_ASSEMBLY_REF), 1);
    mantra_md_row(md, MANTRA_MD_ASSEMBLY_REF, 1, v);
    ck_assert_str_eq(mantra_md_string(md, v[6]), "app");
    ck_assert_uint_eq(v[0] * 10 + v[1], 12);
    ck_assert_uint_eq(mantra_md_row_count(md, MANTRA_MD_TYPE_REF), 1);
    char name[64];
    mantra_md_type_name(md, TOK(TYPE_REF, 1), name, sizeof name);
    ck_assert_str_eq(name, "Ns.C");
    ck_assert_uint_eq(mantra_md_row_count(md, MANTRA_MD_MEMBER_REF), 1);
    mantra_md_row(md, MANTRA_MD_MEMBER_REF, 1, v);
    ck_assert_uint_eq(v[0], TOK(TYPE_REF, 1));
    ck_assert_str_eq(mantra_md_string(md, v[1]), "Run");
    const uint8_t *sig;
    uint32_t sn;
    mantra_md_blob(md, v[2], &sig, &sn);
    ck_assert_uint_eq(sn, sizeof SIG_RUN);
    ck_assert_mem_eq(sig, SIG_RUN, sn);
    /* MethodDef 1: Assemblies_app;_1, MethodDef 2: AssemblyDictionary, both global */
    ck_assert_uint_eq(mantra_md_row_count(md, MANTRA_MD_METHOD_DEF), 2);
    mantra_md_row(md, MANTRA_MD_METHOD_DEF, 1, v);
    ck_assert_str_eq(mantra_md_string(md, v[3]), "Assemblies_app;_1");
    ck_assert_uint_eq(mantra_md_method_owner(md, 1), 1);
    size_t at;
    ck_assert_int_eq(mantra_pe_rva_to_offset(&pe, v[0], 1, &at), MANTRA_OK);
    const uint8_t expect[] = {
        0xD0, 0x01, 0x00, 0x00, 0x0A,       /* ldtoken MemberRef 1 */
        0x72, 0x01, 0x00, 0x00, 0x70,       /* ldstr "InstrumentationDataStart" (#US 1) */
        0x1F, 0x0F, 0x16, 0x1F, 0x41, 0x17, 0x16, /* mask 15, ILOffset 0, Kind 65, Count 1, Other 0 */
        0x1D,                               /* 7 */
        0x1F, 0x0F, 0x19, 0x20, 0xC3, 0x00, 0x00, 0x00, 0x1A, 0x16, /* 15, 3, 195, 4, 0 */
        0x17, 0x17, 0x1B, 0x17,             /* 4 handles, all unknown: 1, 1, 5, 1 */
        0x1F, 0x0F, 0x1F, 0x09, 0x20, 0xC4, 0x00, 0x00, 0x00, 0x18, 0x16, /* 15, 9, 196, 2, 0 */
        0x17, 0x17,                         /* 2 method handles, unknown */
        0x72, 0x33, 0x00, 0x00, 0x70,       /* ldstr "InstrumentationDataEnd" (#US 0x33) */
        0x26, 0x2A};                        /* pop, ret */
    ck_assert_uint_eq(d[at], sizeof expect << 2 | 2); /* tiny header: under 64 bytes */
    ck_assert_mem_eq(d + at + 1, expect, sizeof expect);
    const uint8_t *u16;
    uint32_t units;
    ck_assert_int_eq(mantra_md_user_string(md, 0x33, &u16, &units), MANTRA_OK);
    ck_assert_uint_eq(units, strlen("InstrumentationDataEnd"));
    mantra_md_row(md, MANTRA_MD_METHOD_DEF, 2, v);
    ck_assert_str_eq(mantra_md_string(md, v[3]), "AssemblyDictionary");
    ck_assert_int_eq(mantra_pe_rva_to_offset(&pe, v[0], 1, &at), MANTRA_OK);
    const uint8_t dict[] = {0x72, 0x61, 0x00, 0x00, 0x70, /* ldstr "app;" (#US 0x61) */
                            0xD0, 0x01, 0x00, 0x00, 0x06, /* ldtoken MethodDef 1 */
                            0x26, 0x2A};
    ck_assert_uint_eq(d[at], sizeof dict << 2 | 2); /* tiny header */
    ck_assert_mem_eq(d + at + 1, dict, sizeof dict);
    ck_assert_int_eq(mantra_md_user_string(md, 0x61, &u16, &units), MANTRA_OK);
    ck_assert_uint_eq(units, 4);
    ck_assert_uint_eq(u16[0], 'a');
    mantra_md_close(md);
    mantra_pe_free(&pe);

    /* the default container: a ZIP archive whose one stored entry is zip.mibc.dll, the same PE */
    run(&r, (const char *[]){trace, "-o", zip, "--format", "mibc", NULL});
    ck_assert_int_eq(r.status, 0);
    run_tool_free(&r);
    size_t zn;
    uint8_t *z = slurp(zip, &zn);
    ck_assert_uint_eq(mantra_load_u32(z), 0x04034b50u);
    ck_assert_uint_eq(mantra_load_u16(z + 8), 0); /* stored */
    ck_assert_uint_eq(mantra_load_u32(z + 22), n);
    ck_assert_uint_eq(mantra_load_u16(z + 26), strlen("zip.mibc.dll"));
    ck_assert_mem_eq(z + 30, "zip.mibc.dll", strlen("zip.mibc.dll"));
    /* the same bytes but the Module and Assembly names ("zip.mibc" for "plain.mibc") */
    ck_assert_uint_eq(zn, 30 + 12 + n + 46 + 12 + 22);
    ck_assert_mem_eq(z + 42, "MZ", 2);
    free(z);
    free(d);
    free(app);
    free(trace);
    free(plain);
    free(zip);
}
END_TEST

/* A generic method of a generic type instantiated over Int32 (named by TypeLoadStop, BulkType and
 * MethodDetails): a TypeSpec for Gen`1<int32>, a MemberRef on it with the definition's signature,
 * a MethodSpec for <int32>; Int32 is a primitive, so the group is the defining assembly alone. */
START_TEST(mibc_generic_instantiation) {
    char *app = path_of("gapp.dll"), *trace = path_of("gapp.nettrace"), *out = path_of("gapp.mibc");
    const mantra_guid none = {0, 0, 0, {0}};
    write_app(app);
    pgo_trace *t = pgo_trace_open(trace);
    pgo_trace_module(t, 0x1000, 0x2000, app, &none);
    pgo_trace_assembly(t, 0x2000, "app, Version=1.2.0.0, Culture=neutral, PublicKeyToken=null");
    pgo_trace_module(t, 0x1001, 0x2001, "/nonexistent/System.Private.CoreLib.dll", &none);
    pgo_trace_assembly(t, 0x2001, "System.Private.CoreLib, Version=10.0.0.0, Culture=neutral, "
                                  "PublicKeyToken=7cec85d7bea7798e");
    pgo_trace_type_load(t, 0x7100, "Ns.Gen`1<System.Int32>");
    pgo_trace_type_load(t, 0x7101, "System.Int32");
    const uint64_t i32[] = {0x7101};
    const pgo_trace_type types[] = {{0x7100, 0x1000, 0x12, NULL, 1, i32}, {0x7101, 0x1001, 0x08, NULL, 0, NULL}};
    pgo_trace_bulk_types(t, types, 2);
    pgo_trace_method_details(t, 0x51, 0x7100, 0x06000005, 0x1000, 1, i32);
    mantra_pgo_schema g[] = {{MANTRA_PGO_BasicBlockIntCount, 0, 1, 0}};
    int64_t gv[] = {3};
    pgo_trace_method(t, 0x51, 0x1000, 0x06000005, "Ns.Gen`1[System.Int32]", "Make", "void  ()", g, 1, gv, 1);
    pgo_trace_close(t);
    run_tool_result r;
    run(&r, (const char *[]){trace, "-o", out, "--format", "mibc", "--uncompressed", NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "mantra pgo: .mibc: 1 of 1 methods written (0 generic instantiations whose type arguments have no names, "
                                "0 without their assembly file, 0 unresolved); 0 handles: 0 as tokens, 0 unknown\n"),
                  "%s", r.err);
    run_tool_free(&r);
    size_t n;
    mantra_pe pe;
    mantra_md *md;
    uint8_t *d = open_mibc(out, &n, &pe, &md);
    uint32_t v[MANTRA_MD_MAX_COLUMNS];
    const uint8_t *blob;
    uint32_t bn;
    char name[64];
    ck_assert_uint_eq(mantra_md_row_count(md, MANTRA_MD_TYPE_REF), 1);
    mantra_md_type_name(md, TOK(TYPE_REF, 1), name, sizeof name);
    ck_assert_str_eq(name, "Ns.Gen`1");
    ck_assert_uint_eq(mantra_md_row_count(md, MANTRA_MD_TYPE_SPEC), 1);
    mantra_md_row(md, MANTRA_MD_TYPE_SPEC, 1, v);
    mantra_md_blob(md, v[0], &blob, &bn);
    const uint8_t spec[] = {0x15, 0x12, 0x05, 0x01, 0x08}; /* GENERICINST CLASS TypeRef 1 <int32> */
    ck_assert_uint_eq(bn, sizeof spec);
    ck_assert_mem_eq(blob, spec, bn);
    mantra_md_row(md, MANTRA_MD_MEMBER_REF, 1, v);
    ck_assert_uint_eq(v[0], TOK(TYPE_SPEC, 1));
    ck_assert_str_eq(mantra_md_string(md, v[1]), "Make");
    mantra_md_blob(md, v[2], &blob, &bn);
    ck_assert_uint_eq(bn, sizeof SIG_GM);
    ck_assert_mem_eq(blob, SIG_GM, bn);
    ck_assert_uint_eq(mantra_md_row_count(md, MANTRA_MD_METHOD_SPEC), 1);
    mantra_md_row(md, MANTRA_MD_METHOD_SPEC, 1, v);
    ck_assert_uint_eq(v[0], TOK(MEMBER_REF, 1));
    mantra_md_blob(md, v[1], &blob, &bn);
    const uint8_t inst[] = {0x0A, 0x01, 0x08};
    ck_assert_uint_eq(bn, sizeof inst);
    ck_assert_mem_eq(blob, inst, bn);
    mantra_md_row(md, MANTRA_MD_METHOD_DEF, 1, v);
    ck_assert_str_eq(mantra_md_string(md, v[3]), "Assemblies_app;_1");
    size_t at;
    ck_assert_int_eq(mantra_pe_rva_to_offset(&pe, v[0], 6, &at), MANTRA_OK);
    const uint8_t head[] = {0xD0, 0x01, 0x00, 0x00, 0x2B}; /* ldtoken MethodSpec 1 */
    ck_assert_mem_eq(d + at + 1, head, sizeof head);
    close_mibc(d, &pe, md);
    free(app);
    free(trace);
    free(out);
}
END_TEST

/* A method the assembly does not hold (its token is past the MethodDef table): named with its reason,
 * counted; the .mibc is still written, with an empty AssemblyDictionary. */
START_TEST(mibc_unresolved_method) {
    char *app = path_of("uapp.dll"), *trace = path_of("uapp.nettrace"), *out = path_of("uapp.mibc");
    const mantra_guid none = {0, 0, 0, {0}};
    write_app(app);
    pgo_trace *t = pgo_trace_open(trace);
    pgo_trace_module(t, 0x1000, 0x2000, app, &none);
    mantra_pgo_schema g[] = {{MANTRA_PGO_BasicBlockIntCount, 0, 1, 0}};
    int64_t gv[] = {3};
    pgo_trace_method(t, 0x52, 0x1000, 0x06000063, "Ns.C", "Gone", "void  ()", g, 1, gv, 1);
    pgo_trace_close(t);
    run_tool_result r;
    run(&r, (const char *[]){trace, "-o", out, "--format", "mibc", "--uncompressed", NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    char line[512];
    snprintf(line, sizeof line, "mantra pgo: .mibc: Ns.C.Gone (%s, token 0x06000063): not written: the method's token "
             "is not a MethodDef of its assembly\nmantra pgo: .mibc: 0 of 1 methods written (0 generic instantiations "
             "whose type arguments have no names, 0 without their assembly file, 1 unresolved)", app);
    ck_assert_msg(strstr(r.err, line) != NULL, "%s", r.err);
    run_tool_free(&r);
    size_t n;
    mantra_pe pe;
    mantra_md *md;
    uint8_t *d = open_mibc(out, &n, &pe, &md);
    ck_assert_uint_eq(mantra_md_row_count(md, MANTRA_MD_METHOD_DEF), 1);
    uint32_t v[MANTRA_MD_MAX_COLUMNS];
    mantra_md_row(md, MANTRA_MD_METHOD_DEF, 1, v);
    ck_assert_str_eq(mantra_md_string(md, v[3]), "AssemblyDictionary");
    size_t at;
    ck_assert_int_eq(mantra_pe_rva_to_offset(&pe, v[0], 2, &at), MANTRA_OK);
    ck_assert_uint_eq(d[at], 1 << 2 | 2); /* tiny: one byte */
    ck_assert_uint_eq(d[at + 1], 0x2A);   /* ret */
    close_mibc(d, &pe, md);
    free(app);
    free(trace);
    free(out);
}
END_TEST

/* Reading a .mibc back (plain and in its ZIP container): the same text as the trace gives for the
 * written method; with -r the assembly, the method's token and module are found, and the trace and
 * the .mibc merge into one method whose counts add up. A damaged container is refused, located. */
START_TEST(mibc_read_back_and_merge) {
    char *app = path_of("rapp.dll"), *trace = path_of("rapp.nettrace"), *plain = path_of("rapp-plain.mibc"),
         *zip = path_of("rapp.mibc"), *back = path_of("rapp-back.txt"), *merged = path_of("rapp-merged.json");
    const mantra_guid none = {0, 0, 0, {0}};
    write_app(app);
    write_trace(trace, app, &none);
    run_tool_result r;
    run(&r, (const char *[]){trace, "-o", plain, "--format", "mibc", "--uncompressed", NULL});
    ck_assert_int_eq(r.status, 0);
    run_tool_free(&r);
    run(&r, (const char *[]){trace, "-o", zip, "--format", "mibc", NULL});
    ck_assert_int_eq(r.status, 0);
    run_tool_free(&r);
    const char *run_text = "*** START PGO Data, max index = 1 ***\n"
                           "@@@ codehash 0x00000000 methodhash 0x00000000 ilSize 0x00000000 records 0x00000003\n"
                           "MethodName: Ns.C.Run\nSignature: void  (int32)\n"
                           "Schema InstrumentationKind 65 ILOffset 0 Count 1 Other 0\n7\n"
                           "Schema InstrumentationKind 195 ILOffset 3 Count 4 Other 0\n"
                           "TypeHandle: UNKNOWN\nTypeHandle: UNKNOWN\nTypeHandle: UNKNOWN\nTypeHandle: UNKNOWN\n"
                           "Schema InstrumentationKind 196 ILOffset 9 Count 2 Other 0\n"
                           "MethodHandle: UNKNOWN\nMethodHandle: UNKNOWN\n"
                           "*** END PGO Data ***\n";
    for (int form = 0; form < 2; form++) {
        run(&r, (const char *[]){form ? zip : plain, "-o", back, NULL});
        ck_assert_msg(r.status == 0, "%s", r.err);
        ck_assert_msg(strstr(r.err, "mantra pgo: 1 method from 0 traces and 1 profile (0 instrumentation events, 1 "
                                    "methods read, 0 merged)") != NULL, "%s", r.err);
        run_tool_free(&r);
        size_t n;
        char *text = (char *)slurp(back, &n);
        ck_assert_str_eq(text, run_text);
        free(text);
    }
    /* the trace and its .mibc: one method, merged, its count doubled */
    run(&r, (const char *[]){trace, plain, "-r", app, "-o", merged, "--format", "json", NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "mantra pgo: 2 methods from 1 trace and 1 profile (2 instrumentation events, 3 methods "
                                "read, 1 merged)") != NULL, "%s", r.err);
    run_tool_free(&r);
    size_t n;
    char *json = (char *)slurp(merged, &n);
    ck_assert_msg(strstr(json, "\"name\":\"Run\",\"signature\":\"void  (int32)\",\"il_size\":0,\"runs\":2,") != NULL,
                  "%s", json);
    ck_assert_msg(strstr(json, "\"values\":[14]}") != NULL, "%s", json);
    free(json);
    /* a damaged container: one byte of the entry's data */
    size_t zn;
    uint8_t *z = slurp(zip, &zn);
    z[200] ^= 1;
    FILE *f = fopen(zip, "wb");
    ck_assert_uint_eq(fwrite(z, 1, zn, f), zn);
    fclose(f);
    run(&r, (const char *[]){zip, "-o", back, NULL});
    ck_assert_int_eq(r.status, 1);
    char line[512];
    uint32_t entry = mantra_load_u32(z + 22);
    snprintf(line, sizeof line, "mantra pgo: %s: offset %u: the entry's CRC-32 does not match its data\n", zip,
             (unsigned)(30 + strlen("rapp.mibc.dll") + entry + 16));
    ck_assert_msg(strstr(r.err, line) != NULL, "%s\n%s", line, r.err);
    run_tool_free(&r);
    free(z);
    free(app);
    free(trace);
    free(plain);
    free(zip);
    free(back);
    free(merged);
}
END_TEST

START_TEST(dll_mismatch_refused) {
    char *app = path_of("app2.dll"), *trace = path_of("app2.nettrace"), *out = path_of("mismatch.mibc");
    const mantra_guid pdb = {0xAABBCCDD, 1, 2, {3, 4, 5, 6, 7, 8, 9, 10}};
    write_app(app);
    write_trace(trace, app, &pdb);
    remove(out);
    run_tool_result r;
    run(&r, (const char *[]){trace, "-o", out, "--format", "mibc", NULL});
    ck_assert_int_eq(r.status, 1);
    char line[512];
    snprintf(line, sizeof line, "mantra pgo: %s: Dll mismatch: the trace's module app2 has PDB signature "
             "aabbccdd-0001-0002-0304-05060708090a, the file has none\n", app);
    ck_assert_msg(strstr(r.err, line) != NULL, "%s", r.err);
    FILE *f = fopen(out, "rb");
    ck_assert_ptr_null(f); /* nothing written */
    run_tool_free(&r);
    free(app);
    free(trace);
    free(out);
}
END_TEST

START_TEST(usage) {
    run_tool_result r;
    run(&r, (const char *[]){"x.nettrace", "-o", "x.txt", "--uncompressed", NULL});
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "mantra pgo: --uncompressed goes with --format mibc\nTry 'mantra pgo --help'.\n");
    run_tool_free(&r);
    run(&r, (const char *[]){"x.nettrace", "-o", "x.mibc", "--format", "zip", NULL});
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "mantra pgo: --format needs 'text', 'json' or 'mibc'\nTry 'mantra pgo --help'.\n");
    run_tool_free(&r);
    char *app = path_of("app3.dll"), *trace = path_of("app3.nettrace"), *out = path_of("app3.mibc");
    const mantra_guid none = {0, 0, 0, {0}};
    write_app(app);
    write_trace(trace, app, &none);
    run(&r, (const char *[]){trace, "-o", out, "--format", "mibc", "-r", "/nonexistent/lib.dll", NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "mantra pgo: /nonexistent/lib.dll: cannot read the assembly\n") != NULL, "%s", r.err);
    run_tool_free(&r);
    free(app);
    free(trace);
    free(out);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("pgo_mibc");
    TCase *tc = tcase_create("mibc");
    tcase_add_test(tc, mibc_rows_and_il);
    tcase_add_test(tc, mibc_generic_instantiation);
    tcase_add_test(tc, mibc_unresolved_method);
    tcase_add_test(tc, mibc_read_back_and_merge);
    tcase_add_test(tc, dll_mismatch_refused);
    tcase_add_test(tc, usage);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
