/* Damaged traces: cut at every length and with flipped bytes. Whatever the damage, the reader
 * never crashes (this test runs under ASan+UBSan in the sanitizer build), delivers every event of
 * the blocks that end before the damage, and ends with 0 or an error text "offset N: ...". */
#define _POSIX_C_SOURCE 200809L

#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "gen/run_tool.h"
#include "mantra/reader.h"
#include "reader_test_util.h"

static uint8_t *load(const char *rel, size_t *size) {
    int must_fail;
    char *p = fixture_path(rel, &must_fail);
    if (p == NULL) {
        ck_assert_msg(!must_fail, "fixture %s is required (MANTRA_REQUIRE_INTEROP=1)", rel);
        return NULL;
    }
    uint8_t *d = (uint8_t *)run_tool_read_file(p, size);
    ck_assert_ptr_nonnull(d);
    free(p);
    return d;
}

/* Block ends of a clean trace and the number of events delivered once each block was read. */
typedef struct blocks {
    uint64_t ends[4096];
    uint64_t events_before[4096]; /* events of blocks ending at or before ends[i] */
    size_t n;
} blocks;

static void clean_blocks(const uint8_t *d, size_t size, blocks *b) {
    memset(b, 0, sizeof *b);
    mantra_reader *r = mantra_reader_new(NULL);
    ck_assert_int_eq(mantra_reader_open_memory(r, d, size), 0);
    const mantra_trace_event *ev;
    uint64_t events = 0;
    int rc;
    uint64_t last = mantra_reader_get_stats(r)->bytes_read;
    b->ends[0] = last;
    b->events_before[0] = 0;
    b->n = 1;
    while ((rc = mantra_reader_next(r, &ev)) > 0) {
        uint64_t now = mantra_reader_get_stats(r)->bytes_read;
        if (now != last && b->n < 4096) {
            /* a new block was read: every event so far belongs to blocks ending at `last` */
            b->ends[b->n] = last;
            b->events_before[b->n] = events;
            b->n++;
            last = now;
        }
        events++;
    }
    ck_assert_int_eq(rc, 0);
    if (b->n < 4096) {
        b->ends[b->n] = last;
        b->events_before[b->n] = events;
        b->n++;
    }
    mantra_reader_free(r);
}

/* Events guaranteed for damage at offset `at`: those of blocks ending at or before it. */
static uint64_t guaranteed(const blocks *b, uint64_t at) {
    uint64_t g = 0;
    for (size_t i = 0; i < b->n; i++)
        if (b->ends[i] <= at && b->events_before[i] > g)
            g = b->events_before[i];
    return g;
}

static void check_damaged(const trace_run *t, size_t size, const char *what) {
    if (t->rc < 0) {
        ck_assert_msg(strncmp(t->error, "offset ", 7) == 0, "%s: error text '%s'", what, t->error);
        uint64_t off = strtoull(t->error + 7, NULL, 10);
        ck_assert_msg(off <= size, "%s: error offset %" PRIu64 " beyond the input (%zu)", what, off, size);
        ck_assert_int_eq(t->complete, 0);
    }
}

static const char *const small_traces[] = {
    "microsoft-perfview/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace",
    "synthetic-v6/te-test-ParseV6CompressedEventHeaders.nettrace",
};

/* Cut at every length: events of complete blocks are all there, the status says truncated. */
START_TEST(cut_everywhere) {
    size_t size;
    uint8_t *d = load(small_traces[_i], &size);
    if (d == NULL)
        return;
    static blocks b;
    clean_blocks(d, size, &b);
    for (size_t len = 0; len < size; len++) {
        uint8_t *cut = malloc(len ? len : 1); /* exact size: ASan sees any read past the end */
        memcpy(cut, d, len);
        trace_run t;
        for (int sorted = 0; sorted < 2; sorted++) {
            run_memory(cut, len, sorted ? MANTRA_READER_SORTED : 0, &t);
            char what[64];
            snprintf(what, sizeof what, "cut at %zu", len);
            ck_assert_msg(t.rc == MANTRA_ETRUNCATED, "%s: status %d (%s)", what, t.rc, t.error);
            check_damaged(&t, len, what);
            ck_assert_msg(t.events >= guaranteed(&b, len), "%s: %" PRIu64 " events, %" PRIu64 " expected", what,
                          t.events, guaranteed(&b, len));
        }
        /* a cut exactly at a block end keeps every event of the blocks before it */
        for (size_t i = 0; i < b.n; i++)
            if (b.ends[i] == len)
                ck_assert_uint_eq(t.events, b.events_before[i]);
        free(cut);
    }
    free(d);
}
END_TEST

/* Every byte flipped (three masks): no crash, events of the blocks before the damage. */
START_TEST(flip_every_byte) {
    size_t size;
    uint8_t *d = load(small_traces[_i], &size);
    if (d == NULL)
        return;
    static blocks b;
    clean_blocks(d, size, &b);
    static const uint8_t masks[] = {0xFF, 0x01, 0x80};
    uint8_t *copy = malloc(size);
    for (size_t i = 0; i < size; i++) {
        for (size_t m = 0; m < sizeof masks; m++) {
            memcpy(copy, d, size);
            copy[i] ^= masks[m];
            trace_run t;
            for (int sorted = 0; sorted < 2; sorted++) {
                run_memory(copy, size, sorted ? MANTRA_READER_SORTED : 0, &t);
                char what[64];
                snprintf(what, sizeof what, "byte %zu ^ 0x%02x", i, masks[m]);
                check_damaged(&t, size, what);
                if (t.rc < 0)
                    ck_assert_msg(t.events >= guaranteed(&b, i), "%s: %" PRIu64 " events, at least %" PRIu64
                                  " expected", what, t.events, guaranteed(&b, i));
            }
        }
    }
    free(copy);
    free(d);
}
END_TEST

/* Random flips in a larger trace (fixed seed). */
START_TEST(flip_random_large) {
    size_t size;
    uint8_t *d = load("microsoft-perfview/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace", &size);
    if (d == NULL)
        return;
    static blocks b;
    clean_blocks(d, size, &b);
    uint8_t *copy = malloc(size);
    uint64_t seed = 0x9E3779B97F4A7C15u;
    for (int trial = 0; trial < 300; trial++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        size_t at = (size_t)((seed >> 20) % size);
        uint8_t mask = (uint8_t)((seed >> 8) | 1);
        memcpy(copy, d, size);
        copy[at] ^= mask;
        trace_run t;
        run_memory(copy, size, trial & 1 ? MANTRA_READER_SORTED : 0, &t);
        char what[64];
        snprintf(what, sizeof what, "byte %zu ^ 0x%02x", at, mask);
        check_damaged(&t, size, what);
        if (t.rc < 0)
            ck_assert_msg(t.events >= guaranteed(&b, at), "%s: %" PRIu64 " events, at least %" PRIu64 " expected",
                          what, t.events, guaranteed(&b, at));
    }
    free(copy);
    free(d);
}
END_TEST

/* Inputs that are not traces at all. */
START_TEST(not_traces) {
    static const struct {
        const char *data;
        size_t size;
        int rc;
        const char *error;
    } cases[] = {
        {"", 0, MANTRA_ETRUNCATED, "offset 0: not a nettrace trace (expected the magic \"Nettrace\")"},
        {"Nettr", 5, MANTRA_ETRUNCATED, "offset 0: not a nettrace trace (expected the magic \"Nettrace\")"},
        {"hello, world\n", 13, MANTRA_EFORMAT, "offset 0: not a nettrace trace (expected the magic \"Nettrace\")"},
        {"Nettrace", 8, MANTRA_ETRUNCATED, "offset 8: input ends after the \"Nettrace\" magic"},
        {"Nettrace\0\0\0\0\5\0\0\0\0\0\0\0", 20, MANTRA_EFORMAT,
         "offset 12: invalid nettrace version header (major version 5)"},
        {"Nettrace\0\0\0\0\7\0\0\0\0\0\0\0", 20, MANTRA_EUNSUPPORTED,
         "offset 12: nettrace format version 7 is not supported (versions 4 to 6 are)"},
        {"Nettrace\0\0\0\0\6\0\0\0\0\0\0\0\0\0\0\2", 24, MANTRA_EFORMAT,
         "offset 20: first block has kind 2 (expected 1, Trace)"},
        {"Nettrace\x14\0\0\0!FastSerialization.2", 32, MANTRA_EFORMAT,
         "offset 8: expected the FastSerialization header (int32 20, \"!FastSerialization.1\")"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        trace_run t;
        uint8_t *copy = malloc(cases[i].size ? cases[i].size : 1);
        memcpy(copy, cases[i].data, cases[i].size);
        run_memory(copy, cases[i].size, 0, &t);
        ck_assert_msg(t.rc == cases[i].rc, "case %zu: status %d (%s)", i, t.rc, t.error);
        ck_assert_str_eq(t.error, cases[i].error);
        free(copy);
    }
}
END_TEST

/* A missing end-of-stream tag after a complete block: all events, ETRUNCATED, exact text. */
START_TEST(missing_end_tag) {
    size_t size;
    uint8_t *d = load(small_traces[0], &size);
    if (d == NULL)
        return;
    trace_run t;
    run_memory(d, size - 1, 0, &t);
    ck_assert_int_eq(t.rc, MANTRA_ETRUNCATED);
    ck_assert_uint_eq(t.events, 3);
    ck_assert_str_eq(t.error, "offset 581: input ends after a complete block but before the end-of-stream marker "
                              "(incomplete trace)");
    free(d);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("reader_corrupt");
    TCase *tc = tcase_create("corrupt");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, cut_everywhere, 0, 2);
    tcase_add_loop_test(tc, flip_every_byte, 0, 2);
    tcase_add_test(tc, flip_random_large);
    tcase_add_test(tc, not_traces);
    tcase_add_test(tc, missing_end_tag);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
