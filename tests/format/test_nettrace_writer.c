/* nettrace V5 writer: exact bytes and structure. The layouts are those of microsoft/perfview,
 * src/TraceEvent/EventPipe/NetTraceFormat_v5.md (objects, blocks, rows, metadata records), as the .NET
 * runtime writes them: dotnet/runtime, src/native/eventpipe/ep-file.c (stream header, Trace object, end of
 * stream), ep-stream.c (object framing) and ep-block.c (block padding and headers, compressed rows,
 * StackBlock, SPBlock). */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "format/walk.h"
#include "mantra/metadata.h"
#include "mantra/nettrace_writer.h"

#define T_2024 INT64_C(1709214330123) /* 2024-02-29T13:45:30.123Z, a Thursday */

static mantra_nettrace_options opts_fixed(void) {
    mantra_nettrace_options o;
    mantra_nettrace_options_init(&o);
    o.sync_time_unix_ms = T_2024;
    o.sync_time_ticks = 1000;
    o.ticks_per_second = 1000000000u;
    o.pointer_size = 8;
    o.process_id = 4242;
    o.processor_count = 4;
    o.sampling_rate_ns = 1000000;
    return o;
}

/* Event "E" (id 1, level 4) of provider P with one UInt32 field X. */
static const uint8_t *blob_e(mantra_metadata_builder **b, size_t *size) {
    const uint8_t *blob;
    ck_assert_int_eq(mantra_metadata_builder_new(b), 0);
    ck_assert_int_eq(mantra_metadata_begin(*b, 1, "E", 0, 0, 4, 0), 0);
    ck_assert_int_eq(mantra_metadata_field(*b, "X", MANTRA_TYPE_UINT32), 0);
    ck_assert_int_eq(mantra_metadata_finish(*b, &blob, size), 0);
    return blob;
}

typedef struct fixture {
    mantra_sink *sink;
    mantra_nettrace_writer *w;
    mantra_metadata_builder *b;
    mantra_nettrace_event_key key;
} fixture;

static void fx_open(fixture *f, const mantra_nettrace_options *o) {
    memset(f, 0, sizeof *f);
    ck_assert_int_eq(mantra_sink_open_memory(&f->sink, 0), 0);
    ck_assert_int_eq(mantra_nettrace_writer_new(&f->w, f->sink, o), 0);
    size_t n;
    const uint8_t *blob = blob_e(&f->b, &n);
    ck_assert_int_eq(mantra_nettrace_add_event_raw(f->w, "P", blob, n, &f->key), 0);
}

static void fx_close(fixture *f) {
    mantra_nettrace_writer_free(f->w);
    mantra_sink_free(f->sink);
    mantra_metadata_builder_free(f->b);
}

static const uint8_t *fx_bytes(fixture *f, size_t *n) { return mantra_sink_memory(f->sink, n); }

/* ---------------------------------------------------------------------------------------------- */

START_TEST(minimal_trace_exact_bytes) {
    mantra_nettrace_options o = opts_fixed();
    fixture f;
    fx_open(&f, &o);
    const uint8_t payload[4] = {0xef, 0xbe, 0xad, 0xde};
    mantra_nettrace_event ev = {.key = f.key, .timestamp = 2000, .thread_id = 7};
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, payload, 4), 0);
    ck_assert_uint_eq(mantra_nettrace_metadata_id(f.w, f.key), 1);
    ck_assert_int_eq(mantra_nettrace_finish(f.w), 0);
    static const uint8_t want[] = {
        /* 0: stream header (ep-file.c ep_file_initialize_file) */
        'N', 'e', 't', 't', 'r', 'a', 'c', 'e', 0x14, 0, 0, 0,
        '!', 'F', 'a', 's', 't', 'S', 'e', 'r', 'i', 'a', 'l', 'i', 'z', 'a', 't', 'i', 'o', 'n', '.', '1',
        /* 32: Trace object v4 / min reader 4 (ep-stream.c ep_fast_serializer_write_object) */
        5, 5, 1, 4, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 'T', 'r', 'a', 'c', 'e', 6,
        /* 53: SyncTimeUTC, SYSTEMTIME 2024-02-29 (Thursday = 4) 13:45:30.123 */
        0xe8, 0x07, 2, 0, 4, 0, 29, 0, 13, 0, 45, 0, 30, 0, 123, 0,
        /* SyncTimeQPC 1000, QPCFrequency 1e9, PointerSize 8, pid 4242, 4 CPUs, rate 1,000,000 ns */
        0xe8, 0x03, 0, 0, 0, 0, 0, 0, 0x00, 0xca, 0x9a, 0x3b, 0, 0, 0, 0, 8, 0, 0, 0, 0x92, 0x10, 0, 0,
        4, 0, 0, 0, 0x40, 0x42, 0x0f, 0, 6,
        /* 102: MetadataBlock, BlockSize 68 at 131; 135 & 3 = 3 -> 1 padding byte (ep_block_fast_serialize); content at 136 */
        5, 5, 1, 2, 0, 0, 0, 2, 0, 0, 0, 13, 0, 0, 0, 'M', 'e', 't', 'a', 'd', 'a', 't', 'a', 'B', 'l', 'o', 'c', 'k', 6,
        68, 0, 0, 0, 0,
        /* block header: HeaderSize 20, Flags 1, Min = Max = 2000 */
        20, 0, 1, 0, 0xd0, 0x07, 0, 0, 0, 0, 0, 0, 0xd0, 0x07, 0, 0, 0, 0, 0, 0,
        /* metadata row: flags 0xC0 (sorted, payload size), TimestampDelta 2000 = d0 0f, PayloadSize 44 */
        0xc0, 0xd0, 0x0f, 44,
        /* metadata record: MetadataId 1, L"P", then the blob: EventId 1, L"E", Keywords 0, Version 0, Level 4,
         * FieldCount 1, {TypeCode 10 (UInt32), L"X"} (a V1 field) */
        1, 0, 0, 0, 'P', 0, 0, 0,
        1, 0, 0, 0, 'E', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 10, 0, 0, 0, 'X', 0, 0, 0,
        6,
        /* 205: StackBlock, BlockSize 12 at 231; 235 -> 1 padding byte; content at 236:
         * FirstId 1, Count 1, one empty stack (size 0) */
        5, 5, 1, 2, 0, 0, 0, 2, 0, 0, 0, 10, 0, 0, 0, 'S', 't', 'a', 'c', 'k', 'B', 'l', 'o', 'c', 'k', 6,
        12, 0, 0, 0, 0,
        1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
        6,
        /* 249: EventBlock, BlockSize 34 at 275; 279 -> 1 padding byte; content at 280 */
        5, 5, 1, 2, 0, 0, 0, 2, 0, 0, 0, 10, 0, 0, 0, 'E', 'v', 'e', 'n', 't', 'B', 'l', 'o', 'c', 'k', 6,
        34, 0, 0, 0, 0,
        20, 0, 1, 0, 0xd0, 0x07, 0, 0, 0, 0, 0, 0, 0xd0, 0x07, 0, 0, 0, 0, 0, 0,
        /* compressed row: flags 0xCF = MetadataId | Seq/Capture/Proc | ThreadId | StackId | sorted | size;
         * MetadataId 1; SeqDelta 0 (seq 1 = 0 + 0 + 1), CaptureThreadId 7, Proc 0; ThreadId 7;
         * StackId 1; TimestampDelta 2000; PayloadSize 4; payload */
        0xcf, 1, 0, 7, 0, 7, 1, 0xd0, 0x0f, 4, 0xef, 0xbe, 0xad, 0xde,
        6,
        /* 315: SPBlock, BlockSize 24 at 338; 342 & 3 = 2 -> 2 padding bytes; content at 344:
         * Timestamp 2000, 1 thread: CaptureThreadId 7, last sequence 1 */
        5, 5, 1, 2, 0, 0, 0, 2, 0, 0, 0, 7, 0, 0, 0, 'S', 'P', 'B', 'l', 'o', 'c', 'k', 6,
        24, 0, 0, 0, 0, 0,
        0xd0, 0x07, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
        6,
        /* 369: end of stream (NullReference tag) */
        1};
    size_t n;
    const uint8_t *got = fx_bytes(&f, &n);
    ck_assert_uint_eq(sizeof want, 370);
    ck_assert_uint_eq(n, sizeof want);
    ck_assert_mem_eq(got, want, sizeof want);
    mantra_nettrace_stats st;
    mantra_nettrace_get_stats(f.w, &st);
    ck_assert_uint_eq(st.events, 1);
    ck_assert_uint_eq(st.metadata, 1);
    ck_assert_uint_eq(st.stacks, 1);
    ck_assert_uint_eq(st.metadata_blocks, 1);
    ck_assert_uint_eq(st.stack_blocks, 1);
    ck_assert_uint_eq(st.event_blocks, 1);
    ck_assert_uint_eq(st.sequence_points, 1);
    ck_assert_uint_eq(st.bytes, 370);
    ck_assert_uint_eq(st.threads, 1);
    /* finished: later calls are refused */
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, payload, 4), MANTRA_ESTATE);
    ck_assert_int_eq(mantra_nettrace_finish(f.w), MANTRA_ESTATE);
    fx_close(&f);
}
END_TEST

START_TEST(systemtime_fields) {
    uint16_t s[8];
    ck_assert_int_eq(mantra_nettrace_systemtime(T_2024, s), 0);
    const uint16_t a[8] = {2024, 2, 4, 29, 13, 45, 30, 123};
    ck_assert_mem_eq(s, a, sizeof a);
    ck_assert_int_eq(mantra_nettrace_systemtime(INT64_C(-11644473600000), s), 0); /* 1601-01-01, Monday */
    const uint16_t b[8] = {1601, 1, 1, 1, 0, 0, 0, 0};
    ck_assert_mem_eq(s, b, sizeof b);
    ck_assert_int_eq(mantra_nettrace_systemtime(-1, s), 0); /* 1969-12-31 23:59:59.999, Wednesday */
    const uint16_t c[8] = {1969, 12, 3, 31, 23, 59, 59, 999};
    ck_assert_mem_eq(s, c, sizeof c);
    ck_assert_int_eq(mantra_nettrace_systemtime(INT64_C(4107542400000), s), 0); /* 2100-03-01, Monday */
    const uint16_t d[8] = {2100, 3, 1, 1, 0, 0, 0, 0};
    ck_assert_mem_eq(s, d, sizeof d);
    ck_assert_int_eq(mantra_nettrace_systemtime(INT64_C(253402300799000), s), 0); /* 9999-12-31 23:59:59, Friday */
    const uint16_t e[8] = {9999, 12, 5, 31, 23, 59, 59, 0};
    ck_assert_mem_eq(s, e, sizeof e);
    ck_assert_int_eq(mantra_nettrace_systemtime(INT64_C(-11644473600001), s), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_nettrace_systemtime(INT64_MAX, s), MANTRA_EINVAL);
}
END_TEST

START_TEST(current_time_is_valid) {
    mantra_nettrace_options o;
    mantra_nettrace_options_init(&o); /* sync time = now */
    mantra_sink *s;
    mantra_nettrace_writer *w;
    ck_assert_int_eq(mantra_sink_open_memory(&s, 0), 0);
    ck_assert_int_eq(mantra_nettrace_writer_new(&w, s, &o), 0);
    size_t n;
    const uint8_t *d = mantra_sink_memory(s, &n);
    ck_assert_uint_eq(n, 102);
    uint16_t st[8];
    for (int i = 0; i < 8; i++)
        st[i] = (uint16_t)(d[53 + 2 * i] | d[54 + 2 * i] << 8);
    ck_assert(st[0] >= 2024 && st[0] < 3000);
    ck_assert(st[1] >= 1 && st[1] <= 12);
    ck_assert(st[2] <= 6);
    ck_assert(st[3] >= 1 && st[3] <= 31);
    ck_assert(st[4] < 24 && st[5] < 60 && st[6] < 60 && st[7] < 1000);
    mantra_nettrace_writer_free(w);
    mantra_sink_free(s);
}
END_TEST

START_TEST(bad_options_refused) {
    mantra_sink *s;
    mantra_nettrace_writer *w;
    mantra_nettrace_options o = opts_fixed();
    ck_assert_int_eq(mantra_sink_open_memory(&s, 0), 0);
    o.pointer_size = 6;
    ck_assert_int_eq(mantra_nettrace_writer_new(&w, s, &o), MANTRA_EINVAL);
    ck_assert_ptr_nonnull(strstr(mantra_nettrace_last_error(w), "pointer_size"));
    mantra_nettrace_writer_free(w);
    o = opts_fixed();
    o.sync_time_unix_ms = INT64_C(-20000000000000);
    ck_assert_int_eq(mantra_nettrace_writer_new(&w, s, &o), MANTRA_EINVAL);
    ck_assert_ptr_nonnull(strstr(mantra_nettrace_last_error(w), "1601"));
    mantra_nettrace_writer_free(w);
    ck_assert_uint_eq(mantra_sink_bytes_written(s), 0);
    ck_assert_int_eq(mantra_sink_write(s, "x", 1), 0);
    o = opts_fixed();
    ck_assert_int_eq(mantra_nettrace_writer_new(&w, s, &o), MANTRA_EINVAL); /* sink not at offset 0 */
    mantra_nettrace_writer_free(w);
    mantra_sink_free(s);
}
END_TEST

/* Provider names of 1..4 characters shift every later block by 2 bytes: all four paddings occur,
 * every block content starts at a multiple of 4 and padding bytes are zero (ep-block.c ep_block_fast_serialize). */
START_TEST(padding_at_every_offset) {
    int seen[4] = {0, 0, 0, 0};
    const char *names[] = {"A", "AB", "ABC", "ABCD"};
    for (int k = 0; k < 4; k++) {
        mantra_nettrace_options o = opts_fixed();
        mantra_sink *s;
        mantra_nettrace_writer *w;
        mantra_metadata_builder *b;
        size_t bn;
        const uint8_t *blob = blob_e(&b, &bn);
        ck_assert_int_eq(mantra_sink_open_memory(&s, 0), 0);
        ck_assert_int_eq(mantra_nettrace_writer_new(&w, s, &o), 0);
        mantra_nettrace_event_key key;
        ck_assert_int_eq(mantra_nettrace_add_event_raw(w, names[k], blob, bn, &key), 0);
        uint32_t x = 5;
        for (uint64_t i = 0; i < 3; i++) {
            mantra_nettrace_event ev = {.key = key, .timestamp = 10 + i, .thread_id = 1};
            ck_assert_int_eq(mantra_nettrace_write(w, &ev, &x, 4), 0);
            ck_assert_int_eq(mantra_nettrace_sequence_point(w), 0);
        }
        ck_assert_int_eq(mantra_nettrace_finish(w), 0);
        size_t n;
        const uint8_t *d = mantra_sink_memory(s, &n);
        tw_trace t = tw_walk(d, n, 0);
        ck_assert_ptr_null(t.error);
        ck_assert(t.end_tag);
        ck_assert_uint_eq(t.count, 1 + 3 * 3 + 1); /* M; 3 x (S, E, SP); final SP */
        for (size_t i = 0; i < t.count; i++) {
            ck_assert_uint_eq(t.blocks[i].content_offset % 4, 0);
            seen[t.blocks[i].pad]++;
        }
        free(t.blocks);
        mantra_nettrace_writer_free(w);
        mantra_sink_free(s);
        mantra_metadata_builder_free(b);
    }
    for (int p = 0; p < 4; p++)
        ck_assert_int_gt(seen[p], 0);
}
END_TEST

/* Returns the content of the index-th block named name. */
static const uint8_t *block_content(const uint8_t *d, const tw_trace *t, const char *name, size_t index,
                                    uint32_t *size) {
    for (size_t i = 0; i < t->count; i++)
        if (strcmp(t->blocks[i].name, name) == 0 && index-- == 0) {
            *size = t->blocks[i].size;
            return d + t->blocks[i].content_offset;
        }
    ck_abort_msg("no block %s", name);
    return NULL;
}

/* The compressed row header: each flag, in exact bytes. */
START_TEST(header_flags_exact) {
    mantra_nettrace_options o = opts_fixed();
    o.order = MANTRA_NETTRACE_CALLER_RUNS;
    fixture f;
    fx_open(&f, &o);
    mantra_metadata_builder *b2;
    size_t bn;
    const uint8_t *blob = blob_e(&b2, &bn);
    mantra_nettrace_event_key k2;
    ck_assert_int_eq(mantra_nettrace_add_event_raw(f.w, "Q", blob, bn, &k2), 0);
    const mantra_guid act = {0x04030201, 0x0605, 0x0807, {9, 10, 11, 12, 13, 14, 15, 16}};
    const uint64_t ips[2] = {0x1122334455667788u, 0x10};
    uint32_t x = 0x33;
    mantra_nettrace_event ev = {.key = f.key, .flags = MANTRA_NETTRACE_EVENT_SORTED, .timestamp = 100,
                                .thread_id = 7, .processor_number = 2};
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, &x, 1), 0); /* row A */
    ev.flags = 0;
    ev.timestamp = 101;
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, &x, 1), 0); /* B: nothing changes but the time */
    ev.timestamp = 103;
    ev.activity_id = &act;
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, &x, 1), 0); /* C: ActivityId */
    ev.related_activity_id = &act;
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, &x, 1), 0); /* D: RelatedActivityId */
    ev.activity_id = ev.related_activity_id = NULL;
    ev.stack = ips;
    ev.stack_frames = 2;
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, &x, 2), 0); /* E: StackId + PayloadSize */
    ev.stack = NULL;
    ev.stack_frames = 0;
    ev.thread_id = 8;
    ev.capture_thread_id = 7;
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, &x, 2), 0); /* F: ThreadId only */
    ev.key = k2;
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, &x, 2), 0); /* G: MetadataId */
    ev.processor_number = 3;
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, &x, 2), 0); /* H: processor -> 0x02 */
    ev.sequence = 20;
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, &x, 2), 0); /* I: sequence gap -> 0x02, delta 11 */
    ck_assert_int_eq(mantra_nettrace_flush(f.w), 0);
    size_t n;
    const uint8_t *d = fx_bytes(&f, &n);
    tw_trace t = tw_walk(d, n, 1);
    ck_assert_ptr_null(t.error);
    uint32_t size;
    const uint8_t *c = block_content(d, &t, "EventBlock", 0, &size);
    static const uint8_t want[] = {
        20, 0, 1, 0, 100, 0, 0, 0, 0, 0, 0, 0, 103, 0, 0, 0, 0, 0, 0, 0,
        /* A: 0xCF meta 1, seqdelta 0, capture 7, proc 2, thread 7, stack 1 (empty), dt 100, size 1 */
        0xcf, 1, 0, 7, 2, 7, 1, 100, 1, 0x33,
        /* B: no flag at all (not sorted), dt 1 */
        0x00, 1, 0x33,
        /* C: 0x10 ActivityId (.NET GUID layout) */
        0x10, 2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0x33,
        /* D: 0x20 RelatedActivityId, dt 0 */
        0x20, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0x33,
        /* E: 0x08 stack 2, 0x10/0x20 back to zero GUIDs, 0x80 size 2 */
        0xb8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        2, 0x33, 0,
        /* F: 0x04 thread 8, 0x08 stack 1 */
        0x0c, 8, 1, 0, 0x33, 0,
        /* G: 0x01 metadata id 2 (first use of Q) */
        0x01, 2, 0, 0x33, 0,
        /* H: 0x02 seqdelta 0, capture 7, proc 3 */
        0x02, 0, 7, 3, 0, 0x33, 0,
        /* I: 0x02 seqdelta 20 - 8 - 1 = 11 */
        0x02, 11, 7, 3, 0, 0x33, 0};
    ck_assert_uint_eq(size, sizeof want);
    ck_assert_mem_eq(c, want, sizeof want);
    /* stack block: FirstId 1, Count 2, empty stack, then 2 IPs of 8 bytes */
    const uint8_t *sc = block_content(d, &t, "StackBlock", 0, &size);
    static const uint8_t swant[] = {1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0,
                                    0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x10, 0, 0, 0, 0, 0, 0, 0};
    ck_assert_uint_eq(size, sizeof swant);
    ck_assert_mem_eq(sc, swant, sizeof swant);
    free(t.blocks);
    fx_close(&f);
    mantra_metadata_builder_free(b2);
}
END_TEST

/* 64-bit wrap-around timestamp deltas, 32-bit sequence wrap, largest varints (compressed row header). */
START_TEST(wraparound_and_max_varints) {
    mantra_nettrace_options o = opts_fixed();
    o.order = MANTRA_NETTRACE_CALLER_RUNS;
    fixture f;
    fx_open(&f, &o);
    uint32_t x = 1;
    mantra_nettrace_event ev = {.key = f.key, .flags = MANTRA_NETTRACE_EVENT_SORTED, .timestamp = 5,
                                .thread_id = UINT64_MAX, .sequence = UINT32_MAX, .processor_number = UINT32_MAX};
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, &x, 0), 0);
    /* another capture thread, older timestamp: delta 3 - 5 wraps to 2^64 - 2 */
    ev.thread_id = 1;
    ev.timestamp = 3;
    ev.sequence = 0; /* writer-assigned: 1 */
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, &x, 0), 0);
    /* back to the first thread: its sequence wraps from UINT32_MAX to 0 */
    ev.thread_id = UINT64_MAX;
    ev.timestamp = 6;
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, &x, 0), 0);
    ck_assert_int_eq(mantra_nettrace_flush(f.w), 0);
    size_t n;
    const uint8_t *d = fx_bytes(&f, &n);
    tw_trace t = tw_walk(d, n, 1);
    uint32_t size;
    const uint8_t *c = block_content(d, &t, "EventBlock", 0, &size);
    static const uint8_t want[] = {
        20, 0, 1, 0, 3, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0,
        /* flags 0x4F (size 0 = previous size 0: no 0x80); meta 1; seqdelta UINT32_MAX - 0 - 1 = 0xFFFFFFFE
         * (5 bytes); capture 2^64-1 (10 bytes); proc 0xFFFFFFFF (5 bytes); thread (10); stack 1; dt 5 */
        0x4f, 1, 0xfe, 0xff, 0xff, 0xff, 0x0f,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        0xff, 0xff, 0xff, 0xff, 0x0f,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        1, 5,
        /* seq 1 after 0xFFFFFFFF: delta 1 - 0xFFFFFFFF - 1 = 1 (wraps); capture 1; thread 1;
         * dt = 3 - 5 = 0xFFFFFFFFFFFFFFFE (10 bytes) */
        0x46, 1, 1, 0xff, 0xff, 0xff, 0xff, 0x0f, 1,
        0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        /* seq 0 (UINT32_MAX + 1) after 1: delta 0 - 1 - 1 = 0xFFFFFFFE; dt 3 */
        0x46, 0xfe, 0xff, 0xff, 0xff, 0x0f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        0xff, 0xff, 0xff, 0xff, 0x0f,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 3};
    ck_assert_uint_eq(size, sizeof want);
    ck_assert_mem_eq(c, want, sizeof want);
    /* and the walker (an independent decoder) gets the values back */
    tw_row r;
    memset(&r, 0, sizeof r);
    size_t pos = 20;
    ck_assert_int_eq(tw_next_row(c, size, &pos, &r), 0);
    ck_assert_uint_eq(r.sequence, UINT32_MAX);
    ck_assert_int_eq(tw_next_row(c, size, &pos, &r), 0);
    ck_assert_uint_eq(r.timestamp, 3);
    ck_assert_uint_eq(r.sequence, 1);
    ck_assert_int_eq(tw_next_row(c, size, &pos, &r), 0);
    ck_assert_uint_eq(r.timestamp, 6);
    ck_assert_uint_eq(r.sequence, 0);
    ck_assert_uint_eq(pos, size);
    free(t.blocks);
    fx_close(&f);
}
END_TEST

/* Many blocks: every EventBlock starts from reset state, stays under the bound, and all events
 * decode with consecutive sequence numbers per thread. */
START_TEST(many_blocks_per_block_reset) {
    mantra_nettrace_options o = opts_fixed();
    o.block_bytes = 1024;
    fixture f;
    fx_open(&f, &o);
    uint8_t payload[37];
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (uint8_t)i;
    const uint32_t N = 5000;
    for (uint32_t i = 0; i < N; i++) {
        mantra_nettrace_event ev = {.key = f.key, .timestamp = 1000 + i, .thread_id = 100 + i % 3};
        ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, payload, 1 + i % sizeof payload), 0);
    }
    ck_assert_int_eq(mantra_nettrace_finish(f.w), 0);
    size_t n;
    const uint8_t *d = fx_bytes(&f, &n);
    tw_trace t = tw_walk(d, n, 0);
    ck_assert_ptr_null(t.error);
    size_t blocks = tw_count(&t, "EventBlock");
    ck_assert_uint_gt(blocks, 100);
    uint32_t events = 0, last_seq[3] = {0, 0, 0};
    for (size_t b = 0; b < blocks; b++) {
        uint32_t size;
        const uint8_t *c = block_content(d, &t, "EventBlock", b, &size);
        ck_assert_uint_le(size, 1024);
        tw_row r;
        memset(&r, 0, sizeof r);
        size_t pos = 20;
        uint64_t first = 0;
        while (pos < size) {
            ck_assert_int_eq(tw_next_row(c, size, &pos, &r), 0);
            if (first == 0) {
                first = 1;
                ck_assert_uint_eq(r.flags & 0x8f, 0x8f); /* everything restated after the reset */
                ck_assert_uint_eq(tw_u64(c + 4), r.timestamp); /* MinTimestamp */
            }
            ck_assert(r.sorted);
            ck_assert_uint_eq(r.timestamp, 1000 + events);
            ck_assert_uint_eq(r.thread, 100 + events % 3);
            ck_assert_uint_eq(r.capture_thread, r.thread);
            ck_assert_uint_eq(r.sequence, ++last_seq[events % 3]);
            ck_assert_uint_eq(r.payload_size, 1 + events % 37);
            ck_assert_mem_eq(r.payload, payload, r.payload_size);
            ck_assert_uint_eq(r.stack_id, 1);
            events++;
        }
        ck_assert_uint_eq(pos, size);
        ck_assert_uint_eq(tw_u64(c + 12), r.timestamp); /* MaxTimestamp */
    }
    ck_assert_uint_eq(events, N);
    mantra_nettrace_stats st;
    mantra_nettrace_get_stats(f.w, &st);
    ck_assert_uint_eq(st.event_blocks, blocks);
    ck_assert_uint_eq(st.events, N);
    free(t.blocks);
    fx_close(&f);
}
END_TEST

/* StackBlock: identical stacks share an id within a sequence-point region; ids restart at 1 after an SP;
 * stack-less events use a size-0 entry, never id 0. */
START_TEST(stack_dedup_and_regions) {
    mantra_nettrace_options o = opts_fixed();
    o.pointer_size = 4;
    fixture f;
    fx_open(&f, &o);
    const uint64_t s1[3] = {0x1000, 0x2000, 0x3000};
    const uint64_t s2[2] = {0x1000, 0x2000};
    const uint64_t s3[3] = {0x1000, 0x2000, 0x3000 + (UINT64_C(1) << 32)}; /* same as s1 at 4 bytes */
    struct {
        const uint64_t *s;
        uint32_t n;
        uint32_t want_id;
    } seq[] = {{s1, 3, 1}, {NULL, 0, 2}, {s2, 2, 3}, {s1, 3, 1}, {NULL, 0, 2}, {s3, 3, 1}, {s2, 2, 3}};
    uint64_t ts = 1;
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
        mantra_nettrace_event ev = {.key = f.key, .timestamp = ts++, .thread_id = 1, .stack = seq[i].s,
                                    .stack_frames = seq[i].n};
        ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, NULL, 0), 0);
    }
    ck_assert_int_eq(mantra_nettrace_sequence_point(f.w), 0);
    /* new region: the empty stack comes first now */
    mantra_nettrace_event ev = {.key = f.key, .timestamp = ts++, .thread_id = 1};
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, NULL, 0), 0);
    ev.stack = s2;
    ev.stack_frames = 2;
    ev.timestamp = ts++;
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, NULL, 0), 0);
    ck_assert_int_eq(mantra_nettrace_finish(f.w), 0);
    size_t n;
    const uint8_t *d = fx_bytes(&f, &n);
    tw_trace t = tw_walk(d, n, 0);
    ck_assert_ptr_null(t.error);
    ck_assert_uint_eq(tw_count(&t, "StackBlock"), 2);
    uint32_t size;
    const uint8_t *c = block_content(d, &t, "StackBlock", 0, &size);
    static const uint8_t want1[] = {1, 0, 0, 0, 3, 0, 0, 0,
                                    12, 0, 0, 0, 0x00, 0x10, 0, 0, 0x00, 0x20, 0, 0, 0x00, 0x30, 0, 0,
                                    0, 0, 0, 0,
                                    8, 0, 0, 0, 0x00, 0x10, 0, 0, 0x00, 0x20, 0, 0};
    ck_assert_uint_eq(size, sizeof want1);
    ck_assert_mem_eq(c, want1, sizeof want1);
    c = block_content(d, &t, "StackBlock", 1, &size);
    static const uint8_t want2[] = {1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0x00, 0x10, 0, 0, 0x00, 0x20, 0, 0};
    ck_assert_uint_eq(size, sizeof want2);
    ck_assert_mem_eq(c, want2, sizeof want2);
    /* the rows point at the right ids */
    uint32_t want_ids[] = {1, 2, 3, 1, 2, 1, 3, 1, 2};
    size_t k = 0;
    for (size_t b = 0; b < tw_count(&t, "EventBlock"); b++) {
        c = block_content(d, &t, "EventBlock", b, &size);
        tw_row r;
        memset(&r, 0, sizeof r);
        size_t pos = 20;
        while (pos < size) {
            ck_assert_int_eq(tw_next_row(c, size, &pos, &r), 0);
            ck_assert_uint_eq(r.stack_id, want_ids[k++]);
        }
    }
    ck_assert_uint_eq(k, 9);
    mantra_nettrace_stats st;
    mantra_nettrace_get_stats(f.w, &st);
    ck_assert_uint_eq(st.stacks, 5);
    free(t.blocks);
    fx_close(&f);
}
END_TEST

/* Several capture threads; SPBlocks list each thread's last sequence number, dropped ones included;
 * automatic SPs every N bytes. */
START_TEST(threads_and_sequence_points) {
    mantra_nettrace_options o = opts_fixed();
    o.block_bytes = 2048;
    o.sequence_point_bytes = 16384;
    fixture f;
    fx_open(&f, &o);
    uint8_t payload[100] = {0};
    const uint64_t tids[4] = {11, 22, 33, 44};
    uint32_t seq[4] = {0, 0, 0, 0};
    for (uint32_t i = 0; i < 2000; i++) {
        uint32_t k = i % 4;
        mantra_nettrace_event ev = {.key = f.key, .timestamp = 50 + i, .thread_id = tids[k]};
        if (k == 3) { /* thread 44 numbers its events itself, 2 apart */
            seq[k] += 2;
            ev.sequence = seq[k];
        } else {
            seq[k]++;
        }
        ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, payload, sizeof payload), 0);
    }
    ck_assert_int_eq(mantra_nettrace_thread_dropped(f.w, 22, 5), 0);
    seq[1] += 5;
    ck_assert_int_eq(mantra_nettrace_thread_dropped(f.w, 55, 3), 0); /* a thread that only dropped */
    ck_assert_int_eq(mantra_nettrace_finish(f.w), 0);
    size_t n;
    const uint8_t *d = fx_bytes(&f, &n);
    tw_trace t = tw_walk(d, n, 0);
    ck_assert_ptr_null(t.error);
    size_t sps = tw_count(&t, "SPBlock");
    ck_assert_uint_ge(sps, n / (16384 + 4096)); /* the automatic ones and the final one */
    ck_assert_uint_le(sps, n / 16384 + 1);
    uint32_t size;
    const uint8_t *c = block_content(d, &t, "SPBlock", sps - 1, &size);
    ck_assert_uint_eq(size, 12 + 12 * 5);
    ck_assert_uint_eq(tw_u64(c), 50 + 1999);
    ck_assert_uint_eq(tw_u32(c + 8), 5);
    const uint64_t want_tids[5] = {11, 22, 33, 44, 55};
    const uint32_t want_seq[5] = {seq[0], seq[1], seq[2], seq[3], 3};
    for (int i = 0; i < 5; i++) {
        ck_assert_uint_eq(tw_u64(c + 12 + 12 * i), want_tids[i]);
        ck_assert_uint_eq(tw_u32(c + 20 + 12 * i), want_seq[i]);
    }
    ck_assert_uint_eq(seq[0], 500);
    ck_assert_uint_eq(seq[1], 505);
    ck_assert_uint_eq(seq[3], 1000);
    /* every SP is preceded by a flush: the block before it is not a Metadata/StackBlock, and every
     * region's first EventBlock is preceded by its StackBlock restarting at id 1 */
    for (size_t i = 1; i < t.count; i++) {
        if (strcmp(t.blocks[i].name, "SPBlock") == 0)
            ck_assert_str_ne(t.blocks[i - 1].name, "StackBlock");
        if (strcmp(t.blocks[i - 1].name, "SPBlock") == 0 && i + 1 < t.count) {
            ck_assert_str_eq(t.blocks[i].name, "StackBlock");
            ck_assert_uint_eq(tw_u32(d + t.blocks[i].content_offset), 1);
        }
    }
    free(t.blocks);
    fx_close(&f);
}
END_TEST

START_TEST(ordering_rules) {
    /* global order: an older event is refused, the writer stays usable */
    mantra_nettrace_options o = opts_fixed();
    fixture f;
    fx_open(&f, &o);
    mantra_nettrace_event ev = {.key = f.key, .timestamp = 10, .thread_id = 1};
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, NULL, 0), 0);
    ev.timestamp = 9;
    ev.thread_id = 2;
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, NULL, 0), MANTRA_EORDER);
    ck_assert_ptr_nonnull(strstr(mantra_nettrace_last_error(f.w), "older"));
    ev.timestamp = 10;
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, NULL, 0), 0);
    mantra_nettrace_stats st;
    mantra_nettrace_get_stats(f.w, &st);
    ck_assert_uint_eq(st.refused, 1);
    ck_assert_uint_eq(st.events, 2);
    fx_close(&f);

    /* caller runs: capture thread change only on a sorted row; per-thread order */
    o.order = MANTRA_NETTRACE_CALLER_RUNS;
    fx_open(&f, &o);
    ev = (mantra_nettrace_event){.key = f.key, .timestamp = 10, .thread_id = 1};
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, NULL, 0), MANTRA_EORDER); /* first row unsorted */
    ev.flags = MANTRA_NETTRACE_EVENT_SORTED;
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, NULL, 0), 0);
    ev.flags = 0;
    ev.timestamp = 5;
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, NULL, 0), MANTRA_EORDER); /* older on the same thread */
    ev.thread_id = 2;
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, NULL, 0), MANTRA_EORDER); /* new capture thread, unsorted */
    ev.flags = MANTRA_NETTRACE_EVENT_SORTED;
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, NULL, 0), 0);
    ev.flags = 0;
    ev.thread_id = 3;
    ev.capture_thread_id = 2; /* a different ThreadId on the same capture thread is fine */
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, NULL, 0), 0);
    mantra_nettrace_get_stats(f.w, &st);
    ck_assert_uint_eq(st.refused, 3);
    ck_assert_uint_eq(st.events, 3);
    fx_close(&f);
}
END_TEST

START_TEST(refusals_keep_writer_usable) {
    mantra_nettrace_options o = opts_fixed();
    fixture f;
    fx_open(&f, &o);
    static uint8_t big[MANTRA_MAX_PAYLOAD + 1];
    mantra_nettrace_event ev = {.key = f.key, .timestamp = 1, .thread_id = 1};
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, big, sizeof big), MANTRA_ERANGE);
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, big, MANTRA_MAX_PAYLOAD), 0); /* exactly 64 KiB is fine */
    ev.key = 99;
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, NULL, 0), MANTRA_EINVAL);
    ck_assert_ptr_nonnull(strstr(mantra_nettrace_last_error(f.w), "unknown event key"));
    ev.key = f.key;
    ev.stack_frames = 3; /* frames without IPs */
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, NULL, 0), MANTRA_EINVAL);
    ev.stack_frames = 0;
    const mantra_data bad[] = {{"\xff", 0, MANTRA_DATA_UTF8_AS_UTF16Z}};
    ck_assert_int_eq(mantra_nettrace_write_data(f.w, &ev, bad, 1), MANTRA_EINVAL);
    const mantra_data good[] = {{"hi", 0, MANTRA_DATA_UTF8_AS_UTF16Z}};
    ck_assert_int_eq(mantra_nettrace_write_data(f.w, &ev, good, 1), 0);
    mantra_nettrace_event_key k;
    ck_assert_int_eq(mantra_nettrace_add_event_raw(f.w, "P", "short", 5, &k), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_nettrace_finish(f.w), 0);
    size_t n;
    const uint8_t *d = fx_bytes(&f, &n);
    tw_trace t = tw_walk(d, n, 0);
    ck_assert_ptr_null(t.error);
    /* the last event's payload: "hi" as UTF-16 + NUL */
    uint32_t size;
    const uint8_t *c = block_content(d, &t, "EventBlock", tw_count(&t, "EventBlock") - 1, &size);
    static const uint8_t hi[] = {'h', 0, 'i', 0, 0, 0};
    ck_assert_mem_eq(c + size - 6, hi, 6);
    mantra_nettrace_stats st;
    mantra_nettrace_get_stats(f.w, &st);
    ck_assert_uint_eq(st.refused, 4);
    ck_assert_uint_eq(st.events, 2);
    free(t.blocks);
    fx_close(&f);
}
END_TEST

/* Metadata ids follow first use, not definition order; unused definitions are not written. */
START_TEST(metadata_ids_on_first_use) {
    mantra_nettrace_options o = opts_fixed();
    fixture f;
    fx_open(&f, &o);
    mantra_metadata_builder *b;
    size_t bn;
    const uint8_t *blob = blob_e(&b, &bn);
    mantra_nettrace_event_key k2, k3;
    ck_assert_int_eq(mantra_nettrace_add_event_raw(f.w, "Q", blob, bn, &k2), 0);
    ck_assert_int_eq(mantra_nettrace_add_event_raw(f.w, "R", blob, bn, &k3), 0);
    mantra_nettrace_event ev = {.key = k3, .timestamp = 1, .thread_id = 1};
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, NULL, 0), 0);
    ev.key = f.key;
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, NULL, 0), 0);
    ev.key = k3;
    ck_assert_int_eq(mantra_nettrace_write(f.w, &ev, NULL, 0), 0);
    ck_assert_uint_eq(mantra_nettrace_metadata_id(f.w, k3), 1);
    ck_assert_uint_eq(mantra_nettrace_metadata_id(f.w, f.key), 2);
    ck_assert_uint_eq(mantra_nettrace_metadata_id(f.w, k2), 0);
    ck_assert_int_eq(mantra_nettrace_finish(f.w), 0);
    mantra_nettrace_stats st;
    mantra_nettrace_get_stats(f.w, &st);
    ck_assert_uint_eq(st.metadata, 2);
    size_t n;
    const uint8_t *d = fx_bytes(&f, &n);
    tw_trace t = tw_walk(d, n, 0);
    uint32_t size;
    const uint8_t *c = block_content(d, &t, "MetadataBlock", 0, &size);
    tw_row r;
    memset(&r, 0, sizeof r);
    size_t pos = 20;
    ck_assert_int_eq(tw_next_row(c, size, &pos, &r), 0);
    ck_assert_uint_eq(r.metadata_id, 0);
    ck_assert_uint_eq(tw_u32(r.payload), 1);
    ck_assert_uint_eq(r.payload[4], 'R');
    ck_assert_int_eq(tw_next_row(c, size, &pos, &r), 0);
    ck_assert_uint_eq(tw_u32(r.payload), 2);
    ck_assert_uint_eq(r.payload[4], 'P');
    ck_assert_uint_eq(pos, size);
    free(t.blocks);
    fx_close(&f);
    mantra_metadata_builder_free(b);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("nettrace_writer");
    TCase *tc = tcase_create("writer");
    tcase_add_test(tc, minimal_trace_exact_bytes);
    tcase_add_test(tc, systemtime_fields);
    tcase_add_test(tc, current_time_is_valid);
    tcase_add_test(tc, bad_options_refused);
    tcase_add_test(tc, padding_at_every_offset);
    tcase_add_test(tc, header_flags_exact);
    tcase_add_test(tc, wraparound_and_max_varints);
    tcase_add_test(tc, many_blocks_per_block_reset);
    tcase_add_test(tc, stack_dedup_and_regions);
    tcase_add_test(tc, threads_and_sequence_points);
    tcase_add_test(tc, ordering_rules);
    tcase_add_test(tc, refusals_keep_writer_usable);
    tcase_add_test(tc, metadata_ids_on_first_use);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
