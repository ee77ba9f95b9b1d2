/* Generated events (mantra::dotnet) through the nettrace writer: the metadata row payload is
 * int32 id + UTF-16 provider name + desc->metadata (dotnet/runtime, src/native/eventpipe/ep-config.c,
 * ep_config_build_event_metadata_event), payloads come from the generated
 * writers (captured with a listener), and descs without a blob get minimal metadata (dotnet/runtime,
 * src/native/eventpipe/ep-metadata-generator.c, event_build_minimum_metadata). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "dotnet_registry.h"
#include "dotnet_writers.h"
#include "format/walk.h"
#include "mantra/nettrace_writer.h"

typedef struct capture {
    mantra_nettrace_writer *w;
    uint64_t ts;
    int rc, calls;
} capture;

static void on_event(void *ctx, const mantra_event_desc *desc, const uint8_t *payload, size_t size) {
    capture *c = ctx;
    mantra_nettrace_event_key key;
    c->calls++;
    c->rc = mantra_nettrace_add_event(c->w, &mantra_DotNETRuntime_provider, desc, &key);
    if (c->rc)
        return;
    mantra_nettrace_event ev = {.key = key, .timestamp = c->ts++, .thread_id = 77};
    c->rc = mantra_nettrace_write(c->w, &ev, payload, size);
}

START_TEST(generated_writer_to_nettrace) {
    mantra_sink *s;
    ck_assert_int_eq(mantra_sink_open_memory(&s, 0), 0);
    mantra_nettrace_options o;
    mantra_nettrace_options_init(&o);
    o.sync_time_unix_ms = 0;
    capture c = {NULL, 100, 0, 0};
    ck_assert_int_eq(mantra_nettrace_writer_new(&c.w, s, &o), 0);
    ck_assert_int_eq(mantra_dotnet_register(), 0);
    mantra_set_listener(on_event, &c);
    ck_assert_int_eq(mantra_DotNETRuntime_MethodLoad_write(0x1111, 0x2222, 0x7f0000001000, 0x40, 0x06000001, 0), 0);
    ck_assert_int_eq(mantra_DotNETRuntime_MethodLoad_write(0x3333, 0x2222, 0x7f0000002000, 0x80, 0x06000002, 1), 0);
    mantra_set_listener(NULL, NULL);
    ck_assert_int_eq(c.calls, 2);
    ck_assert_int_eq(c.rc, 0);
    /* the same desc gives the same key and one metadata row */
    mantra_nettrace_event_key k1, k2;
    ck_assert_int_eq(mantra_nettrace_add_event(c.w, &mantra_DotNETRuntime_provider, &mantra_DotNETRuntime_events[0], &k1), 0);
    ck_assert_int_eq(mantra_nettrace_add_event(c.w, &mantra_DotNETRuntime_provider, &mantra_DotNETRuntime_events[0], &k2), 0);
    ck_assert_uint_eq(k1, k2);
    ck_assert_uint_eq(mantra_nettrace_metadata_id(c.w, k1), 1);

    /* a desc without a generated blob: minimal metadata */
    mantra_event_desc bare = mantra_DotNETRuntime_events[0];
    bare.metadata = NULL;
    bare.metadata_size = 0;
    mantra_nettrace_event_key kb;
    ck_assert_int_eq(mantra_nettrace_add_event(c.w, &mantra_DotNETRuntime_provider, &bare, &kb), 0);
    mantra_nettrace_event ev = {.key = kb, .timestamp = 200, .thread_id = 77};
    ck_assert_int_eq(mantra_nettrace_write(c.w, &ev, NULL, 0), 0);
    ck_assert_int_eq(mantra_nettrace_finish(c.w), 0);

    size_t n;
    const uint8_t *d = mantra_sink_memory(s, &n);
    tw_trace t = tw_walk(d, n, 0);
    ck_assert_ptr_null(t.error);
    ck_assert_uint_eq(tw_count(&t, "MetadataBlock"), 1);
    const tw_block *mb = &t.blocks[0];
    ck_assert_str_eq(mb->name, "MetadataBlock");
    const uint8_t *mc = d + mb->content_offset;
    tw_row r;
    memset(&r, 0, sizeof r);
    size_t pos = 20;
    ck_assert_int_eq(tw_next_row(mc, mb->size, &pos, &r), 0);
    const char *pname = "Microsoft-Windows-DotNETRuntime";
    size_t plen = strlen(pname);
    const mantra_event_desc *desc = &mantra_DotNETRuntime_events[0];
    ck_assert_uint_eq(r.payload_size, 4 + (plen + 1) * 2 + desc->metadata_size);
    ck_assert_uint_eq(tw_u32(r.payload), 1);
    for (size_t i = 0; i < plen; i++) {
        ck_assert_uint_eq(r.payload[4 + 2 * i], (uint8_t)pname[i]);
        ck_assert_uint_eq(r.payload[5 + 2 * i], 0);
    }
    ck_assert_mem_eq(r.payload + 4 + (plen + 1) * 2, desc->metadata, desc->metadata_size);
    /* second row: minimal metadata (id 2): the desc's EventId, "", Keywords, Version, Level,
     * FieldCount 0 */
    ck_assert_int_eq(tw_next_row(mc, mb->size, &pos, &r), 0);
    ck_assert_uint_eq(pos, mb->size);
    const uint8_t *blob = r.payload + 4 + (plen + 1) * 2;
    ck_assert_uint_eq(r.payload_size, 4 + (plen + 1) * 2 + 26);
    ck_assert_uint_eq(tw_u32(r.payload), 2);
    ck_assert_uint_eq(tw_u32(blob), desc->id);
    ck_assert_uint_eq(blob[4] | blob[5], 0);
    ck_assert_uint_eq(tw_u64(blob + 6), desc->keywords);
    ck_assert_uint_eq(tw_u32(blob + 14), desc->version);
    ck_assert_uint_eq(tw_u32(blob + 18), desc->level);
    ck_assert_uint_eq(tw_u32(blob + 22), 0);

    /* the events: payloads exactly as the generated writer laid them out (packed, little-endian) */
    const tw_block *eb = NULL;
    for (size_t i = 0; i < t.count; i++)
        if (strcmp(t.blocks[i].name, "EventBlock") == 0)
            eb = &t.blocks[i];
    ck_assert_ptr_nonnull(eb);
    const uint8_t *ec = d + eb->content_offset;
    memset(&r, 0, sizeof r);
    pos = 20;
    ck_assert_int_eq(tw_next_row(ec, eb->size, &pos, &r), 0);
    static const uint8_t p1[36] = {0x11, 0x11, 0, 0, 0, 0, 0, 0, 0x22, 0x22, 0, 0, 0, 0, 0, 0,
                                   0x00, 0x10, 0, 0, 0, 0x7f, 0, 0, 0x40, 0, 0, 0, 1, 0, 0, 6, 0, 0, 0, 0};
    ck_assert_uint_eq(r.payload_size, 36);
    ck_assert_mem_eq(r.payload, p1, 36);
    ck_assert_uint_eq(r.metadata_id, 1);
    ck_assert_uint_eq(r.timestamp, 100);
    ck_assert_int_eq(tw_next_row(ec, eb->size, &pos, &r), 0);
    ck_assert_uint_eq(r.metadata_id, 1);
    ck_assert_uint_eq(r.sequence, 2);
    ck_assert_uint_eq(tw_u64(r.payload), 0x3333);
    ck_assert_int_eq(tw_next_row(ec, eb->size, &pos, &r), 0);
    ck_assert_uint_eq(r.metadata_id, 2);
    ck_assert_uint_eq(r.payload_size, 0);
    ck_assert_uint_eq(pos, eb->size);
    free(t.blocks);
    mantra_nettrace_writer_free(c.w);
    mantra_sink_free(s);
}
END_TEST

START_TEST(add_event_argument_errors) {
    mantra_sink *s;
    ck_assert_int_eq(mantra_sink_open_memory(&s, 0), 0);
    mantra_nettrace_writer *w;
    ck_assert_int_eq(mantra_nettrace_writer_new(&w, s, NULL), 0);
    mantra_nettrace_event_key k;
    ck_assert_int_eq(mantra_nettrace_add_event(w, NULL, &mantra_DotNETRuntime_events[0], &k), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_nettrace_add_event(w, &mantra_DotNETRuntime_provider, NULL, &k), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_nettrace_add_event(w, &mantra_DotNETRuntime_provider, &mantra_DotNETRuntime_events[0], NULL),
                     MANTRA_EINVAL);
    /* many descriptors: the pointer table grows and keys stay stable */
    mantra_nettrace_event_key first[16];
    for (uint32_t i = 0; i < 16; i++)
        ck_assert_int_eq(mantra_nettrace_add_event(w, &mantra_DotNETRuntime_provider, &mantra_DotNETRuntime_events[i], &first[i]), 0);
    for (uint32_t i = 0; i < 13; i++) {
        mantra_nettrace_event_key kk;
        ck_assert_int_eq(mantra_nettrace_add_event(w, &mantra_DotNETRuntimeRundown_provider,
                                                   &mantra_DotNETRuntimeRundown_events[i], &kk), 0);
        ck_assert_uint_eq(kk, 17 + i);
    }
    for (uint32_t i = 0; i < 16; i++) {
        ck_assert_int_eq(mantra_nettrace_add_event(w, &mantra_DotNETRuntime_provider, &mantra_DotNETRuntime_events[i], &k), 0);
        ck_assert_uint_eq(k, first[i]);
        ck_assert_uint_eq(k, i + 1);
    }
    mantra_nettrace_writer_free(w);
    mantra_sink_free(s);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("generated_events");
    TCase *tc = tcase_create("generated");
    tcase_add_test(tc, generated_writer_to_nettrace);
    tcase_add_test(tc, add_event_argument_errors);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
