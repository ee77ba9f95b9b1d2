/* Manifest-driven payload decoding: payloads written by the generated writers of
 * tests/golden/alltypes.yaml (checked-in golden output, captured with mantra_set_listener) are
 * decoded with the same manifest loaded at run time; the visitor must give every value back (scalars,
 * strings, arrays, Binary, struct arrays, map names). Truncated payloads are refused at every length,
 * trailing bytes are reported, and the visitor can skip and stop. */
#include <check.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alltypes_readers.h"
#include "alltypes_writers.h"
#include "check_main.h"
#include "manifest/manifest_test_util.h"
#include "mantra/manifest.h"

/* ---- capture --------------------------------------------------------------------------------------- */
static uint8_t g_payload[MANTRA_MAX_PAYLOAD];
static size_t g_size;
static const mantra_event_desc *g_desc;

static void capture(void *ctx, const mantra_event_desc *desc, const uint8_t *payload, size_t size) {
    (void)ctx;
    memcpy(g_payload, payload, size);
    g_size = size;
    g_desc = desc;
}

static mantra_manifest *g_m;
static const mantra_manifest_provider *g_p;

static void setup(void) {
    ck_assert_int_eq(mantra_alltypes_register(), 0);
    mantra_set_listener(capture, NULL);
    g_size = 0;
    g_desc = NULL;
    g_m = mt_load_file(mt_source_path("tests/golden/alltypes.yaml"));
    g_p = mantra_manifest_find_provider(g_m, "Mantra-Test-AllTypes");
    ck_assert_ptr_nonnull(g_p);
}

static void teardown(void) {
    mantra_set_listener(NULL, NULL);
    mantra_manifest_free(g_m);
}

/* The template of the event that was just written (found by its id and version, as a reader would). */
static const mantra_manifest_template *written_tpl(void) {
    ck_assert_ptr_nonnull(g_desc);
    const mantra_manifest_event *e = mantra_manifest_find_event(g_p, g_desc->id, g_desc->version);
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e->symbol, g_desc->symbol);
    return e->tpl;
}

/* ---- a printing visitor (what a JSON printer does, in a compact notation) -------------------------- */
typedef struct printer {
    char text[65536 * 4];
    size_t len;
    int calls;
    int stop_at;   /* stop at this call (1-based), 0 never */
    int skip_kind; /* SKIP_ARRAYS or SKIP_STRUCTS: begin_array of those returns 1 */
    int in_binary; /* inside a Binary (printed whole at its begin_array) */
} printer;

#define SKIP_ARRAYS 1
#define SKIP_STRUCTS 2
#define STOP (-100) /* what the printer returns to stop the walk */

static void out(printer *p, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(p->text + p->len, sizeof p->text - p->len, fmt, ap);
    va_end(ap);
    ck_assert_int_ge(n, 0);
    p->len += (size_t)n;
    ck_assert_uint_lt(p->len, sizeof p->text);
}

/* After every call: stop at call stop_at, or skip the elements of the arrays skip_kind names. */
static int result(printer *p, const mantra_value *v, int begin) {
    if (p->stop_at != 0 && p->calls == p->stop_at)
        return STOP;
    if (begin && p->skip_kind == SKIP_STRUCTS && v->manifest_field->type == MANTRA_TYPE_OBJECT)
        return 1;
    if (begin && p->skip_kind == SKIP_ARRAYS && v->manifest_field->type != MANTRA_TYPE_OBJECT)
        return 1;
    return 0;
}

static int print_scalar(void *ctx, const mantra_value *v) {
    printer *p = ctx;
    p->calls++;
    ck_assert_ptr_null(v->field); /* the reader's descriptions: not from the manifest decoder */
    ck_assert_ptr_nonnull(v->manifest_field);
    if (v->type == MANTRA_TYPE_STRING) {
        char buf[1024];
        mantra_str16 s = {v->data, v->count};
        mantra_str16_to_utf8(s, buf, sizeof buf);
        out(p, "%s=\"%s\" ", v->name, buf);
        return result(p, v, 0);
    }
    if (v->type == MANTRA_TYPE_STRING8) {
        out(p, "%s='%.*s' ", v->name, (int)v->size, (const char *)v->data);
        return result(p, v, 0);
    }
    if (v->name[0] != '\0')
        out(p, "%s=", v->name);
    else
        ck_assert_uint_ge(v->depth, 1); /* an array element */
    switch (v->manifest_field->type) {
    case MANTRA_TYPE_SBYTE:
    case MANTRA_TYPE_INT16:
    case MANTRA_TYPE_INT32:
    case MANTRA_TYPE_INT64:
        out(p, "%" PRId64, v->i);
        break;
    case MANTRA_TYPE_SINGLE:
    case MANTRA_TYPE_DOUBLE:
        out(p, "%.17g", v->d);
        break;
    case MANTRA_TYPE_GUID: {
        char g[37];
        mantra_manifest_guid_format(&v->guid, g);
        out(p, "%s", g);
        break;
    }
    case MANTRA_TYPE_POINTER:
        out(p, "0x%" PRIx64, v->u);
        break;
    default:
        out(p, "%" PRIu64, v->u);
    }
    if (v->map_text != NULL)
        out(p, "(%s)", v->map_text);
    out(p, " ");
    return result(p, v, 0);
}

static int print_begin_array(void *ctx, const mantra_value *v) {
    printer *p = ctx;
    p->calls++;
    if (v->manifest_field->type == MANTRA_TYPE_BINARY) {
        out(p, "%s=<", v->name);
        for (size_t i = 0; i < v->count; i++)
            out(p, "%02x", v->data[i]);
        out(p, "> ");
        p->in_binary = 1;
        int r = result(p, v, 0);
        return r == 0 ? 1 : r; /* the bytes are printed: skip them */
    }
    out(p, "%s#%zu=[", v->name, v->count);
    return result(p, v, 1);
}

static int print_end_array(void *ctx, const mantra_value *v) {
    printer *p = ctx;
    p->calls++;
    if (p->in_binary)
        p->in_binary = 0;
    else
        out(p, "] ");
    return result(p, v, 0);
}

static int print_begin_object(void *ctx, const mantra_value *v) {
    printer *p = ctx;
    p->calls++;
    ck_assert_uint_eq(v->count, v->manifest_field->member_count);
    out(p, "{");
    return result(p, v, 0);
}

static int print_end_object(void *ctx, const mantra_value *v) {
    printer *p = ctx;
    p->calls++;
    out(p, "} ");
    return result(p, v, 0);
}

static const mantra_field_visitor print_value = {print_scalar, print_begin_object, print_end_object,
                                                 print_begin_array, print_end_array};

static printer g_pr;

/* Decodes g_payload[0..size) with the written event's template; returns the status. */
static int decode(size_t size, unsigned pointer_size, mantra_manifest_decode_info *info) {
    memset(&g_pr, 0, sizeof g_pr);
    return mantra_manifest_decode(written_tpl(), g_payload, size, pointer_size, &print_value, &g_pr, info);
}

/* Every shorter prefix of the current payload fails (SHORT or BAD_STRING), one byte more is TRAILING
 * with the same values, and the decoder reads nothing outside (ASan build: the prefix is copied to an
 * exactly sized buffer). */
static void check_lengths(void) {
    const mantra_manifest_template *t = written_tpl();
    for (size_t n = 0; n < g_size; n++) {
        uint8_t *copy = malloc(n ? n : 1);
        ck_assert_ptr_nonnull(copy);
        memcpy(copy, g_payload, n);
        mantra_manifest_decode_info info;
        int rc = mantra_manifest_decode(t, copy, n, 8, NULL, NULL, &info);
        ck_assert_msg(rc == MANTRA_DECODE_SHORT || rc == MANTRA_DECODE_BAD_STRING, "prefix %zu: %d", n, rc);
        ck_assert_ptr_nonnull(info.field);
        ck_assert_uint_le(info.consumed, n);
        free(copy);
    }
    char full[sizeof g_pr.text];
    ck_assert_int_eq(decode(g_size, 8, NULL), MANTRA_DECODE_OK);
    memcpy(full, g_pr.text, g_pr.len + 1);
    g_payload[g_size] = 0xAB;
    mantra_manifest_decode_info info;
    ck_assert_int_eq(decode(g_size + 1, 8, &info), MANTRA_DECODE_TRAILING);
    ck_assert_uint_eq(info.consumed, g_size);
    ck_assert_ptr_null(info.field);
    ck_assert_str_eq(g_pr.text, full);
}

/* ---- the events -------------------------------------------------------------------------------------------- */

static const mantra_guid GUID_A = {0x01020304u, 0x0506u, 0x0708u, {0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10}};

START_TEST(scalars) {
    ck_assert_int_eq(mantra_AllTypes_Scalars_write(-2, 0xfe, -3, 0x1234, -4, 0x80000001u, INT64_MIN, UINT64_MAX, 1.5f,
                                                   -2.25, true, &GUID_A, (uintptr_t)0x1122334455667788ull,
                                                   132000000000000000ull, 1),
                     MANTRA_WRITE_OK);
    mantra_manifest_decode_info info;
    ck_assert_int_eq(decode(g_size, 8, &info), MANTRA_DECODE_OK);
    ck_assert_uint_eq(info.consumed, g_size);
    ck_assert_str_eq(g_pr.text,
                     "I8=-2 U8=254 I16=-3 U16=4660 I32=-4 U32=2147483649(A|Top) I64=-9223372036854775808 "
                     "U64=18446744073709551615 F32=1.5 F64=-2.25 B=1 G=01020304-0506-0708-090a-0b0c0d0e0f10 "
                     "P=0x1122334455667788 T=132000000000000000 C=1(Gr\xc3\xbcn) ");
    ck_assert_int_eq(g_pr.calls, 15);
    check_lengths();

    /* a 32-bit writer's payload: the same with a 4-byte pointer */
    memmove(g_payload + 62 + 4, g_payload + 62 + 8, g_size - 62 - 8); /* P is at 62 */
    ck_assert_int_eq(decode(g_size - 4, 4, NULL), MANTRA_DECODE_OK);
    ck_assert_ptr_nonnull(strstr(g_pr.text, " P=0x55667788 T=132000000000000000 "));
    /* ... which read as 8-byte pointers runs short */
    ck_assert_int_eq(decode(g_size - 4, 8, &info), MANTRA_DECODE_SHORT);
    ck_assert_str_eq(info.field->name, "T");
}
END_TEST

START_TEST(scalar_map_values) {
    /* a value no entry names has no map text; a value map names exact values */
    ck_assert_int_eq(mantra_AllTypes_Scalars_write(0, 0, 0, 0, 0, 0x2, 0, 0, 0, 0, false, NULL, 0, 0, 7), MANTRA_WRITE_OK);
    ck_assert_int_eq(decode(g_size, 8, NULL), MANTRA_DECODE_OK);
    ck_assert_ptr_nonnull(strstr(g_pr.text, " U32=2 "));
    ck_assert_ptr_nonnull(strstr(g_pr.text, " C=7 "));
    ck_assert_ptr_nonnull(strstr(g_pr.text, " G=00000000-0000-0000-0000-000000000000 "));
    ck_assert_int_eq(mantra_AllTypes_Scalars_write(0, 0, 0, 0, 0, 0x80000003u, 0, 0, 0, 0, false, NULL, 0, 0, 0),
                     MANTRA_WRITE_OK);
    ck_assert_int_eq(decode(g_size, 8, NULL), MANTRA_DECODE_OK);
    ck_assert_ptr_nonnull(strstr(g_pr.text, " U32=2147483651(A|Top|0x2) "));
    ck_assert_ptr_nonnull(strstr(g_pr.text, " C=0(Red) "));
}
END_TEST

START_TEST(strings) {
    ck_assert_int_eq(mantra_AllTypes_Strings_write("Gr\xc3\xbc\xc3\x9f" "e \xf0\x9d\x84\x9e", "bytes \xe2\x9c\x93", ""),
                     MANTRA_WRITE_OK);
    ck_assert_int_eq(decode(g_size, 8, NULL), MANTRA_DECODE_OK);
    ck_assert_str_eq(g_pr.text, "Wide=\"Gr\xc3\xbc\xc3\x9f" "e \xf0\x9d\x84\x9e\" Narrow='bytes \xe2\x9c\x93' Wide2=\"\" ");
    check_lengths();
    /* version 1 has its own (id, version) and the same template */
    ck_assert_int_eq(mantra_AllTypes_Strings_V1_write("a", "b", "c"), MANTRA_WRITE_OK);
    ck_assert_int_eq(decode(g_size, 8, NULL), MANTRA_DECODE_OK);
    ck_assert_str_eq(g_pr.text, "Wide=\"a\" Narrow='b' Wide2=\"c\" ");
    /* a string without its terminator */
    mantra_manifest_decode_info info;
    ck_assert_int_eq(decode(g_size - 1, 8, &info), MANTRA_DECODE_BAD_STRING);
    ck_assert_str_eq(info.field->name, "Wide2");
    ck_assert_uint_eq(info.consumed, 6);
    ck_assert_str_eq(g_pr.text, "Wide=\"a\" Narrow='b' ");
}
END_TEST

START_TEST(arrays) {
    const uint32_t values[3] = {1, 0xffffffffu, 3};
    const int64_t sgn[3] = {-1, INT64_MAX, 0};
    const double pair[2] = {0.5, -1e300};
    const uint8_t blob[5] = {0xde, 0xad, 0xbe, 0xef, 0x00};
    const uint8_t fixed[4] = {1, 2, 3, 4};
    const uintptr_t ptrs[3] = {0x10, 0x20, (uintptr_t)0xffffffffffffffffull};
    const mantra_guid ids[2] = {GUID_A, {0xffffffffu, 0xffffu, 0, {0, 0, 0, 0, 0, 0, 0, 0xff}}};
    ck_assert_int_eq(mantra_AllTypes_Arrays_write(3, values, sgn, pair, 5, blob, fixed, ptrs, ids), MANTRA_WRITE_OK);
    ck_assert_int_eq(decode(g_size, 8, NULL), MANTRA_DECODE_OK);
    ck_assert_str_eq(g_pr.text,
                     "N=3 Values#3=[1 4294967295 3 ] Signed#3=[-1 9223372036854775807 0 ] Pair#2=[0.5 -1.0000000000000001e+300 ] "
                     "Size=5 Blob=<deadbeef00> Fixed=<01020304> Ptrs#3=[0x10 0x20 0xffffffffffffffff ] "
                     "Ids#2=[01020304-0506-0708-090a-0b0c0d0e0f10 ffffffff-ffff-0000-0000-0000000000ff ] ");
    check_lengths();
    /* the same with empty arrays */
    ck_assert_int_eq(mantra_AllTypes_Arrays_write(0, NULL, NULL, pair, 0, NULL, fixed, NULL, ids), MANTRA_WRITE_OK);
    ck_assert_int_eq(decode(g_size, 8, NULL), MANTRA_DECODE_OK);
    ck_assert_str_eq(g_pr.text,
                     "N=0 Values#0=[] Signed#0=[] Pair#2=[0.5 -1.0000000000000001e+300 ] Size=0 Blob=<> Fixed=<01020304> "
                     "Ptrs#0=[] Ids#2=[01020304-0506-0708-090a-0b0c0d0e0f10 ffffffff-ffff-0000-0000-0000000000ff ] ");
    /* skipping an array's elements: its BEGIN and END only */
    memset(&g_pr, 0, sizeof g_pr);
    g_pr.skip_kind = SKIP_ARRAYS;
    ck_assert_int_eq(mantra_manifest_decode(written_tpl(), g_payload, g_size, 8, &print_value, &g_pr, NULL),
                     MANTRA_DECODE_OK);
    ck_assert_str_eq(g_pr.text, "N=0 Values#0=[] Signed#0=[] Pair#2=[] Size=0 Blob=<> Fixed=<01020304> Ptrs#0=[] Ids#2=[] ");
}
END_TEST

/* Items elements laid out by the caller: Id u64, Name UTF-16 + NUL, K u8, Sub u32[K]. */
static size_t put_item(uint8_t *p, uint64_t id, const char *ascii_name, uint8_t k, const uint32_t *sub) {
    size_t o = 0;
    memcpy(p + o, &id, 8);
    o += 8;
    for (size_t i = 0; i <= strlen(ascii_name); i++) {
        p[o++] = (uint8_t)ascii_name[i];
        p[o++] = 0;
    }
    p[o++] = k;
    if (k > 0)
        memcpy(p + o, sub, 4u * k);
    return o + 4u * k;
}

typedef struct spans {
    size_t struct_offset, struct_size;
    unsigned max_depth;
} spans;

static int span_depth(void *ctx, const mantra_value *v) {
    spans *seen = ctx;
    if (v->depth > seen->max_depth)
        seen->max_depth = v->depth;
    return 0;
}

static int span_end_array(void *ctx, const mantra_value *v) {
    spans *seen = ctx;
    if (v->manifest_field->type == MANTRA_TYPE_OBJECT) {
        seen->struct_offset = v->offset;
        seen->struct_size = v->size;
    }
    return span_depth(ctx, v);
}

static const mantra_field_visitor visit_spans = {span_depth, span_depth, span_depth, span_depth, span_end_array};

START_TEST(structs) {
    uint8_t items[256];
    size_t n = 0;
    const uint32_t sub1[2] = {7, 8}, sub3[1] = {0xffffffffu};
    n += put_item(items + n, 1, "one", 2, sub1);
    n += put_item(items + n, 2, "", 0, NULL);
    n += put_item(items + n, 0xffffffffffffffffull, "three", 1, sub3);
    ck_assert_int_eq(mantra_AllTypes_Structs_write(3, items, n, 0xbeef), MANTRA_WRITE_OK);
    ck_assert_int_eq(decode(g_size, 8, NULL), MANTRA_DECODE_OK);
    ck_assert_str_eq(g_pr.text,
                     "Count=3 Items#3=[{Id=1 Name=\"one\" K=2 Sub#2=[7 8 ] } {Id=2 Name=\"\" K=0 Sub#0=[] } "
                     "{Id=18446744073709551615 Name=\"three\" K=1 Sub#1=[4294967295 ] } ] After=48879 ");
    check_lengths();

    /* the generated decoder agrees on where the struct array is */
    mantra_AllTypes_Structs_fields f;
    ck_assert_int_eq(mantra_AllTypes_Structs_decode(g_payload, g_size, 8, &f), MANTRA_DECODE_OK);
    spans seen = {0, 0, 0};
    ck_assert_int_eq(mantra_manifest_decode(written_tpl(), g_payload, g_size, 8, &visit_spans, &seen, NULL),
                     MANTRA_DECODE_OK);
    ck_assert_uint_eq(seen.struct_offset, (size_t)(f.Items.data - g_payload));
    ck_assert_uint_eq(seen.struct_size, f.Items.size);
    ck_assert_uint_eq(seen.max_depth, 3); /* Items[e] 1, its members 2, Sub[k] 3 */

    /* skipping a struct array: no element calls, the fields after it still come */
    memset(&g_pr, 0, sizeof g_pr);
    g_pr.skip_kind = SKIP_STRUCTS;
    ck_assert_int_eq(mantra_manifest_decode(written_tpl(), g_payload, g_size, 8, &print_value, &g_pr, NULL),
                     MANTRA_DECODE_OK);
    ck_assert_str_eq(g_pr.text, "Count=3 Items#3=[] After=48879 ");

    /* a count larger than the elements present */
    uint32_t big = 4;
    memcpy(g_payload, &big, 4);
    mantra_manifest_decode_info info;
    ck_assert_int_eq(decode(g_size, 8, &info), MANTRA_DECODE_SHORT);
    ck_assert_str_eq(info.field->name, "Id");
}
END_TEST

/* A struct with layout c (Buckets.Values: u16, u32, Pointer, u8): each member at its natural
 * alignment, each element padded, with 8-byte and with 4-byte pointers; the generated reader agrees. */
START_TEST(c_layout_struct) {
    static const struct {
        uint16_t index;
        uint32_t hits;
        uintptr_t size;
        uint8_t tag;
    } values[2] = {{1, 7, 0x3a8, 9}, {4, 1, 0xa60, 0xff}};
    ck_assert_int_eq(mantra_AllTypes_Buckets_write(3, 2, values, sizeof values), MANTRA_WRITE_OK);
    unsigned ptr = (unsigned)sizeof(uintptr_t);
    memset(&g_pr, 0, sizeof g_pr);
    ck_assert_int_eq(mantra_manifest_decode(written_tpl(), g_payload, g_size, ptr, &print_value, &g_pr, NULL),
                     MANTRA_DECODE_OK);
    ck_assert_str_eq(g_pr.text, "Kind=3 Count=2 Values#2=[{Index=1 Hits=7 Size=0x3a8 Tag=9 } "
                                "{Index=4 Hits=1 Size=0xa60 Tag=255 } ] ");
    check_lengths();
    mantra_AllTypes_Buckets_fields f;
    ck_assert_int_eq(mantra_AllTypes_Buckets_decode(g_payload, g_size, ptr, &f), MANTRA_DECODE_OK);
    spans seen = {0, 0, 0};
    ck_assert_int_eq(mantra_manifest_decode(written_tpl(), g_payload, g_size, ptr, &visit_spans, &seen, NULL),
                     MANTRA_DECODE_OK);
    ck_assert_uint_eq(seen.struct_size, f.Values.size);
    ck_assert_uint_eq(seen.struct_size, sizeof values);
    /* 4-byte pointers: elements of 16 bytes (Index, 2 bytes of padding, Hits, Size, Tag, 3 bytes) */
    static const uint8_t p32[] = {5, 0, 1, 0, 2, 0, 0xEE, 0xEE, 10, 0, 0, 0, 0x44, 0x33, 0x22, 0x11, 7, 0xEE, 0xEE, 0xEE};
    memcpy(g_payload, p32, sizeof p32);
    memset(&g_pr, 0, sizeof g_pr);
    ck_assert_int_eq(mantra_manifest_decode(written_tpl(), g_payload, sizeof p32, 4, &print_value, &g_pr, NULL),
                     MANTRA_DECODE_OK);
    ck_assert_str_eq(g_pr.text, "Kind=5 Count=1 Values#1=[{Index=2 Hits=10 Size=0x11223344 Tag=7 } ] ");
    mantra_manifest_decode_info info;
    ck_assert_int_eq(mantra_manifest_decode(written_tpl(), g_payload, sizeof p32 - 1, 4, NULL, NULL, &info),
                     MANTRA_DECODE_SHORT); /* the last element's padding is part of the array */
}
END_TEST

START_TEST(empty_and_inline) {
    ck_assert_int_eq(mantra_AllTypes_Empty_write(), MANTRA_WRITE_OK);
    ck_assert_uint_eq(g_size, 0);
    ck_assert_ptr_null(written_tpl());
    ck_assert_int_eq(decode(0, 8, NULL), MANTRA_DECODE_OK);
    ck_assert_int_eq(g_pr.calls, 0);
    g_payload[0] = 1;
    ck_assert_int_eq(decode(1, 8, NULL), MANTRA_DECODE_TRAILING);
    ck_assert_int_eq(mantra_manifest_decode(NULL, NULL, 0, 8, NULL, NULL, NULL), MANTRA_DECODE_OK);

    ck_assert_int_eq(mantra_AllTypes_RenamedEvent_write(200), MANTRA_WRITE_OK);
    ck_assert_int_eq(decode(g_size, 8, NULL), MANTRA_DECODE_OK);
    ck_assert_str_eq(g_pr.text, "X=200 ");
    check_lengths();
}
END_TEST

START_TEST(visitor_stops) {
    const uint32_t sub1[2] = {7, 8};
    uint8_t items[64];
    size_t n = put_item(items, 1, "one", 2, sub1);
    ck_assert_int_eq(mantra_AllTypes_Structs_write(1, items, n, 5), MANTRA_WRITE_OK);
    for (int stop = 1; stop <= 13; stop++) {
        memset(&g_pr, 0, sizeof g_pr);
        g_pr.stop_at = stop;
        int rc = mantra_manifest_decode(written_tpl(), g_payload, g_size, 8, &print_value, &g_pr, NULL);
        ck_assert_int_eq(rc, STOP);
        ck_assert_int_eq(g_pr.calls, stop);
    }
    memset(&g_pr, 0, sizeof g_pr);
    ck_assert_int_eq(mantra_manifest_decode(written_tpl(), g_payload, g_size, 8, &print_value, &g_pr, NULL),
                     MANTRA_DECODE_OK);
    ck_assert_int_eq(g_pr.calls, 13); /* Count, BEGIN, {, Id, Name, K, Sub[, 7, 8, ], }, END, After */
}
END_TEST

/* A template with a struct whose elements take no bytes, and counts from each integer type. */
START_TEST(handwritten_templates) {
    static const char yaml[] =
        "providers:\n"
        "  - name: P\n"
        "    templates:\n"
        "      - name: Z\n"
        "        fields:\n"
        "          - {name: N, type: UInt32}\n"
        "          - {name: E, type: struct, count: N, fields: [{name: K, type: UInt8}, {name: A, type: UInt8, count: K}]}\n"
        "      - name: C\n"
        "        fields:\n"
        "          - {name: A, type: Int8}\n"
        "          - {name: B, type: UInt64}\n"
        "          - {name: X, type: UInt8, count: A}\n"
        "          - {name: Y, type: Binary, length: B}\n"
        "          - {name: F, type: Boolean, count: 2}\n"
        "          - {name: G, type: Float, count: A}\n";
    mantra_manifest *m = mantra_manifest_load_memory(yaml, sizeof yaml - 1, "h.yaml", NULL);
    ck_assert_ptr_nonnull(m);
    const mantra_manifest_provider *p = mantra_manifest_provider_at(m, 0);
    const mantra_manifest_template *z = mantra_manifest_find_template(p, "Z");
    const mantra_manifest_template *c = mantra_manifest_find_template(p, "C");
    /* 4 billion elements of one byte each: short, quickly */
    const uint8_t big[] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0};
    mantra_manifest_decode_info info;
    ck_assert_int_eq(mantra_manifest_decode(z, big, sizeof big, 8, NULL, NULL, &info), MANTRA_DECODE_SHORT);
    ck_assert_str_eq(info.field->name, "K");
    /* elements of zero bytes cannot be: K is one byte. A 0-count struct is fine */
    const uint8_t none[] = {0, 0, 0, 0};
    memset(&g_pr, 0, sizeof g_pr);
    ck_assert_int_eq(mantra_manifest_decode(z, none, sizeof none, 8, &print_value, &g_pr, NULL), MANTRA_DECODE_OK);
    ck_assert_str_eq(g_pr.text, "N=0 E#0=[] ");
    /* a negative Int8 count is a huge count: short */
    const uint8_t neg[] = {0xff, 1, 0, 0, 0, 0, 0, 0, 0, 0xaa};
    ck_assert_int_eq(mantra_manifest_decode(c, neg, sizeof neg, 8, NULL, NULL, &info), MANTRA_DECODE_SHORT);
    ck_assert_str_eq(info.field->name, "X");
    /* a 64-bit length beyond the payload */
    const uint8_t len[] = {0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    ck_assert_int_eq(mantra_manifest_decode(c, len, sizeof len, 8, NULL, NULL, &info), MANTRA_DECODE_SHORT);
    ck_assert_str_eq(info.field->name, "Y");
    const uint8_t ok[] = {1, 2, 0, 0, 0, 0, 0, 0, 0, 9, 0xab, 0xcd, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xc0, 0x3f};
    memset(&g_pr, 0, sizeof g_pr);
    ck_assert_int_eq(mantra_manifest_decode(c, ok, sizeof ok, 8, &print_value, &g_pr, NULL), MANTRA_DECODE_OK);
    ck_assert_str_eq(g_pr.text, "A=1 B=2 X#1=[9 ] Y=<abcd> F#2=[1 0 ] G#1=[1.5 ] ");
    mantra_manifest_free(m);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("manifest_decode");
    TCase *tc = tcase_create("decode");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, scalars);
    tcase_add_test(tc, scalar_map_values);
    tcase_add_test(tc, strings);
    tcase_add_test(tc, arrays);
    tcase_add_test(tc, structs);
    tcase_add_test(tc, c_layout_struct);
    tcase_add_test(tc, empty_and_inline);
    tcase_add_test(tc, visitor_stops);
    tcase_add_test(tc, handwritten_templates);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
