/* test_r2r.c - the ReadyToRun reader (mantra/ecma.h "ReadyToRun") on an image built here byte by
 * byte: a PE32+ file for Linux x64 whose CLI header points at a READYTORUN_HEADER with the sections
 * the reader reads (ImportSections, RuntimeFunctions, MethodDefEntryPoints, InstanceMethod-
 * EntryPoints, PgoInstrumentationData, HotColdMap), each encoded as ../shared/reference/
 * r2r-and-symbols.md §2 describes them. Exact code ranges, signatures, PGO entries and import cells
 * are asserted; then each byte of the ReadyToRun part is damaged in turn (every read stays inside
 * the file: ASan in CI) and a few damages are refused with their exact messages. It leaves r2r.dll
 * in the build tree (the fuzz corpus's seed tests/fuzz/corpus/ecma/r2r.dll is a copy). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "mantra/ecma.h"
#include "mantra/pgo.h"

#define TEXT_RVA 0x1000u
#define TEXT_RAW 0x200u
#define TEXT_SIZE 0x400u

typedef struct image {
    uint8_t d[TEXT_RAW + TEXT_SIZE];
    uint32_t at; /* the next free RVA in .text */
    uint32_t sec_rva[8], sec_size[8], sec_type[8], nsec;
    uint32_t pgo_data_rva; /* entry A's data, shared with entry B */
} image;

static void put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static void put16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static uint8_t *at_rva(image *im, uint32_t rva) { return im->d + TEXT_RAW + (rva - TEXT_RVA); }

/* Places bytes in .text (8-aligned), returns their RVA. */
static uint32_t place(image *im, const uint8_t *b, uint32_t n) {
    im->at = (im->at + 7) & ~7u;
    uint32_t rva = im->at;
    memcpy(at_rva(im, rva), b, n);
    im->at += n;
    return rva;
}
static void section(image *im, uint32_t type, const uint8_t *b, uint32_t n) {
    im->sec_type[im->nsec] = type;
    im->sec_rva[im->nsec] = place(im, b, n);
    im->sec_size[im->nsec++] = n;
}

/* RUNTIME_FUNCTIONs {Begin, End, Unwind}: method 1 = 0 and its funclet 1, method 2 = 2, a generic
 * instantiation = 3, method 1's cold part = 4. */
static const uint32_t RTF[5][2] = {{0x2000, 0x2010}, {0x2010, 0x2018}, {0x2020, 0x2030}, {0x2030, 0x2040}, {0x3000, 0x3008}};

static void build(image *im) {
    memset(im, 0, sizeof *im);
    uint8_t *d = im->d;
    d[0] = 'M';
    d[1] = 'Z';
    put32(d + 0x3C, 0x40);
    memcpy(d + 0x40, "PE\0\0", 4);
    uint8_t *coff = d + 0x44;
    put16(coff, 0x8664 ^ 0x7B79); /* x64, Linux (pedecoder.h) */
    put16(coff + 2, 1);
    put16(coff + 16, 240);
    uint8_t *opt = coff + 20;
    put16(opt, 0x20B);
    put32(opt + 32, 0x1000);
    put32(opt + 36, 0x200);
    put32(opt + 56, 0x2000);
    put32(opt + 108, 16);
    put32(opt + 112 + 8 * 14, TEXT_RVA); /* the CLI header */
    put32(opt + 112 + 8 * 14 + 4, 72);
    uint8_t *sec = opt + 240;
    memcpy(sec, ".text", 5);
    put32(sec + 8, TEXT_SIZE);
    put32(sec + 12, TEXT_RVA);
    put32(sec + 16, TEXT_SIZE);
    put32(sec + 20, TEXT_RAW);
    im->at = TEXT_RVA + 72 + 16 + 8 * 12; /* CLI header, READYTORUN_HEADER, room for 8 sections */

    uint8_t rtf[5 * 12];
    for (int i = 0; i < 5; i++) {
        put32(rtf + 12 * i, RTF[i][0]);
        put32(rtf + 12 * i + 4, RTF[i][1]);
        put32(rtf + 12 * i + 8, 0x5000);
    }
    /* type signatures behind import cells 1 and 2 of import section 0: a TypeHandle fixup of
     * CLASS TypeDef 2, and one with a module override (module 1, CLASS TypeRef 1) */
    static const uint8_t sig1[] = {0x10, 0x12, 0x08}, sig2[] = {0x90, 0x01, 0x12, 0x05};
    uint32_t s0 = place(im, sig1, sizeof sig1), s1 = place(im, sig1, sizeof sig1), s2 = place(im, sig2, sizeof sig2);
    uint8_t sigs[12];
    put32(sigs, s0);
    put32(sigs + 4, s1);
    put32(sigs + 8, s2);
    uint32_t sigs_rva = place(im, sigs, sizeof sigs);
    uint8_t cells[24] = {0};
    uint32_t cells_rva = place(im, cells, sizeof cells);
    uint8_t imports[20] = {0};
    put32(imports, cells_rva);
    put32(imports + 4, sizeof cells);
    imports[11] = 8; /* EntrySize */
    put32(imports + 12, sigs_rva);
    section(im, MANTRA_R2R_IMPORT_SECTIONS, imports, sizeof imports);
    section(im, MANTRA_R2R_RUNTIME_FUNCTIONS, rtf, sizeof rtf);
    /* NativeArray of 2: header (2 << 2, u8 index), block 0 at +1; tree nodes for bits 8, 4, 2 go
     * on (val 1), bit 1 goes on for index 0 and jumps 2 for index 1 (val 1 | 2 | 2 << 2); element 0:
     * RUNTIME_FUNCTION 0 without fixups; element 1: 2 with fixups (then a fixup byte) */
    static const uint8_t eps[] = {0x10, 0x01, 0x02, 0x02, 0x02, 0x16, 0x00, 0x12, 0x00};
    section(im, MANTRA_R2R_METHOD_DEF_ENTRY_POINTS, eps, sizeof eps);
    /* NativeHashtable: 1 bucket of u8 offsets [2, 4): an entry (hash 0xAB, offset +1) whose data is
     * the method signature MethodInstantiation, MethodDef 3, <int32>, then RUNTIME_FUNCTION 3 */
    static const uint8_t inst[] = {0x00, 0x02, 0x04, 0xAB, 0x02, 0x04, 0x03, 0x01, 0x08, 0x0C};
    section(im, MANTRA_R2R_INSTANCE_METHOD_ENTRY_POINTS, inst, sizeof inst);
    /* PgoInstrumentationData: entry A = MethodDef 1, version 0 in place (1), its stream; entry B =
     * OwnerType CLASS TypeDef 2, MethodDef 2, version 2 shared ((2 << 2) | 3) with A's stream */
    mantra_pgo_schema schema[2] = {{0, 0, 1, 0}, {4, 0, 3, 0}};
    ck_assert_int_eq(mantra_pgo_kind_by_name("BasicBlockIntCount", &schema[0].kind), MANTRA_OK);
    ck_assert_int_eq(mantra_pgo_kind_by_name("HandleHistogramTypes", &schema[1].kind), MANTRA_OK);
    int64_t values[4] = {7, 0x10, 0x20, 0x1F};
    uint8_t stream[64];
    int64_t sn = mantra_pgo_encode(schema, 2, values, 4, stream, sizeof stream);
    ck_assert_int_gt(sn, 0);
    uint8_t pgo[128];
    uint32_t n = 0;
    pgo[n++] = 0x00; /* 1 bucket, u8 offsets */
    uint32_t bucket_at = n;
    n += 2;
    uint32_t ea = n;
    n += 2; /* entry A: hash, offset */
    uint32_t eb = n;
    n += 2; /* entry B */
    pgo[bucket_at] = (uint8_t)(ea - 1);
    pgo[bucket_at + 1] = (uint8_t)(n - 1);
    uint32_t a_data = n; /* A: flags 0, MethodDef 1, (0 << 2) | 1, the stream */
    pgo[n++] = 0x00;
    pgo[n++] = 0x01;
    pgo[n++] = 0x01 << 1;
    uint32_t stream_at = n;
    memcpy(pgo + n, stream, (size_t)sn);
    n += (uint32_t)sn;
    uint32_t b_data = n; /* B: flags OwnerType, CLASS TypeDef 2, MethodDef 2, (2 << 2) | 3, back offset */
    pgo[n++] = 0x40;
    pgo[n++] = 0x12;
    pgo[n++] = 0x08;
    pgo[n++] = 0x02;
    pgo[n++] = ((2 << 2) | 3) << 1;
    uint32_t field = n;
    pgo[n++] = (uint8_t)((field - stream_at) << 1);
    pgo[ea] = 0xA1;
    pgo[ea + 1] = (uint8_t)((a_data - (ea + 1)) << 1);
    pgo[eb] = 0xB2;
    pgo[eb + 1] = (uint8_t)((b_data - (eb + 1)) << 1);
    section(im, MANTRA_R2R_PGO_INSTRUMENTATION_DATA, pgo, n);
    im->pgo_data_rva = im->sec_rva[im->nsec - 1] + stream_at;
    uint8_t hc[8];
    put32(hc, 4); /* cold RUNTIME_FUNCTION 4 belongs to hot 0 */
    put32(hc + 4, 0);
    section(im, MANTRA_R2R_HOT_COLD_MAP, hc, sizeof hc);

    uint8_t *cli = at_rva(im, TEXT_RVA);
    put32(cli, 72);
    put16(cli + 4, 2);
    put16(cli + 6, 5);
    put32(cli + 16, 4); /* IL library */
    put32(cli + 64, TEXT_RVA + 72);
    put32(cli + 68, 16 + 12 * im->nsec);
    uint8_t *h = at_rva(im, TEXT_RVA + 72);
    put32(h, 0x00525452);
    put16(h + 4, 16);
    put16(h + 6, 0);
    put32(h + 12, im->nsec);
    for (uint32_t i = 0; i < im->nsec; i++) {
        put32(h + 16 + 12 * i, im->sec_type[i]);
        put32(h + 20 + 12 * i, im->sec_rva[i]);
        put32(h + 24 + 12 * i, im->sec_size[i]);
    }
}

typedef struct seen {
    mantra_r2r_pgo_entry e[4];
    int n;
} seen;

static int collect(void *ctx, const mantra_r2r_pgo_entry *e) {
    seen *s = ctx;
    if (s->n < 4)
        s->e[s->n] = *e;
    s->n++;
    return 0;
}

START_TEST(reads_an_image_built_by_hand) {
    static image im;
    build(&im);
    const char *dir = getenv("MANTRA_BINARY_DIR"); /* the build tree, never the source tree */
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/ecma/r2r.dll", dir ? dir : ".");
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "%s", path);
    ck_assert_uint_eq(fwrite(im.d, 1, sizeof im.d, f), sizeof im.d);
    fclose(f);
    mantra_pe pe;
    mantra_ecma_error err = {0, ""};
    ck_assert_int_eq(mantra_pe_parse(im.d, sizeof im.d, &pe, &err), MANTRA_OK);
    ck_assert_uint_eq(pe.machine, 0x8664);
    mantra_r2r r;
    ck_assert_int_eq(mantra_r2r_open(&pe, &r, &err), MANTRA_OK);
    ck_assert_uint_eq(r.major, 16);
    ck_assert_uint_eq(r.nsections, 6);
    ck_assert_uint_eq(r.sections[1].type, MANTRA_R2R_RUNTIME_FUNCTIONS);
    ck_assert_int_eq(mantra_r2r_code(&pe, &r, &err), MANTRA_OK);
    ck_assert_uint_eq(r.nfunctions, 5);
    ck_assert_uint_eq(r.first_cold, 4);
    ck_assert_uint_eq(r.ninstances, 1);
    ck_assert_uint_eq(r.nmethods, 3);
    /* method 1: RUNTIME_FUNCTIONs 0 and its funclet 1 (up to the next entry point, 2), cold 4 */
    ck_assert_uint_eq(r.methods[0].token, 0x06000001);
    ck_assert_uint_eq(r.methods[0].hot_rva, 0x2000);
    ck_assert_uint_eq(r.methods[0].hot_size, 0x18);
    ck_assert_uint_eq(r.methods[0].cold_rva, 0x3000);
    ck_assert_uint_eq(r.methods[0].cold_size, 8);
    /* method 2: RUNTIME_FUNCTION 2 only: 3 is the instantiation's entry point */
    ck_assert_uint_eq(r.methods[1].token, 0x06000002);
    ck_assert_uint_eq(r.methods[1].entry, 2);
    ck_assert_uint_eq(r.methods[1].hot_rva, 0x2020);
    ck_assert_uint_eq(r.methods[1].hot_size, 0x10);
    ck_assert_uint_eq(r.methods[1].cold_size, 0);
    ck_assert_ptr_null(r.methods[1].sig);
    /* the instantiation <int32> of MethodDef 3: RUNTIME_FUNCTION 3, its signature kept */
    ck_assert_uint_eq(r.methods[2].token, 0x06000003);
    ck_assert_uint_eq(r.methods[2].entry, 3);
    ck_assert_uint_eq(r.methods[2].hot_rva, 0x2030);
    ck_assert_uint_eq(r.methods[2].hot_size, 0x10);
    ck_assert_uint_eq(r.methods[2].sig_size, 4);
    ck_assert_uint_eq(r.methods[2].sig[0], MANTRA_R2R_SIG_METHOD_INSTANTIATION);

    seen s;
    memset(&s, 0, sizeof s);
    ck_assert_int_eq(mantra_r2r_pgo_each(&pe, &r, collect, &s, &err), MANTRA_OK);
    ck_assert_int_eq(s.n, 2);
    ck_assert_uint_eq(s.e[0].method.rid, 1);
    ck_assert_uint_eq(s.e[0].method.flags, 0);
    ck_assert_ptr_null(s.e[0].method.owner);
    ck_assert_uint_eq(s.e[0].version, 0);
    ck_assert_uint_eq(s.e[1].method.rid, 2);
    ck_assert_uint_eq(s.e[1].method.flags, MANTRA_R2R_SIG_OWNER_TYPE);
    ck_assert_uint_eq(s.e[1].method.owner_size, 2);
    ck_assert_uint_eq(s.e[1].method.owner[1], 0x08);
    ck_assert_uint_eq(s.e[1].version, 2);
    ck_assert_ptr_eq(s.e[0].data, s.e[1].data); /* shared */
    size_t off;
    ck_assert_int_eq(mantra_pe_rva_to_offset(&pe, im.pgo_data_rva, 1, &off), MANTRA_OK);
    ck_assert_ptr_eq(s.e[0].data, im.d + off);
    mantra_pgo_data pd;
    ck_assert_int_eq(mantra_pgo_decode(s.e[0].data, s.e[0].data_max, 8, &pd, NULL), MANTRA_OK);
    ck_assert_uint_eq(pd.records, 2);
    ck_assert_uint_eq(pd.value_count, 4);
    ck_assert_int_eq(pd.values[0], 7);
    ck_assert_int_eq(pd.values[1], 0x10);
    ck_assert_int_eq(pd.values[2], 0x20);
    ck_assert_int_eq(pd.values[3], 0x1F);
    mantra_pgo_data_free(&pd);

    const uint8_t *sig;
    size_t max;
    ck_assert_int_eq(mantra_r2r_import_signature(&pe, &r, 0, 1, &sig, &max, &err), MANTRA_OK);
    ck_assert_uint_eq(sig[0], 0x10);
    ck_assert_uint_eq(sig[1], 0x12);
    ck_assert_uint_eq(sig[2], 0x08);
    ck_assert_uint_ge(max, 3);
    ck_assert_int_eq(mantra_r2r_import_signature(&pe, &r, 0, 2, &sig, &max, &err), MANTRA_OK);
    ck_assert_uint_eq(sig[0], 0x90);
    ck_assert_int_eq(mantra_r2r_import_signature(&pe, &r, 0, 3, &sig, &max, &err), MANTRA_ENOENT);
    ck_assert_int_eq(mantra_r2r_import_signature(&pe, &r, 1, 0, &sig, &max, &err), MANTRA_ENOENT);
    mantra_r2r_free(&r);
    mantra_pe_free(&pe);
}
END_TEST

START_TEST(signatures) {
    /* flags UpdateContext | OwnerType | MethodInstantiation | Constrained, module 3, owner
     * GENERICINST CLASS TypeRef 1 <int32>, MethodDef 0x81 (2 bytes), 2 args (SZARRAY string,
     * MODULE_ZAPSIG 2 VALUETYPE TypeDef 4), constrained CANON_ZAPSIG */
    static const uint8_t m[] = {0x80, 0xE4, 0x03, 0x15, 0x12, 0x05, 0x01, 0x08, 0x80, 0x81, 0x02, 0x1D,
                                0x0E, 0x3F, 0x02, 0x11, 0x10, 0x3E, 0xFF};
    mantra_r2r_method_sig s;
    ck_assert_uint_eq(mantra_r2r_method_sig_parse(m, sizeof m, &s), sizeof m - 1);
    ck_assert_uint_eq(s.flags, 0xE4);
    ck_assert_uint_eq(s.module, 3);
    ck_assert_uint_eq(s.owner_size, 5);
    ck_assert_uint_eq(s.rid, 0x81);
    ck_assert_uint_eq(s.ninst, 2);
    ck_assert_uint_eq(s.inst_size, 6);
    ck_assert_ptr_eq(s.inst, m + 11);
    ck_assert_uint_eq(s.constrained_size, 1);
    ck_assert_uint_eq(s.constrained[0], 0x3E);
    for (size_t cut = 0; cut < sizeof m - 1; cut++) /* every cut is refused */
        ck_assert_uint_eq(mantra_r2r_method_sig_parse(m, cut, &s), 0);
    static const uint8_t unknown_flag[] = {0x82, 0x00, 0x01};
    ck_assert_uint_eq(mantra_r2r_method_sig_parse(unknown_flag, sizeof unknown_flag, &s), 0);
    /* ARRAY int32 rank 2, 1 size (3), 2 lower bounds; FNPTR default 1 param void(int32) */
    static const uint8_t arr[] = {0x14, 0x08, 0x02, 0x01, 0x03, 0x02, 0x00, 0x00};
    ck_assert_uint_eq(mantra_r2r_type_sig_size(arr, sizeof arr), sizeof arr);
    static const uint8_t fn[] = {0x1B, 0x00, 0x01, 0x01, 0x08};
    ck_assert_uint_eq(mantra_r2r_type_sig_size(fn, sizeof fn), sizeof fn);
    static const uint8_t var_zapsig[] = {0x3B, 0x00};
    ck_assert_uint_eq(mantra_r2r_type_sig_size(var_zapsig, sizeof var_zapsig), 0);
    uint8_t deep[200];
    memset(deep, 0x1D, sizeof deep); /* SZARRAY of SZARRAY of ...: refused past the depth limit */
    deep[sizeof deep - 1] = 0x08;
    ck_assert_uint_eq(mantra_r2r_type_sig_size(deep, sizeof deep), 0);
    ck_assert_uint_eq(mantra_r2r_type_sig_size(deep + 150, 50), 50);
}
END_TEST

static void expect_refusal(image *im, uint32_t rva, uint8_t value, int (*step)(const mantra_pe *, mantra_r2r *)) {
    uint8_t *p = at_rva(im, rva), old = *p;
    *p = value;
    mantra_pe pe;
    mantra_r2r r;
    mantra_ecma_error err = {0, ""};
    ck_assert_int_eq(mantra_pe_parse(im->d, sizeof im->d, &pe, &err), MANTRA_OK);
    ck_assert_int_eq(mantra_r2r_open(&pe, &r, &err), MANTRA_OK);
    int rc = step(&pe, &r);
    ck_assert_int_eq(rc, MANTRA_EFORMAT);
    mantra_r2r_free(&r);
    mantra_pe_free(&pe);
    *p = old;
}

static mantra_ecma_error last;
static int step_code(const mantra_pe *pe, mantra_r2r *r) { return mantra_r2r_code(pe, r, &last); }
static int nothing(void *ctx, const mantra_r2r_pgo_entry *e) {
    (void)ctx;
    (void)e;
    return 0;
}
static int step_pgo(const mantra_pe *pe, mantra_r2r *r) { return mantra_r2r_pgo_each(pe, r, nothing, NULL, &last); }

START_TEST(damage_is_refused_or_read_inside_the_file) {
    static image im;
    build(&im);
    /* specific damages, with their messages */
    uint32_t hc = im.sec_rva[5], pgo = im.sec_rva[4], inst = im.sec_rva[3];
    expect_refusal(&im, hc, 9, step_code);
    ck_assert_str_eq(last.message, "the HotColdMap's first cold RUNTIME_FUNCTION 9 is past the 5 there are");
    expect_refusal(&im, inst + 2, 0x40, step_code); /* the bucket's end past the section */
    ck_assert_str_eq(last.message, "InstanceMethodEntryPoints: bucket 0 (3..65) is outside the section");
    expect_refusal(&im, pgo + 9, 0x04, step_pgo); /* entry A's data kind 2 */
    ck_assert_str_eq(last.message, "PgoInstrumentationData: an entry's data kind 2 is neither 1 (in place) nor 3 (shared)");
    ck_assert_uint_eq(last.offset, TEXT_RAW + (pgo - TEXT_RVA) + 9);
    /* every byte of the ReadyToRun part flipped in turn: each call returns, reading inside the file */
    for (uint32_t rva = TEXT_RVA + 72; rva < im.at; rva++) {
        uint8_t *p = at_rva(&im, rva), old = *p;
        *p ^= 0xFF;
        mantra_pe pe;
        mantra_r2r r;
        mantra_ecma_error err = {0, ""};
        if (mantra_pe_parse(im.d, sizeof im.d, &pe, &err) == MANTRA_OK) {
            if (mantra_r2r_open(&pe, &r, &err) == MANTRA_OK) {
                int rc = mantra_r2r_code(&pe, &r, &err);
                ck_assert(rc == MANTRA_OK || rc == MANTRA_EFORMAT || rc == MANTRA_EUNSUPPORTED);
                rc = mantra_r2r_pgo_each(&pe, &r, nothing, NULL, &err);
                ck_assert(rc == MANTRA_OK || rc == MANTRA_EFORMAT);
                const uint8_t *sig;
                size_t max;
                for (uint32_t c = 0; c < 4; c++) {
                    rc = mantra_r2r_import_signature(&pe, &r, 0, c, &sig, &max, &err);
                    ck_assert(rc == MANTRA_OK || rc == MANTRA_ENOENT || rc == MANTRA_EFORMAT);
                    if (rc == MANTRA_OK)
                        ck_assert(sig >= im.d && sig + max <= im.d + sizeof im.d);
                }
                mantra_r2r_free(&r);
            }
            mantra_pe_free(&pe);
        }
        *p = old;
    }
}
END_TEST

START_TEST(refusals_with_messages) {
    static image im;
    build(&im);
    mantra_pe pe;
    mantra_r2r r;
    mantra_ecma_error err = {0, ""};
    /* a ReadyToRun major version this reader does not know */
    uint8_t *h = at_rva(&im, TEXT_RVA + 72);
    put16(h + 4, 17);
    ck_assert_int_eq(mantra_pe_parse(im.d, sizeof im.d, &pe, &err), MANTRA_OK);
    ck_assert_int_eq(mantra_r2r_open(&pe, &r, &err), MANTRA_EUNSUPPORTED);
    ck_assert_str_eq(err.message, "ReadyToRun version 17.0 is not one this reader knows (9.0 to 16.x)");
    ck_assert_uint_eq(err.offset, TEXT_RAW + 72 + 4);
    mantra_pe_free(&pe);
    put16(h + 4, 16);
    /* a second section overlapping .text */
    uint8_t *coff = im.d + 0x44, *sec2 = im.d + 0x44 + 20 + 240 + 40;
    put16(coff + 2, 2);
    memcpy(sec2, ".data", 5);
    put32(sec2 + 8, 0x100);
    put32(sec2 + 12, TEXT_RVA + 0x200); /* inside .text's 0x400 bytes */
    ck_assert_int_eq(mantra_pe_parse(im.d, sizeof im.d, &pe, &err), MANTRA_EFORMAT);
    ck_assert_str_eq(err.message, "section 1 (.data) at RVA 0x1200 overlaps section 0 (.text), which runs to RVA 0x1400");
    ck_assert_uint_eq(err.offset, 0x44 + 20 + 240 + 40 + 12);
    put16(coff + 2, 1);
    memset(sec2, 0, 40);
    /* a NativeArray tree node that jumps to itself: the walk is bounded (four levels, one per bit
     * of the index within its block), so the reader ends, whatever it makes of it */
    uint32_t eps = im.sec_rva[2];
    at_rva(&im, eps)[5] = 0x04; /* bit 1's node: "go right by 0" */
    ck_assert_int_eq(mantra_pe_parse(im.d, sizeof im.d, &pe, &err), MANTRA_OK);
    ck_assert_int_eq(mantra_r2r_open(&pe, &r, &err), MANTRA_OK);
    int rc = mantra_r2r_code(&pe, &r, &err);
    ck_assert(rc == MANTRA_OK || rc == MANTRA_EFORMAT);
    mantra_r2r_free(&r);
    mantra_pe_free(&pe);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("r2r");
    TCase *tc = tcase_create("r2r");
    tcase_add_test(tc, reads_an_image_built_by_hand);
    tcase_add_test(tc, signatures);
    tcase_add_test(tc, damage_is_refused_or_read_inside_the_file);
    tcase_add_test(tc, refusals_with_messages);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
