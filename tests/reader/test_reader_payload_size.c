/* Payload sizes against the trace's own metadata, and names from a manifest.
 *
 *   payload_size_checked  events whose trace metadata describes their fields: a payload shorter or
 *                         longer than the description is a decode error (decode_status, counted in
 *                         decode_errors), never a silent misread: the .NET 10 runtime describes a
 *                         TraceLogging bool as 4 bytes (Boolean) and writes 1. Fixed-size and
 *                         variable-size descriptions.
 *   names_from_manifest   metadata without a name takes the manifest event's name and the task and
 *                         opcode display names (a task `message`, a win: opcode); a name in the
 *                         trace wins; a metadata field list that stops before a field nettrace
 *                         could have described is whole (the trace wins over the manifest).
 */
#include <check.h>
#include <string.h>

#include "check_main.h"
#include "mantra/decode.h"
#include "mantra/manifest.h"
#include "mantra/nettrace_writer.h"
#include "mantra/reader.h"
#include "mantra/sink.h"

typedef struct fdef {
    uint32_t type;
    const char *name;
} fdef;

static size_t put_u16s(uint8_t *b, const char *s) {
    size_t n = 0;
    for (; *s; s++)
        b[n++] = (uint8_t)*s, b[n++] = 0;
    b[n++] = 0, b[n++] = 0;
    return n;
}

/* A V5 metadata blob from EventId on (microsoft/perfview NetTraceFormat.md "Metadata event
 * encoding"): id, UTF-16 name, keywords, version, level, field count, fields (type code, name). */
static size_t blob(uint8_t *b, uint32_t id, const char *name, const fdef *f, uint32_t nf) {
    size_t n = 0;
    memcpy(b + n, &id, 4), n += 4;
    n += put_u16s(b + n, name);
    uint64_t kw = 0;
    memcpy(b + n, &kw, 8), n += 8;
    uint32_t v = 0, level = 4;
    memcpy(b + n, &v, 4), n += 4;
    memcpy(b + n, &level, 4), n += 4;
    memcpy(b + n, &nf, 4), n += 4;
    for (uint32_t i = 0; i < nf; i++) {
        memcpy(b + n, &f[i].type, 4), n += 4;
        n += put_u16s(b + n, f[i].name);
    }
    return n;
}

typedef struct trace {
    mantra_sink *sink;
    mantra_nettrace_writer *w;
    mantra_nettrace_event ev;
    uint64_t t;
} trace;

static void trace_begin(trace *t) {
    memset(t, 0, sizeof *t);
    ck_assert_int_eq(mantra_sink_open_memory(&t->sink, 0), 0);
    mantra_nettrace_options o;
    mantra_nettrace_options_init(&o);
    o.pointer_size = 8;
    ck_assert_int_eq(mantra_nettrace_writer_new(&t->w, t->sink, &o), 0);
    t->ev.thread_id = 1;
}

static void trace_event(trace *t, mantra_nettrace_event_key key, const void *payload, size_t size) {
    t->ev.key = key;
    t->ev.timestamp = 100 + t->t++;
    ck_assert_int_eq(mantra_nettrace_write(t->w, &t->ev, payload, size), 0);
}

static mantra_reader *trace_read(trace *t, const mantra_manifest *m) {
    ck_assert_int_eq(mantra_nettrace_finish(t->w), 0);
    size_t len;
    const uint8_t *data = mantra_sink_memory(t->sink, &len);
    mantra_reader *r = mantra_reader_new(NULL);
    if (m)
        ck_assert_int_eq(mantra_reader_add_manifest(r, m), 0);
    ck_assert_int_eq(mantra_reader_open_memory(r, data, len), 0);
    return r;
}

static void trace_end(trace *t, mantra_reader *r) {
    const mantra_trace_event *e;
    ck_assert_int_eq(mantra_reader_next(r, &e), 0);
    mantra_reader_free(r);
    mantra_nettrace_writer_free(t->w);
    mantra_sink_free(t->sink);
}

START_TEST(payload_size_checked) {
    trace t;
    trace_begin(&t);
    uint8_t b[256];
    /* fixed size: a Boolean (4 bytes) and a UInt32 */
    static const fdef fixed[] = {{MANTRA_TYPE_BOOLEAN, "Flag"}, {MANTRA_TYPE_UINT32, "Count"}};
    /* variable size: a String and an Int32 */
    static const fdef var[] = {{MANTRA_TYPE_STRING, "Text"}, {MANTRA_TYPE_INT32, "N"}};
    mantra_nettrace_event_key kf, kv;
    ck_assert_int_eq(mantra_nettrace_add_event_raw(t.w, "TL-Provider", b, blob(b, 1, "Fixed", fixed, 2), &kf), 0);
    ck_assert_int_eq(mantra_nettrace_add_event_raw(t.w, "TL-Provider", b, blob(b, 2, "Var", var, 2), &kv), 0);
    static const uint8_t whole[8] = {1, 0, 0, 0, 7, 0, 0, 0};
    static const uint8_t one_byte_bool[5] = {1, 7, 0, 0, 0}; /* what .NET 10 writes for a TraceLogging bool */
    static const uint8_t longer[10] = {1, 0, 0, 0, 7, 0, 0, 0, 0xAB, 0xCD};
    static const uint8_t text_ok[10] = {'h', 0, 'i', 0, 0, 0, 5, 0, 0, 0};
    static const uint8_t text_short[8] = {'h', 0, 'i', 0, 0, 0, 5, 0};
    static const uint8_t text_long[11] = {'h', 0, 'i', 0, 0, 0, 5, 0, 0, 0, 9};
    trace_event(&t, kf, whole, sizeof whole);
    trace_event(&t, kf, one_byte_bool, sizeof one_byte_bool);
    trace_event(&t, kf, longer, sizeof longer);
    trace_event(&t, kv, text_ok, sizeof text_ok);
    trace_event(&t, kv, text_short, sizeof text_short);
    trace_event(&t, kv, text_long, sizeof text_long);
    mantra_reader *r = trace_read(&t, NULL);
    static const int want[] = {MANTRA_DECODE_OK,    MANTRA_DECODE_SHORT, MANTRA_DECODE_TRAILING,
                               MANTRA_DECODE_OK,    MANTRA_DECODE_SHORT, MANTRA_DECODE_TRAILING};
    static const int want_rc[] = {0, MANTRA_EFORMAT, 1, 0, MANTRA_EFORMAT, 1};
    for (int i = 0; i < 6; i++) {
        const mantra_trace_event *e;
        ck_assert_int_eq(mantra_reader_next(r, &e), 1);
        ck_assert_msg(e->decode_status == want[i], "event %d: status %d, want %d", i, e->decode_status, want[i]);
        ck_assert_int_eq(mantra_decode_event(e, NULL, NULL), want_rc[i]);
        ck_assert_uint_eq(e->metadata->fixed_payload_size, i < 3 ? 8 : 0);
        ck_assert_int_eq(e->metadata->fields_from_manifest, 0);
    }
    ck_assert_uint_eq(mantra_reader_get_stats(r)->decode_errors, 4);
    ck_assert_uint_eq(mantra_reader_get_stats(r)->events, 6);
    trace_end(&t, r);
}
END_TEST

static const char yaml[] = "providers:\n"
                           "  - name: Named-Provider\n"
                           "    tasks:\n"
                           "      - {name: GarbageCollection, value: 1, message: GC}\n"
                           "      - name: Loader\n"
                           "        value: 2\n"
                           "        opcodes:\n"
                           "          - {name: LoaderStep, value: 11, message: Step}\n"
                           "    events:\n"
                           "      - {name: GCStart, id: 1, task: GarbageCollection, opcode: \"win:Start\","
                           " fields: [{name: Count, type: UInt32}]}\n"
                           "      - {name: Step, id: 2, task: Loader, opcode: LoaderStep}\n"
                           "      - {name: Plain, id: 3}\n"
                           "      - name: ProcessInfo\n"
                           "        id: 4\n"
                           "        fields:\n"
                           "          - {name: CommandLine, type: UnicodeString}\n"
                           "          - {name: OSInformation, type: UnicodeString}\n";

START_TEST(names_from_manifest) {
    mantra_manifest_error *err = NULL;
    mantra_manifest *m = mantra_manifest_load_memory(yaml, sizeof yaml - 1, "names.yaml", &err);
    if (m == NULL && !mantra_manifest_supported()) {
        mantra_manifest_error_free(err);
        return; /* built without libyaml */
    }
    ck_assert_msg(m != NULL, "manifest did not load");
    const mantra_manifest_event *me = mantra_manifest_find_event(mantra_manifest_find_provider(m, "Named-Provider"), 2, 0);
    ck_assert_str_eq(me->task_name, "Loader");
    ck_assert_str_eq(me->task_message, "Loader"); /* no message: the name */
    ck_assert_str_eq(me->opcode_name, "LoaderStep");
    ck_assert_str_eq(me->opcode_message, "Step");

    trace t;
    trace_begin(&t);
    uint8_t b[256];
    static const fdef cmd[] = {{MANTRA_TYPE_STRING, "CommandLine"}};
    mantra_nettrace_event_key k1, k1named, k2, k3, k4, k9;
    ck_assert_int_eq(mantra_nettrace_add_event_raw(t.w, "Named-Provider", b, blob(b, 1, "", NULL, 0), &k1), 0);
    ck_assert_int_eq(mantra_nettrace_add_event_raw(t.w, "Named-Provider", b, blob(b, 1, "MyStart", NULL, 0), &k1named), 0);
    ck_assert_int_eq(mantra_nettrace_add_event_raw(t.w, "Named-Provider", b, blob(b, 2, "", NULL, 0), &k2), 0);
    ck_assert_int_eq(mantra_nettrace_add_event_raw(t.w, "Named-Provider", b, blob(b, 3, "", NULL, 0), &k3), 0);
    ck_assert_int_eq(mantra_nettrace_add_event_raw(t.w, "Named-Provider", b, blob(b, 4, "", cmd, 1), &k4), 0);
    ck_assert_int_eq(mantra_nettrace_add_event_raw(t.w, "Named-Provider", b, blob(b, 9, "", NULL, 0), &k9), 0);
    static const uint8_t count[4] = {3, 0, 0, 0};
    static const uint8_t cmdline[4] = {'x', 0, 0, 0};
    trace_event(&t, k1, count, sizeof count);
    trace_event(&t, k1named, count, sizeof count);
    trace_event(&t, k2, NULL, 0);
    trace_event(&t, k3, NULL, 0);
    trace_event(&t, k4, cmdline, sizeof cmdline);
    trace_event(&t, k9, NULL, 0);
    mantra_reader *r = trace_read(&t, m);
    static const char *const name[] = {"GCStart", "MyStart", "Step", "Plain", "ProcessInfo", ""};
    static const char *const task[] = {"GC", "GC", "Loader", NULL, NULL, NULL};
    static const char *const opcode[] = {"Start", "Start", "Step", NULL, NULL, NULL};
    static const int from_manifest[] = {1, 1, 1, 1, 0, 0};
    for (int i = 0; i < 6; i++) {
        const mantra_trace_event *e;
        ck_assert_int_eq(mantra_reader_next(r, &e), 1);
        ck_assert_str_eq(e->metadata->name, name[i]);
        if (task[i])
            ck_assert_str_eq(e->metadata->task_name, task[i]);
        else
            ck_assert_ptr_null(e->metadata->task_name);
        if (opcode[i])
            ck_assert_str_eq(e->metadata->opcode_name, opcode[i]);
        else
            ck_assert_ptr_null(e->metadata->opcode_name);
        ck_assert_int_eq(e->metadata->fields_from_manifest, from_manifest[i]);
        ck_assert_int_eq(e->decode_status, MANTRA_DECODE_OK);
    }
    /* ProcessInfo: the trace's one field wins (OSInformation, a string, could have been described) */
    ck_assert_uint_eq(mantra_reader_get_stats(r)->decode_errors, 0);
    ck_assert_uint_eq(mantra_reader_get_stats(r)->manifest_events, 4);
    trace_end(&t, r);
    mantra_manifest_free(m);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("reader_payload_size");
    TCase *tc = tcase_create("payload_size");
    tcase_add_test(tc, payload_size_checked);
    tcase_add_test(tc, names_from_manifest);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
