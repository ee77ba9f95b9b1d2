/* mantra_reader_add_provider_manifest: an event of a registered provider whose description is
 * partial (MANTRA_EVENT_PARTIAL_METADATA: JitInstrumentationDataVerbose, 298, whose Data is a
 * length-field binary that nettrace metadata cannot express) and whose trace metadata is empty, as
 * the .NET runtime writes it. With the registry alone the payload is reported as having bytes after
 * the last field and Data is not decoded (the bug `mantra stats/dump` showed on real .NET traces);
 * with the manifest the registry was generated from, every field decodes. */
#include <check.h>
#include <string.h>

#include "check_main.h"
#include "dotnet_registry.h"
#include "mantra/decode.h"
#include "mantra/manifest.h"
#include "mantra/metadata.h"
#include "mantra/nettrace_writer.h"
#include "mantra/reader.h"
#include "mantra/sink.h"

/* A trace with one event 298 (empty metadata) carrying an 8-byte Data. */
static const uint8_t *make_trace(mantra_sink **sink, size_t *size) {
    mantra_nettrace_writer *w;
    mantra_metadata_builder *b;
    ck_assert_int_eq(mantra_sink_open_memory(sink, 0), 0);
    ck_assert_int_eq(mantra_nettrace_writer_new(&w, *sink, NULL), 0);
    ck_assert_int_eq(mantra_metadata_builder_new(&b), 0);
    const uint8_t *blob;
    size_t n;
    ck_assert_int_eq(mantra_metadata_begin(b, 298, "", 0, 0, 0, 0), 0);
    ck_assert_int_eq(mantra_metadata_finish(b, &blob, &n), 0);
    mantra_nettrace_event_key key;
    ck_assert_int_eq(mantra_nettrace_add_event_raw(w, "Microsoft-Windows-DotNETRuntime", blob, n, &key), 0);
    uint16_t clr = 0;
    uint32_t flags = 0x80000000u, data_size = 8, token = 0x06000001;
    uint64_t method = 0xA, module = 0x1000;
    static const uint8_t data[8] = {0x0c, 0x80, 0x82, 0x02, 0x0a, 0x04, 0xbf, 0x7f};
    mantra_data d[] = {{&clr, 2, MANTRA_DATA_BYTES},    {&flags, 4, MANTRA_DATA_BYTES},
                       {&data_size, 4, MANTRA_DATA_BYTES}, {&method, 8, MANTRA_DATA_BYTES},
                       {&module, 8, MANTRA_DATA_BYTES}, {&token, 4, MANTRA_DATA_BYTES},
                       {"Ns.C", 0, MANTRA_DATA_UTF8_AS_UTF16Z}, {"A", 0, MANTRA_DATA_UTF8_AS_UTF16Z},
                       {"void ()", 0, MANTRA_DATA_UTF8_AS_UTF16Z}, {data, 8, MANTRA_DATA_BYTES}};
    mantra_nettrace_event ev;
    memset(&ev, 0, sizeof ev);
    ev.key = key;
    ev.timestamp = 1;
    ev.thread_id = 1;
    ev.processor_number = 0xFFFFFFFFu;
    ck_assert_int_eq(mantra_nettrace_write_data(w, &ev, d, 10), 0);
    ck_assert_int_eq(mantra_nettrace_finish(w), 0);
    mantra_nettrace_writer_free(w);
    mantra_metadata_builder_free(b);
    return mantra_sink_memory(*sink, size);
}

static const mantra_trace_event *read_298(mantra_reader *r, const uint8_t *bytes, size_t size) {
    for (size_t i = 0; i < MANTRA_DOTNET_PROVIDER_COUNT; i++)
        ck_assert_int_eq(mantra_reader_add_provider(r, mantra_dotnet_providers[i]), 0);
    ck_assert_int_eq(mantra_reader_open_memory(r, bytes, size), 0);
    const mantra_trace_event *ev;
    ck_assert_int_eq(mantra_reader_next(r, &ev), 1);
    ck_assert_uint_eq(ev->metadata->event_id, 298);
    return ev;
}

START_TEST(registry_alone_is_partial) {
    mantra_sink *sink;
    size_t size;
    const uint8_t *bytes = make_trace(&sink, &size);
    mantra_reader *r = mantra_reader_new(NULL);
    const mantra_trace_event *ev = read_298(r, bytes, size);
    ck_assert_int_eq(ev->metadata->fields_from_registry, 1);
    ck_assert_uint_eq(ev->metadata->field_count, 9); /* up to MethodSignature */
    ck_assert_int_eq(ev->decode_status, MANTRA_DECODE_TRAILING);
    /* the trace's metadata has no name: the registered description's */
    ck_assert_str_eq(ev->metadata->name, "JitInstrumentationDataVerbose");
    mantra_reader_free(r);
    mantra_sink_free(sink);
}
END_TEST

/* The built-in runtime providers (manifest/clr/runtime.yaml) alone: 298 decodes whole, named, with
 * its task and opcode display names. */
START_TEST(builtin_clr_decodes_298_whole) {
    if (!mantra_manifest_supported())
        return;
    mantra_manifest *m = mantra_manifest_load_file("manifest/clr/runtime.yaml", NULL);
    ck_assert_ptr_nonnull(m);
    mantra_sink *sink;
    size_t size;
    const uint8_t *bytes = make_trace(&sink, &size);
    mantra_reader *r = mantra_reader_new(NULL);
    ck_assert_int_eq(mantra_reader_add_manifest(r, m), 0);
    ck_assert_int_eq(mantra_reader_open_memory(r, bytes, size), 0);
    const mantra_trace_event *ev;
    ck_assert_int_eq(mantra_reader_next(r, &ev), 1);
    ck_assert_int_eq(ev->metadata->fields_from_manifest, 1);
    ck_assert_uint_eq(ev->metadata->field_count, 10);
    ck_assert_str_eq(ev->metadata->fields[9].name, "Data");
    ck_assert_int_eq(ev->decode_status, MANTRA_DECODE_OK);
    ck_assert_str_eq(ev->metadata->name, "JitInstrumentationDataVerbose");
    ck_assert_str_eq(ev->metadata->task_name, "JitInstrumentationData");
    ck_assert_str_eq(ev->metadata->opcode_name, "InstrumentationData"); /* the opcode's message */
    mantra_reader_free(r);
    mantra_sink_free(sink);
    mantra_manifest_free(m);
}
END_TEST

START_TEST(provider_manifest_completes_it) {
    if (!mantra_manifest_supported())
        return;
    mantra_manifest *m = mantra_manifest_load_file("manifest/dotnet.yaml", NULL);
    ck_assert_ptr_nonnull(m);
    mantra_sink *sink;
    size_t size;
    const uint8_t *bytes = make_trace(&sink, &size);
    mantra_reader *r = mantra_reader_new(NULL);
    ck_assert_int_eq(mantra_reader_add_provider_manifest(r, m), 0);
    const mantra_trace_event *ev = read_298(r, bytes, size);
    ck_assert_int_eq(ev->metadata->fields_from_manifest, 1);
    ck_assert_int_eq(ev->metadata->fields_from_registry, 0);
    ck_assert_uint_eq(ev->metadata->field_count, 10);
    ck_assert_str_eq(ev->metadata->fields[9].name, "Data");
    ck_assert_int_eq(ev->decode_status, MANTRA_DECODE_OK);
    ck_assert_int_eq(mantra_reader_add_provider_manifest(NULL, m), MANTRA_EINVAL);
    mantra_reader_free(r);
    mantra_sink_free(sink);
    mantra_manifest_free(m);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("reader_provider_manifest");
    TCase *tc = tcase_create("provider_manifest");
    tcase_add_test(tc, registry_alone_is_partial);
    tcase_add_test(tc, builtin_clr_decodes_298_whole);
    tcase_add_test(tc, provider_manifest_completes_it);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
