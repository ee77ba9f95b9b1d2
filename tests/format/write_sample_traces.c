/* write_sample_traces OUTDIR: writes OUTDIR/alltypes.nettrace, a nettrace V5 trace that covers every
 * field type TraceEvent decodes (Boolean, Char, SByte..UInt64, Single, Double, DateTime, Guid,
 * String), arrays (V2Params) of scalars and of structs, nested structs (V1 and V2), an
 * event without fields, stacks (shared and empty), three threads, many blocks and several sequence
 * points; and OUTDIR/alltypes.expected.jsonl, the exact `mantra dump --json` lines
 * (docs/dump-json.md) a correct reader prints for it, in file order (which is also time order:
 * timestamps strictly increase and every row is marked sorted).
 *
 * Not covered: Decimal (15) and DBNull (2), which TraceEvent does not decode, and arrays of strings.
 * Registered as a test: it checks its own output with an independent walker (tests/format/walk.h).
 */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check_main.h"
#include "common/utf-internal.h"
#include "format/walk.h"
#include "mantra/metadata.h"
#include "mantra/nettrace_writer.h"

#define PROVIDER "Mantra-Test-Format"
#define N_EVENTS 1500u

static const char *g_outdir;

/* ---- payload and JSON builders --------------------------------------------------------------- */

typedef struct pbuf {
    uint8_t d[8192];
    size_t n;
} pbuf;

static void p_bytes(pbuf *p, const void *v, size_t n) {
    ck_assert_uint_le(p->n + n, sizeof p->d);
    memcpy(p->d + p->n, v, n);
    p->n += n;
}
static void p_u(pbuf *p, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) {
        uint8_t b = (uint8_t)(v >> (8 * i));
        p_bytes(p, &b, 1);
    }
}
static void p_f32(pbuf *p, float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    p_u(p, u, 4);
}
static void p_f64(pbuf *p, double f) {
    uint64_t u;
    memcpy(&u, &f, 8);
    p_u(p, u, 8);
}
static void p_guid(pbuf *p, const mantra_guid *g) {
    p_u(p, g->data1, 4);
    p_u(p, g->data2, 2);
    p_u(p, g->data3, 2);
    p_bytes(p, g->data4, 8);
}
static void p_str(pbuf *p, const char *utf8) {
    size_t bytes, units = cm_utf8_utf16_units(utf8, &bytes);
    ck_assert_uint_ne(units, SIZE_MAX);
    ck_assert_uint_le(p->n + units * 2 + 2, sizeof p->d);
    p->n += cm_utf8_to_utf16le(utf8, bytes, p->d + p->n);
    p_u(p, 0, 2);
}

typedef struct jbuf {
    char *s;
    size_t n, cap;
} jbuf;

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
static void j(jbuf *b, const char *fmt, ...) {
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (b->s && (size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        b->cap = (b->cap + (size_t)k + 1) * 2;
        b->s = realloc(b->s, b->cap);
    }
}
static void j_str(jbuf *b, const char *utf8) {
    j(b, "\"");
    for (const unsigned char *c = (const unsigned char *)utf8; *c; c++) {
        if (*c == '"' || *c == '\\')
            j(b, "\\%c", *c);
        else if (*c == '\n')
            j(b, "\\n");
        else if (*c == '\t')
            j(b, "\\t");
        else if (*c < 0x20)
            j(b, "\\u%04x", *c);
        else
            j(b, "%c", *c);
    }
    j(b, "\"");
}
static void j_guid(jbuf *b, const mantra_guid *g) {
    j(b, "\"%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x\"", g->data1, g->data2, g->data3, g->data4[0],
      g->data4[1], g->data4[2], g->data4[3], g->data4[4], g->data4[5], g->data4[6], g->data4[7]);
}
static void j_bool(jbuf *b, int v) { j(b, "%s", v ? "true" : "false"); }

/* ---- the events ------------------------------------------------------------------------------ */

typedef struct def {
    uint32_t id, version;
    const char *name;
    mantra_nettrace_event_key key;
} def;

static def D_SCALARS = {1, 0, "Scalars", 0}, D_NESTED = {2, 1, "Nested", 0}, D_ARRAYS = {3, 0, "Arrays", 0},
           D_EMPTY = {4, 0, "Empty", 0}, D_MIXED = {5, 2, "Mixed", 0};

static void define_events(mantra_nettrace_writer *w) {
    mantra_metadata_builder *b;
    const uint8_t *blob;
    size_t n;
    ck_assert_int_eq(mantra_metadata_builder_new(&b), 0);

    ck_assert_int_eq(mantra_metadata_begin(b, 1, "Scalars", 0x1, 0, 4, 0), 0);
    static const struct {
        const char *name;
        uint32_t tc;
    } sc[] = {{"B", MANTRA_TYPE_BOOLEAN}, {"C", MANTRA_TYPE_CHAR},     {"I8", MANTRA_TYPE_SBYTE},
              {"U8", MANTRA_TYPE_BYTE},   {"I16", MANTRA_TYPE_INT16},  {"U16", MANTRA_TYPE_UINT16},
              {"I32", MANTRA_TYPE_INT32}, {"U32", MANTRA_TYPE_UINT32}, {"I64", MANTRA_TYPE_INT64},
              {"U64", MANTRA_TYPE_UINT64}, {"F32", MANTRA_TYPE_SINGLE}, {"F64", MANTRA_TYPE_DOUBLE},
              {"T", MANTRA_TYPE_DATETIME}, {"G", MANTRA_TYPE_GUID},     {"S", MANTRA_TYPE_STRING}};
    for (size_t i = 0; i < sizeof sc / sizeof sc[0]; i++)
        ck_assert_int_eq(mantra_metadata_field(b, sc[i].name, sc[i].tc), 0);
    ck_assert_int_eq(mantra_metadata_finish(b, &blob, &n), 0);
    ck_assert_int_eq(mantra_nettrace_add_event_raw(w, PROVIDER, blob, n, &D_SCALARS.key), 0);

    ck_assert_int_eq(mantra_metadata_begin(b, 2, "Nested", 0x2, 1, 5, 10), 0);
    ck_assert_int_eq(mantra_metadata_field(b, "Id", MANTRA_TYPE_UINT32), 0);
    ck_assert_int_eq(mantra_metadata_begin_struct(b, "Point"), 0);
    ck_assert_int_eq(mantra_metadata_field(b, "X", MANTRA_TYPE_INT32), 0);
    ck_assert_int_eq(mantra_metadata_field(b, "Y", MANTRA_TYPE_INT32), 0);
    ck_assert_int_eq(mantra_metadata_field(b, "Label", MANTRA_TYPE_STRING), 0);
    ck_assert_int_eq(mantra_metadata_begin_struct(b, "Inner"), 0);
    ck_assert_int_eq(mantra_metadata_field(b, "Flag", MANTRA_TYPE_BOOLEAN), 0);
    ck_assert_int_eq(mantra_metadata_field(b, "Code", MANTRA_TYPE_UINT16), 0);
    ck_assert_int_eq(mantra_metadata_end_struct(b), 0);
    ck_assert_int_eq(mantra_metadata_end_struct(b), 0);
    ck_assert_int_eq(mantra_metadata_field(b, "Tail", MANTRA_TYPE_INT64), 0);
    ck_assert_int_eq(mantra_metadata_finish(b, &blob, &n), 0);
    ck_assert_int_eq(mantra_nettrace_add_event_raw(w, PROVIDER, blob, n, &D_NESTED.key), 0);

    ck_assert_int_eq(mantra_metadata_begin(b, 3, "Arrays", 0x4, 0, 4, 0), 0);
    ck_assert_int_eq(mantra_metadata_array(b, "Bytes", MANTRA_TYPE_BYTE), 0);
    ck_assert_int_eq(mantra_metadata_array(b, "Shorts", MANTRA_TYPE_INT16), 0);
    ck_assert_int_eq(mantra_metadata_array(b, "Ints", MANTRA_TYPE_UINT32), 0);
    ck_assert_int_eq(mantra_metadata_array(b, "Longs", MANTRA_TYPE_INT64), 0);
    ck_assert_int_eq(mantra_metadata_array(b, "Doubles", MANTRA_TYPE_DOUBLE), 0);
    ck_assert_int_eq(mantra_metadata_array(b, "Guids", MANTRA_TYPE_GUID), 0);
    ck_assert_int_eq(mantra_metadata_array(b, "Flags", MANTRA_TYPE_BOOLEAN), 0);
    ck_assert_int_eq(mantra_metadata_begin_struct_array(b, "Items"), 0);
    ck_assert_int_eq(mantra_metadata_field(b, "Key", MANTRA_TYPE_INT32), 0);
    ck_assert_int_eq(mantra_metadata_field(b, "Value", MANTRA_TYPE_DOUBLE), 0);
    ck_assert_int_eq(mantra_metadata_end_struct(b), 0);
    ck_assert_int_eq(mantra_metadata_field(b, "After", MANTRA_TYPE_UINT16), 0);
    ck_assert_int_eq(mantra_metadata_finish(b, &blob, &n), 0);
    ck_assert_int_eq(mantra_nettrace_add_event_raw(w, PROVIDER, blob, n, &D_ARRAYS.key), 0);

    ck_assert_int_eq(mantra_metadata_begin(b, 4, "Empty", 0x8, 0, 2, 0), 0);
    ck_assert_int_eq(mantra_metadata_finish(b, &blob, &n), 0);
    ck_assert_int_eq(mantra_nettrace_add_event_raw(w, PROVIDER, blob, n, &D_EMPTY.key), 0);

    ck_assert_int_eq(mantra_metadata_begin(b, 5, "Mixed", 0x10, 2, 4, 0), 0);
    ck_assert_int_eq(mantra_metadata_field(b, "Name", MANTRA_TYPE_STRING), 0);
    ck_assert_int_eq(mantra_metadata_begin_struct(b, "Wrapper"), 0);
    ck_assert_int_eq(mantra_metadata_field(b, "Tag", MANTRA_TYPE_STRING), 0);
    ck_assert_int_eq(mantra_metadata_array(b, "Values", MANTRA_TYPE_INT32), 0);
    ck_assert_int_eq(mantra_metadata_end_struct(b), 0);
    ck_assert_int_eq(mantra_metadata_field(b, "Last", MANTRA_TYPE_BYTE), 0);
    ck_assert_int_eq(mantra_metadata_finish(b, &blob, &n), 0);
    ck_assert_int_eq(mantra_nettrace_add_event_raw(w, PROVIDER, blob, n, &D_MIXED.key), 0);
    mantra_metadata_builder_free(b);
}

static const char *const STRINGS[] = {
    "hello", "", "Gr\xc3\xbcn \xe2\x82\xac", "quote \" backslash \\ newline \n tab \t ctl \x01",
    "emoji \xf0\x9f\x98\x80 end", "Hello.Program::Main"};
#define N_STRINGS (sizeof STRINGS / sizeof STRINGS[0])

static mantra_guid guid_for(uint32_t i) {
    mantra_guid g = {0x01234567u + i, (uint16_t)(0x89ab + i), (uint16_t)(0xcdef - i),
                     {0xf0, 0xe1, 0xd2, 0xc3, 0xb4, 0xa5, (uint8_t)i, (uint8_t)(i >> 8)}};
    return g;
}

static void scalars(uint32_t i, pbuf *p, jbuf *js) {
    int b = (i / 5) % 2;
    uint16_t c = (i % 11 == 0) ? 0xe9 : (uint16_t)('A' + i % 26);
    int8_t i8 = (int8_t)(i % 2 ? -128 + (int)(i % 50) : 127 - (int)(i % 50));
    uint8_t u8 = (uint8_t)(255 - i % 256);
    int16_t i16 = (int16_t)(i % 3 ? -32768 + (int)i : 32767 - (int)i);
    uint16_t u16 = (uint16_t)(65535 - i);
    int32_t i32 = i % 4 ? INT32_MIN + (int32_t)i : INT32_MAX - (int32_t)i;
    uint32_t u32 = UINT32_MAX - i;
    int64_t i64 = i % 2 ? INT64_MIN + (int64_t)i : INT64_MAX - (int64_t)i;
    uint64_t u64 = UINT64_MAX - (uint64_t)i * 977;
    float f32 = (float)(i % 200) * 0.5f - 25.0f;
    double f64 = (double)i * 0.25 - 100.0;
    uint64_t t = UINT64_C(133500000000000000) + (uint64_t)i * 10000000u; /* FILETIME in 2024 */
    mantra_guid g = guid_for(i);
    const char *s = STRINGS[i % N_STRINGS];
    p_u(p, (uint32_t)b, 4);
    p_u(p, c, 2);
    p_u(p, (uint8_t)i8, 1);
    p_u(p, u8, 1);
    p_u(p, (uint16_t)i16, 2);
    p_u(p, u16, 2);
    p_u(p, (uint32_t)i32, 4);
    p_u(p, u32, 4);
    p_u(p, (uint64_t)i64, 8);
    p_u(p, u64, 8);
    p_f32(p, f32);
    p_f64(p, f64);
    p_u(p, t, 8);
    p_guid(p, &g);
    p_str(p, s);
    j(js, "\"B\":");
    j_bool(js, b);
    j(js, ",\"C\":%s", c == 0xe9 ? "\"\xc3\xa9\"" : "");
    if (c != 0xe9)
        j(js, "\"%c\"", (char)c);
    j(js, ",\"I8\":%d,\"U8\":%u,\"I16\":%d,\"U16\":%u,\"I32\":%ld,\"U32\":%lu,\"I64\":%lld,\"U64\":%llu", i8, u8,
      i16, u16, (long)i32, (unsigned long)u32, (long long)i64, (unsigned long long)u64);
    j(js, ",\"F32\":%.9g,\"F64\":%.17g,\"T\":%llu,\"G\":", (double)f32, f64, (unsigned long long)t);
    j_guid(js, &g);
    j(js, ",\"S\":");
    j_str(js, s);
}

static void nested(uint32_t i, pbuf *p, jbuf *js) {
    int32_t x = (int32_t)i * 3 - 2000, y = -(int32_t)i;
    const char *label = STRINGS[(i + 2) % N_STRINGS];
    int flag = i % 3 == 0;
    uint16_t code = (uint16_t)(i * 7);
    int64_t tail = -(int64_t)i * 1000003;
    p_u(p, i, 4);
    p_u(p, (uint32_t)x, 4);
    p_u(p, (uint32_t)y, 4);
    p_str(p, label);
    p_u(p, (uint32_t)flag, 4);
    p_u(p, code, 2);
    p_u(p, (uint64_t)tail, 8);
    j(js, "\"Id\":%u,\"Point\":{\"X\":%d,\"Y\":%d,\"Label\":", i, x, y);
    j_str(js, label);
    j(js, ",\"Inner\":{\"Flag\":");
    j_bool(js, flag);
    j(js, ",\"Code\":%u}},\"Tail\":%lld", code, (long long)tail);
}

static void arrays(uint32_t i, pbuf *p, jbuf *js) {
    uint32_t n = i % 6; /* 0..5 elements, empty arrays included */
    p_u(p, n * 3, 2);
    j(js, "\"Bytes\":\"");
    for (uint32_t k = 0; k < n * 3; k++) {
        uint8_t v = (uint8_t)(i * 13 + k * 29);
        p_u(p, v, 1);
        j(js, "%02x", v);
    }
    j(js, "\",\"Shorts\":[");
    p_u(p, n, 2);
    for (uint32_t k = 0; k < n; k++) {
        int16_t v = (int16_t)(k % 2 ? -(int32_t)(i + k) : (int32_t)(i * k));
        p_u(p, (uint16_t)v, 2);
        j(js, "%s%d", k ? "," : "", v);
    }
    j(js, "],\"Ints\":[");
    p_u(p, n + 1, 2);
    for (uint32_t k = 0; k <= n; k++) {
        uint32_t v = 4000000000u + i + k;
        p_u(p, v, 4);
        j(js, "%s%lu", k ? "," : "", (unsigned long)v);
    }
    j(js, "],\"Longs\":[");
    p_u(p, n, 2);
    for (uint32_t k = 0; k < n; k++) {
        int64_t v = (int64_t)(k % 2 ? INT64_MIN + (int64_t)i : (int64_t)i * 1000000007 * (int64_t)(k + 1));
        p_u(p, (uint64_t)v, 8);
        j(js, "%s%lld", k ? "," : "", (long long)v);
    }
    j(js, "],\"Doubles\":[");
    p_u(p, n, 2);
    for (uint32_t k = 0; k < n; k++) {
        double v = (double)i / 8.0 - (double)k * 1.5;
        p_f64(p, v);
        j(js, "%s%.17g", k ? "," : "", v);
    }
    j(js, "],\"Guids\":[");
    p_u(p, n % 3, 2);
    for (uint32_t k = 0; k < n % 3; k++) {
        mantra_guid g = guid_for(i * 10 + k);
        p_guid(p, &g);
        j(js, "%s", k ? "," : "");
        j_guid(js, &g);
    }
    j(js, "],\"Flags\":[");
    p_u(p, n, 2);
    for (uint32_t k = 0; k < n; k++) {
        int v = (i + k) % 2;
        p_u(p, (uint32_t)v, 4);
        j(js, "%s", k ? "," : "");
        j_bool(js, v);
    }
    j(js, "],\"Items\":[");
    p_u(p, n, 2);
    for (uint32_t k = 0; k < n; k++) {
        int32_t key = (int32_t)(k * 100) - (int32_t)i;
        double value = (double)k + 0.5;
        p_u(p, (uint32_t)key, 4);
        p_f64(p, value);
        j(js, "%s{\"Key\":%d,\"Value\":%.17g}", k ? "," : "", key, value);
    }
    uint16_t after = (uint16_t)(0xA000 + i);
    p_u(p, after, 2);
    j(js, "],\"After\":%u", after);
}

static void mixed(uint32_t i, pbuf *p, jbuf *js) {
    const char *name = STRINGS[(i + 4) % N_STRINGS], *tag = STRINGS[(i + 1) % N_STRINGS];
    uint32_t n = i % 4;
    p_str(p, name);
    p_str(p, tag);
    p_u(p, n, 2);
    j(js, "\"Name\":");
    j_str(js, name);
    j(js, ",\"Wrapper\":{\"Tag\":");
    j_str(js, tag);
    j(js, ",\"Values\":[");
    for (uint32_t k = 0; k < n; k++) {
        int32_t v = -(int32_t)(i * 31 + k);
        p_u(p, (uint32_t)v, 4);
        j(js, "%s%d", k ? "," : "", v);
    }
    uint8_t last = (uint8_t)i;
    p_u(p, last, 1);
    j(js, "]},\"Last\":%u", last);
}

/* Stacks: 4 shapes per thread, two shared across threads, and none every 4th event. */
static uint32_t stack_for(uint32_t i, uint64_t tid, uint64_t *ips) {
    uint32_t shape = (i / 3) % 5;
    if (shape == 4)
        return 0;
    uint32_t n = shape + 1;
    for (uint32_t k = 0; k < n; k++)
        ips[k] = UINT64_C(0x7ff000001000) + (shape < 2 ? 0 : tid << 20) + k * 0x40 + shape * 0x8;
    return n;
}

static void write_alltypes(const char *trace_path, const char *jsonl_path) {
    mantra_sink *sink;
    ck_assert_int_eq(mantra_sink_open_file(&sink, trace_path), 0);
    mantra_nettrace_options o;
    mantra_nettrace_options_init(&o);
    o.sync_time_unix_ms = INT64_C(1709214330123); /* 2024-02-29T13:45:30.123Z */
    o.sync_time_ticks = 10000000;
    o.ticks_per_second = 1000000000u;
    o.pointer_size = 8;
    o.process_id = 4242;
    o.processor_count = 8;
    o.block_bytes = 4096;            /* many blocks */
    o.sequence_point_bytes = 65536;  /* several automatic sequence points */
    mantra_nettrace_writer *w;
    ck_assert_int_eq(mantra_nettrace_writer_new(&w, sink, &o), 0);
    define_events(w);
    FILE *jf = fopen(jsonl_path, "wb");
    ck_assert_ptr_nonnull(jf);
    static const uint64_t tids[3] = {1001, 1002, 1003};
    uint32_t seq[3] = {0, 0, 0};
    jbuf js = {NULL, 0, 0};
    for (uint32_t i = 0; i < N_EVENTS; i++) {
        uint32_t t = (i * 7 / 3) % 3; /* threads interleave irregularly */
        def *d;
        switch (i % 5) {
        case 0: d = &D_SCALARS; break;
        case 1: d = &D_NESTED; break;
        case 2: d = &D_ARRAYS; break;
        case 3: d = &D_MIXED; break;
        default: d = i % 10 == 4 ? &D_EMPTY : &D_SCALARS; break;
        }
        pbuf p;
        p.n = 0;
        js.n = 0;
        uint64_t ts = 10000000u + (uint64_t)i * 1000u + i % 7;
        uint64_t ips[8];
        uint32_t frames = stack_for(i, tids[t], ips);
        j(&js, "{\"timestamp\":%llu,\"provider\":\"%s\",\"event_id\":%u,\"version\":%u,\"name\":\"%s\","
               "\"thread_id\":%llu,\"sequence\":%u,\"fields\":{",
          (unsigned long long)ts, PROVIDER, d->id, d->version, d->name, (unsigned long long)tids[t], ++seq[t]);
        if (d == &D_SCALARS)
            scalars(i, &p, &js);
        else if (d == &D_NESTED)
            nested(i, &p, &js);
        else if (d == &D_ARRAYS)
            arrays(i, &p, &js);
        else if (d == &D_MIXED)
            mixed(i, &p, &js);
        j(&js, "},\"stack\":[");
        for (uint32_t k = 0; k < frames; k++)
            j(&js, "%s\"0x%llx\"", k ? "," : "", (unsigned long long)ips[k]);
        j(&js, "]}\n");
        mantra_nettrace_event ev = {.key = d->key, .timestamp = ts, .thread_id = tids[t],
                                    .processor_number = t, .stack = ips, .stack_frames = frames};
        ck_assert_int_eq(mantra_nettrace_write(w, &ev, p.d, p.n), 0);
        ck_assert_uint_eq(fwrite(js.s, 1, js.n, jf), js.n);
        if (i == N_EVENTS / 2)
            ck_assert_int_eq(mantra_nettrace_sequence_point(w), 0); /* an explicit one too */
    }
    free(js.s);
    ck_assert_int_eq(fclose(jf), 0);
    ck_assert_int_eq(mantra_nettrace_finish(w), 0);
    mantra_nettrace_stats st;
    mantra_nettrace_get_stats(w, &st);
    ck_assert_uint_eq(st.events, N_EVENTS);
    ck_assert_uint_eq(st.metadata, 5);
    ck_assert_uint_eq(st.threads, 3);
    ck_assert_uint_ge(st.event_blocks, 30);
    ck_assert_uint_ge(st.sequence_points, 4);
    printf("%s: %llu bytes, %llu events, %llu event blocks, %llu stack entries, %llu sequence points\n", trace_path,
           (unsigned long long)st.bytes, (unsigned long long)st.events, (unsigned long long)st.event_blocks,
           (unsigned long long)st.stacks, (unsigned long long)st.sequence_points);
    mantra_nettrace_writer_free(w);
    ck_assert_int_eq(mantra_sink_close(sink), 0);
    mantra_sink_free(sink);
}

/* Re-reads the trace with the independent walker: structure, counts and per-thread sequences. */
static void check_alltypes(const char *trace_path) {
    FILE *f = fopen(trace_path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *d = malloc(n);
    ck_assert_uint_eq(fread(d, 1, n, f), n);
    fclose(f);
    tw_trace t = tw_walk(d, n, 0);
    ck_assert_ptr_null(t.error);
    ck_assert(t.end_tag);
    uint32_t events = 0;
    uint64_t last_ts = 0;
    for (size_t b = 0; b < t.count; b++) {
        if (strcmp(t.blocks[b].name, "EventBlock") != 0)
            continue;
        const uint8_t *c = d + t.blocks[b].content_offset;
        tw_row r;
        memset(&r, 0, sizeof r);
        size_t pos = 20;
        while (pos < t.blocks[b].size) {
            ck_assert_int_eq(tw_next_row(c, t.blocks[b].size, &pos, &r), 0);
            ck_assert(r.sorted);
            ck_assert_uint_gt(r.timestamp, last_ts);
            ck_assert_uint_ne(r.stack_id, 0);
            last_ts = r.timestamp;
            events++;
        }
    }
    ck_assert_uint_eq(events, N_EVENTS);
    free(t.blocks);
    free(d);
}

START_TEST(alltypes) {
    char trace[4096], jsonl[4096];
    mkdir(g_outdir, 0777);
    snprintf(trace, sizeof trace, "%s/alltypes.nettrace", g_outdir);
    snprintf(jsonl, sizeof jsonl, "%s/alltypes.expected.jsonl", g_outdir);
    write_alltypes(trace, jsonl);
    check_alltypes(trace);
}
END_TEST

int main(int argc, char **argv) {
    static char dir[4096];
    if (argc > 1) {
        g_outdir = argv[1];
    } else {
        const char *b = getenv("MANTRA_BINARY_DIR");
        snprintf(dir, sizeof dir, "%s/format", b ? b : ".");
        g_outdir = dir;
    }
    Suite *s = suite_create("write_sample_traces");
    TCase *tc = tcase_create("samples");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, alltypes);
    suite_add_tcase(s, tc);
    return run_suite(s, CK_NOFORK);
}
