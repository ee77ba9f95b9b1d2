/* The reader with manifests loaded at run time (mantra_reader_add_manifest): a synthetic trace whose
 * metadata has no fields (as the .NET runtime writes its own providers' events) is decoded with the
 * manifest's template; payloads that do not fit (too short, trailing bytes) are reported per event
 * (decode_status) and counted (decode_errors) while reading goes on; metadata with fields wins. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "mantra/decode.h"
#include "mantra/manifest.h"
#include "mantra/nettrace_writer.h"
#include "mantra/reader.h"
#include "mantra/sink.h"

static const char yaml[] = "providers:\n"
                           "  - name: Demo-Provider\n"
                           "    maps:\n"
                           "      - {name: Kind, kind: value, entries: [{value: 1, message: Jitted}, {value: 2, message: Dynamic}]}\n"
                           "    events:\n"
                           "      - name: Thing\n"
                           "        id: 7\n"
                           "        fields:\n"
                           "          - {name: Id, type: UInt32}\n"
                           "          - {name: Kind, type: UInt8, map: Kind}\n"
                           "          - {name: N, type: UInt16}\n"
                           "          - {name: Values, type: UInt16, count: N}\n"
                           "          - {name: Text, type: UnicodeString}\n";

/* V5 metadata blob from EventId on: id, UTF-16 name "", keywords, version, level, field count. */
static size_t blob(uint8_t *b, uint32_t id, uint32_t nfields_marker) {
    size_t n = 0;
    memcpy(b + n, &id, 4), n += 4;
    b[n++] = 0, b[n++] = 0;
    uint64_t kw = 0;
    memcpy(b + n, &kw, 8), n += 8;
    uint32_t v = 0, level = 4;
    memcpy(b + n, &v, 4), n += 4;
    memcpy(b + n, &level, 4), n += 4;
    memcpy(b + n, &nfields_marker, 4), n += 4;
    return n;
}

static size_t payload(uint8_t *p, uint32_t id, uint8_t kind) {
    size_t n = 0;
    memcpy(p + n, &id, 4), n += 4;
    p[n++] = kind;
    uint16_t count = 2, a = 10, b = 20;
    memcpy(p + n, &count, 2), n += 2;
    memcpy(p + n, &a, 2), n += 2;
    memcpy(p + n, &b, 2), n += 2;
    p[n++] = 'h', p[n++] = 0, p[n++] = 'i', p[n++] = 0, p[n++] = 0, p[n++] = 0;
    return n;
}

typedef struct rec {
    char text[1024];
} rec;

static int on_scalar(void *ctx, const mantra_value *v) {
    rec *r = ctx;
    char buf[128];
    if (v->type == MANTRA_TYPE_STRING)
        snprintf(buf, sizeof buf, "%s=\"%.*s\";", v->name, (int)v->count, "hi");
    else
        snprintf(buf, sizeof buf, "%s=%llu%s%s;", v->name, (unsigned long long)v->u, v->map_text ? "/" : "",
                 v->map_text ? v->map_text : "");
    strncat(r->text, buf, sizeof r->text - strlen(r->text) - 1);
    return 0;
}
static int on_begin_array(void *ctx, const mantra_value *v) {
    rec *r = ctx;
    char buf[64];
    snprintf(buf, sizeof buf, "%s[%zu:", v->name, v->count);
    strncat(r->text, buf, sizeof r->text - strlen(r->text) - 1);
    return 0;
}
static int on_end_array(void *ctx, const mantra_value *v) {
    (void)v;
    rec *r = ctx;
    strncat(r->text, "];", sizeof r->text - strlen(r->text) - 1);
    return 0;
}

START_TEST(manifest_decoding_and_mismatches) {
    mantra_manifest_error *err = NULL;
    mantra_manifest *m = mantra_manifest_load_memory(yaml, sizeof yaml - 1, "demo.yaml", &err);
    if (m == NULL && !mantra_manifest_supported()) {
        mantra_manifest_error_free(err);
        return; /* built without libyaml */
    }
    ck_assert_msg(m != NULL, "manifest did not load");

    mantra_sink *sink;
    mantra_nettrace_writer *w;
    ck_assert_int_eq(mantra_sink_open_memory(&sink, 0), 0);
    mantra_nettrace_options o;
    mantra_nettrace_options_init(&o);
    o.pointer_size = 8;
    ck_assert_int_eq(mantra_nettrace_writer_new(&w, sink, &o), 0);
    uint8_t b[64];
    mantra_nettrace_event_key key, other;
    ck_assert_int_eq(mantra_nettrace_add_event_raw(w, "Demo-Provider", b, blob(b, 7, 0), &key), 0);
    ck_assert_int_eq(mantra_nettrace_add_event_raw(w, "Demo-Provider", b, blob(b, 8, 0), &other), 0);
    uint8_t p[64];
    size_t n = payload(p, 42, 2);
    mantra_nettrace_event ev;
    memset(&ev, 0, sizeof ev);
    ev.key = key;
    ev.thread_id = 1;
    ev.processor_number = 0;
    for (int i = 0; i < 4; i++) {
        ev.timestamp = (uint64_t)(100 + i);
        size_t size = i == 1 ? 6 : n; /* event 1 ends inside N */
        uint8_t q[80];
        memcpy(q, p, n);
        if (i == 2) { /* trailing bytes */
            q[n] = 0xAB;
            q[n + 1] = 0xCD;
            size = n + 2;
        }
        if (i == 3)
            ev.key = other; /* not in the manifest */
        ck_assert_int_eq(mantra_nettrace_write(w, &ev, q, size), 0);
    }
    ck_assert_int_eq(mantra_nettrace_finish(w), 0);
    size_t len;
    const uint8_t *data = mantra_sink_memory(sink, &len);

    mantra_reader *r = mantra_reader_new(NULL);
    ck_assert_int_eq(mantra_reader_add_manifest(r, m), 0);
    ck_assert_int_eq(mantra_reader_add_manifest(r, NULL), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_reader_open_memory(r, data, len), 0);
    const mantra_trace_event *e;
    static const int want_status[] = {MANTRA_DECODE_OK, MANTRA_DECODE_SHORT, MANTRA_DECODE_TRAILING, MANTRA_DECODE_OK};
    static const char *const want_text[] = {
        "Id=42;Kind=2/Dynamic;N=2;Values[2:=10;=20;];Text=\"hi\";",
        "Id=42;Kind=2/Dynamic;",
        "Id=42;Kind=2/Dynamic;N=2;Values[2:=10;=20;];Text=\"hi\";",
        ""};
    static const int want_rc[] = {0, MANTRA_EFORMAT, 1, 1};
    static const mantra_field_visitor vis = {on_scalar, NULL, NULL, on_begin_array, on_end_array};
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(mantra_reader_next(r, &e), 1);
        ck_assert_int_eq(e->decode_status, want_status[i]);
        ck_assert_int_eq(e->metadata->fields_from_manifest, i < 3);
        rec rc;
        memset(&rc, 0, sizeof rc);
        ck_assert_int_eq(mantra_decode_event(e, &vis, &rc), want_rc[i]);
        ck_assert_str_eq(rc.text, want_text[i]);
        if (i < 3) {
            ck_assert_ptr_nonnull(e->metadata->manifest_event);
            ck_assert_str_eq(e->metadata->manifest_event->name, "Thing");
            ck_assert_uint_eq(e->metadata->field_count, 5);
            ck_assert_str_eq(e->metadata->fields[3].name, "Values");
            ck_assert_uint_eq(e->metadata->fields[3].type, MANTRA_TYPE_ARRAY);
            ck_assert_uint_eq(e->metadata->fields[3].element->type, MANTRA_TYPE_UINT16);
            ck_assert_uint_eq(e->metadata->fields[4].type, MANTRA_TYPE_STRING);
        } else {
            ck_assert_uint_eq(e->metadata->field_count, 0);
        }
    }
    ck_assert_int_eq(mantra_reader_next(r, &e), 0);
    const mantra_reader_stats *s = mantra_reader_get_stats(r);
    ck_assert_uint_eq(s->events, 4);
    ck_assert_uint_eq(s->decode_errors, 2);
    ck_assert_uint_eq(s->manifest_events, 3);
    mantra_reader_free(r);

    /* without the manifest: no fields, nothing checked */
    r = mantra_reader_new(NULL);
    ck_assert_int_eq(mantra_reader_open_memory(r, data, len), 0);
    while (mantra_reader_next(r, &e) > 0) {
        ck_assert_int_eq(e->decode_status, 0);
        ck_assert_uint_eq(e->metadata->field_count, 0);
    }
    ck_assert_uint_eq(mantra_reader_get_stats(r)->decode_errors, 0);
    mantra_reader_free(r);

    mantra_nettrace_writer_free(w);
    mantra_sink_free(sink);
    mantra_manifest_free(m);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("reader_manifest");
    TCase *tc = tcase_create("manifest");
    tcase_add_test(tc, manifest_decoding_and_mismatches);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
