/* mantra emit (tools/mantra/emit.c, docs/cli.md "mantra emit"): its JSON line, the session counters
 * against what `mantra stats --json` reads back, the exact event mix, every value of every event
 * (read back with the generated typed readers), the environment's session, usage and start errors.
 *
 * Scratch files go to $MANTRA_BINARY_DIR/test_emit/. */
#define _POSIX_C_SOURCE 200809L

#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "dotnet_readers.h"
#include "dotnet_registry.h"
#include "gen/run_tool.h"
#include "mantra/pump.h"
#include "mantra/reader.h"
#include "mantra/session.h"

static const char *tool(void) { return run_tool_env("MANTRA_TOOL", "build/tools/mantra"); }

/* $MANTRA_BINARY_DIR/test_emit/name (created folder). */
static char *scratch(const char *name) {
    char *dir = run_tool_path(run_tool_env("MANTRA_BINARY_DIR", "build"), "test_emit");
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        ck_abort_msg("cannot create %s", dir);
    char *p = run_tool_path(dir, name);
    free(dir);
    return p;
}

/* Runs `mantra emit ARGS...` (NULL-terminated list of up to 16). */
static void emit(run_tool_result *r, const char *const *args) {
    const char *argv[20] = {tool(), "emit"};
    size_t n = 2;
    for (; args[n - 2] && n < 19; n++)
        argv[n] = args[n - 2];
    argv[n] = NULL;
    ck_assert_int_eq(run_tool(argv, NULL, r), 0);
}

static void stats_json(run_tool_result *r, const char *trace) {
    const char *argv[] = {tool(), "stats", "--json", trace, NULL};
    ck_assert_int_eq(run_tool(argv, NULL, r), 0);
    ck_assert_msg(r->status == 0, "mantra stats --json %s: status %d\n%s", trace, r->status, r->err);
}

/* The unsigned number after "key": in json at or after from; aborts when absent. */
static uint64_t num_after(const char *from, const char *key) {
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(from, pat);
    ck_assert_msg(p != NULL, "no %s in %s", pat, from);
    return strtoull(p + strlen(pat), NULL, 10);
}

/* Like num_after, 0 when the key is absent (by_event entries). */
static uint64_t count_of(const char *json, const char *key) {
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(json, pat);
    return p ? strtoull(p + strlen(pat), NULL, 10) : 0;
}

/* Session k (0-based) of the JSON line: a pointer to its "{\"id\":". */
static const char *session_at(const char *json, int k) {
    const char *p = strstr(json, "\"sessions\":[");
    ck_assert_ptr_nonnull(p);
    for (int i = 0; i <= k; i++) {
        p = strstr(p, "{\"id\":");
        ck_assert_msg(p != NULL, "no session %d in %s", k, json);
        if (i < k)
            p++;
    }
    return p;
}

static int session_count(const char *json) {
    int n = 0;
    for (const char *p = strstr(json, "\"sessions\":["); p && (p = strstr(p, "{\"id\":")) != NULL; p++)
        n++;
    return n;
}

/* The expected number of events of each Demo event id (1..4) in one thread's M events. */
static void mix_counts(uint64_t m, int tick_only, uint64_t out[5]) {
    memset(out, 0, 5 * sizeof out[0]);
    if (tick_only) {
        out[1] = m;
        return;
    }
    for (int id = 2; id <= 4; id++)
        out[id] = m / 64 + (m % 64 > (uint64_t)(id - 1) ? 1 : 0);
    out[1] = m - out[2] - out[3] - out[4];
}

/* The session counters of the JSON line: the relations every run keeps. */
static void check_session(const char *s, uint64_t threads, uint64_t m, uint64_t *written, uint64_t *dropped) {
    uint64_t attempted = num_after(s, "attempted");
    *written = num_after(s, "written");
    *dropped = num_after(s, "dropped");
    /* every write of every thread reached the session, plus the session's own ProcessInfo at stop */
    ck_assert_uint_eq(attempted, threads * m + 1);
    ck_assert_uint_eq(*written + *dropped, attempted);
    ck_assert_uint_eq(num_after(s, "oversized"), 0);
}

/* ---- usage ---------------------------------------------------------------------------------- */

START_TEST(help_and_usage_errors) {
    run_tool_result r;
    emit(&r, (const char *[]){"--help", NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strncmp(r.out, "Usage: mantra emit", 18) == 0, "%s", r.out);
    ck_assert_str_eq(r.err, "");
    run_tool_free(&r);

    const char *argv[] = {tool(), "--help", NULL};
    ck_assert_int_eq(run_tool(argv, NULL, &r), 0);
    ck_assert_ptr_nonnull(strstr(r.out, "\n  emit "));
    run_tool_free(&r);

    static const struct {
        const char *args[4];
        const char *err;
    } bad[] = {
        {{"--bogus", NULL}, "mantra emit: unknown option '--bogus'\nTry 'mantra emit --help'.\n"},
        {{"trace.nettrace", NULL}, "mantra emit: unexpected argument 'trace.nettrace'\nTry 'mantra emit --help'.\n"},
        {{"--threads", "0", NULL}, "mantra emit: --threads needs a number from 1 to 1024 (got '0')\n"
                                   "Try 'mantra emit --help'.\n"},
        {{"--threads", NULL}, "mantra emit: --threads needs a number from 1 to 1024 (got '')\n"
                              "Try 'mantra emit --help'.\n"},
        {{"--events", "-5", NULL}, "mantra emit: --events needs a number of events per thread (got '-5')\n"
                                   "Try 'mantra emit --help'.\n"},
        {{"--events=12x", NULL}, "mantra emit: --events needs a number of events per thread (got '12x')\n"
                                 "Try 'mantra emit --help'.\n"},
        {{"--buffer-mb", "0", NULL}, "mantra emit: --buffer-mb needs a number of MB from 1 to 1048576 (got '0')\n"
                                     "Try 'mantra emit --help'.\n"},
        {{"--mix", "some", NULL}, "mantra emit: --mix is 'all' or 'tick' (got 'some')\nTry 'mantra emit --help'.\n"},
        {{"--trace", NULL}, "mantra emit: --trace needs a FILE\nTry 'mantra emit --help'.\n"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        emit(&r, bad[i].args);
        ck_assert_msg(r.status == 2, "%s: status %d", bad[i].args[0], r.status);
        ck_assert_str_eq(r.err, bad[i].err);
        ck_assert_str_eq(r.out, "");
        run_tool_free(&r);
    }
}
END_TEST

/* ---- start errors --------------------------------------------------------------------------- */

START_TEST(start_errors_exit_1) {
    run_tool_result r;
    char *t = scratch("bad.nettrace");
    emit(&r, (const char *[]){"--trace", t, "--providers", "Mantra-Demo:zz", NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "mantra emit: providers:13: keywords must be hexadecimal (0x...)\n");
    ck_assert_str_eq(r.out, "");
    run_tool_free(&r);

    emit(&r, (const char *[]){"--trace", "/nonexistent-dir/x.nettrace", NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strncmp(r.err, "mantra emit: ", 13) == 0 && strstr(r.err, "/nonexistent-dir/x.nettrace"), "%s",
                  r.err);
    run_tool_free(&r);

    /* a bad startup variable: mantra_init's error, nothing written */
    setenv("MANTRA_EnableEventPipe", "1", 1);
    setenv("MANTRA_EventPipeCircularMB", "abc", 1);
    emit(&r, (const char *[]){"--trace", t, NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "mantra emit: MANTRA_EventPipeCircularMB: \"abc\" is not a number\n");
    run_tool_free(&r);
    unsetenv("MANTRA_EnableEventPipe");
    unsetenv("MANTRA_EventPipeCircularMB");
    free(t);
}
END_TEST

/* ---- a cap that drops ----------------------------------------------------------------------- */

#define DROP_THREADS 4
#define DROP_EVENTS 200000

/* Runs the dropping configuration; the JSON line in *line (free it), the trace's stats in *st. */
static void run_dropping(const char *name, char **line, char **st) {
    char *t = scratch(name);
    run_tool_result r;
    emit(&r, (const char *[]){"--threads", "4", "--events", "200000", "--buffer-mb", "1", "--trace", t, NULL});
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ck_assert_str_eq(r.err, "");
    ck_assert_msg(r.out_len > 0 && r.out[r.out_len - 1] == '\n' && strchr(r.out, '\n') == r.out + r.out_len - 1,
                  "not one line: %s", r.out);
    *line = strdup(r.out);
    run_tool_free(&r);
    stats_json(&r, t);
    *st = strdup(r.out);
    run_tool_free(&r);
    free(t);
}

START_TEST(drops_are_counted) {
    char *line, *st;
    run_dropping("drop.nettrace", &line, &st);
    ck_assert_uint_eq(num_after(line, "threads"), DROP_THREADS);
    ck_assert_uint_eq(num_after(line, "events_per_thread"), DROP_EVENTS);
    ck_assert_ptr_nonnull(strstr(line, "\"mix\":\"all\""));
    ck_assert_int_eq(session_count(line), 1);
    const char *s = session_at(line, 0);
    ck_assert_ptr_nonnull(strstr(s, "\"output\":\""));
    uint64_t written, dropped;
    check_session(s, DROP_THREADS, DROP_EVENTS, &written, &dropped);
    ck_assert_msg(dropped > 0, "a 1 MB cap and 800000 events dropped nothing: %s", line);
    ck_assert_uint_eq(num_after(s, "files"), 1);
    ck_assert_uint_eq(num_after(s, "blocked"), 0);

    /* the trace holds exactly what the session wrote */
    ck_assert_msg(strstr(st, "\"complete\":true") != NULL, "%s", st);
    ck_assert_uint_eq(num_after(st, "events"), written);
    ck_assert_ptr_nonnull(strstr(st, "\"errors\":[]"));
    ck_assert_uint_eq(num_after(st, "decode_errors"), 0);
    uint64_t expect[5], demo = 0;
    mix_counts(DROP_EVENTS, 0, expect);
    for (int id = 1; id <= 4; id++) {
        char key[32];
        snprintf(key, sizeof key, "Mantra-Demo/%d/v0", id);
        uint64_t n = count_of(st, key);
        ck_assert_msg(n <= DROP_THREADS * expect[id], "%s: %" PRIu64 " > %" PRIu64, key, n, DROP_THREADS * expect[id]);
        demo += n;
    }
    /* the rest is the ProcessInfo event, which a full cap may drop as well */
    uint64_t pi = count_of(st, "Microsoft-DotNETCore-EventPipe/1/v0");
    ck_assert_uint_le(pi, 1);
    ck_assert_uint_eq(demo + pi, written);
    free(line);
    free(st);
}
END_TEST

/* The reader's dropped (sequence-number gaps) equals the session's dropped. */
START_TEST(reader_dropped_equals_session_dropped) {
    char *line, *st;
    run_dropping("drop-seq.nettrace", &line, &st);
    ck_assert_uint_eq(num_after(st, "dropped"), num_after(session_at(line, 0), "dropped"));
    free(line);
    free(st);
}
END_TEST

/* ---- no drops: the exact mix and every value ------------------------------------------------ */

/* Reads a trace of `mantra emit --mix all` written without drops and checks every Demo event's
 * values against (thread number, index); counts per event id in counts[1..4]. */
static void verify_values(const char *path, uint32_t threads, uint64_t m, uint64_t counts[5]) {
    mantra_reader_options o = {0, 0};
    mantra_reader *r = mantra_reader_new(&o);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(mantra_reader_open_file(r, path), 0);
    /* per OS thread: its emit thread number and the next index expected */
    uint64_t os_tid[64];
    uint32_t number[64];
    uint64_t next[64];
    size_t nthreads = 0;
    memset(counts, 0, 5 * sizeof counts[0]);
    const mantra_trace_event *ev;
    int rc;
    while ((rc = mantra_reader_next(r, &ev)) > 0) {
        if (strcmp(ev->metadata->provider, "Mantra-Demo") != 0)
            continue;
        uint32_t id = ev->metadata->event_id;
        ck_assert_uint_ge(id, 1);
        ck_assert_uint_le(id, 4);
        counts[id]++;
        size_t k;
        for (k = 0; k < nthreads && os_tid[k] != ev->thread_id; k++)
            ;
        if (k == nthreads) {
            /* a thread's first event is Tick index 0 */
            ck_assert_uint_lt(nthreads, 64);
            mantra_Demo_Tick_fields f;
            ck_assert_uint_eq(id, 1);
            ck_assert_int_eq(mantra_Demo_Tick_decode(ev->payload, ev->payload_size, 8, &f), 0);
            ck_assert_uint_eq(f.Index, 0);
            ck_assert_uint_lt(f.Thread, threads);
            for (size_t j = 0; j < nthreads; j++)
                ck_assert_uint_ne(number[j], f.Thread);
            os_tid[k] = ev->thread_id;
            number[k] = f.Thread;
            next[k] = 0;
            nthreads++;
        }
        const uint32_t t = number[k];
        const uint64_t i = next[k]++;
        const uint64_t rr = i / 64;
        const uint64_t kind = i % 64 >= 1 && i % 64 <= 3 ? i % 64 + 1 : 1;
        ck_assert_msg(id == kind, "thread %u index %" PRIu64 ": event %u, expected %" PRIu64, t, i, id, kind);
        if (id == 1) {
            mantra_Demo_Tick_fields f;
            ck_assert_int_eq(mantra_Demo_Tick_decode(ev->payload, ev->payload_size, 8, &f), 0);
            ck_assert_uint_eq(f.Thread, t);
            ck_assert_uint_eq(f.Index, i);
        } else if (id == 2) {
            mantra_Demo_Scalars_fields f;
            ck_assert_int_eq(mantra_Demo_Scalars_decode(ev->payload, ev->payload_size, 8, &f), 0);
            ck_assert_int_eq(f.I8, -(int)(i % 128));
            ck_assert_uint_eq(f.U8, rr % 3);
            ck_assert_str_eq(mantra_Demo_Phase_name(f.U8), rr % 3 == 0 ? "Start" : rr % 3 == 1 ? "Steady" : "Finish");
            ck_assert_int_eq(f.I16, -(int)(t + 1));
            ck_assert_uint_eq(f.U16, i & 0xFFFF);
            ck_assert_int_eq(f.I32, -(int64_t)(i % 1000000));
            ck_assert_uint_eq(f.U32, t);
            ck_assert_int_eq(f.I64, -(int64_t)i);
            ck_assert_uint_eq(f.U64, ((uint64_t)t << 48) | i);
            ck_assert(f.F32 == (float)(i % 1024) * 0.5f);
            ck_assert(f.F64 == (double)i / 4.0 + (double)t);
            ck_assert_int_eq(f.Flag, (rr & 1) != 0);
            ck_assert_uint_eq(f.Id.data1, t);
            ck_assert_uint_eq(f.Id.data2, i & 0xFFFF);
            ck_assert_uint_eq(f.Id.data3, (i >> 16) & 0xFFFF);
            for (int b = 0; b < 8; b++)
                ck_assert_uint_eq(f.Id.data4[b], (i >> (8 * b)) & 0xFF);
            ck_assert_uint_eq(f.Address, 0x10000u + (i % 4096) * 8u);
            ck_assert_uint_eq(f.When, UINT64_C(116444736000000000) + i * UINT64_C(10000000));
        } else if (id == 3) {
            mantra_Demo_Strings_fields f;
            ck_assert_int_eq(mantra_Demo_Strings_decode(ev->payload, ev->payload_size, 8, &f), 0);
            char want[96], got[96];
            snprintf(want, sizeof want, "Gr\xC3\xBC\xC3\x9F" "e \xE4\xB8\x96\xE7\x95\x8C \xF0\x9F\x98\x80 t%u i%" PRIu64,
                     t, i);
            mantra_str16_to_utf8(f.Wide, got, sizeof got);
            ck_assert_str_eq(got, want);
            /* "Grüße 世界 😀 t" is 21 UTF-8 bytes and 13 UTF-16 units (the emoji takes two), then ASCII */
            ck_assert_uint_eq(f.Length, f.Wide.units);
            ck_assert_uint_eq(f.Wide.units, strlen(want) - 8);
            snprintf(want, sizeof want, "t%u/i%" PRIu64 " na\xC3\xAFve", t, i);
            ck_assert_uint_eq(f.Narrow.len, strlen(want));
            ck_assert(memcmp(f.Narrow.data, want, f.Narrow.len) == 0);
        } else {
            mantra_Demo_Arrays_fields f;
            ck_assert_int_eq(mantra_Demo_Arrays_decode(ev->payload, ev->payload_size, 8, &f), 0);
            ck_assert_uint_eq(f.N, 1 + rr % 8);
            ck_assert_uint_eq(f.Values.count, f.N);
            for (uint32_t j = 0; j < f.N; j++)
                ck_assert_uint_eq(mantra_array_u32(f.Values, j), (uint32_t)(i + j) ^ (t << 24));
            ck_assert_uint_eq(f.Size, rr % 17);
            ck_assert_uint_eq(f.Blob.size, f.Size);
            for (uint32_t j = 0; j < f.Size; j++)
                ck_assert_uint_eq(f.Blob.data[j], (t + i + j) & 0xFF);
            ck_assert_uint_eq(f.Count, rr % 4);
            mantra_cursor c = {f.Items.data, f.Items.size, 0, 8};
            for (uint32_t j = 0; j < f.Count; j++) {
                mantra_Demo_tpl_Arrays_Items_elem e;
                ck_assert_int_eq(mantra_Demo_tpl_Arrays_Items_next(&c, &e), 0);
                ck_assert_uint_eq(e.Key, ((uint64_t)t << 32) | (uint32_t)(i + j));
                char name[32];
                snprintf(name, sizeof name, "item%u\xC3\xA9", j);
                ck_assert_msg(mantra_str16_equals_utf8(e.Name, name), "item %u of thread %u index %" PRIu64, j, t, i);
            }
            ck_assert_uint_eq(c.pos, c.size);
        }
    }
    ck_assert_msg(rc == 0, "%s: %s", path, mantra_reader_last_error(r));
    ck_assert_int_eq(mantra_reader_complete(r), 1);
    ck_assert_uint_eq(nthreads, threads);
    for (size_t k = 0; k < nthreads; k++)
        ck_assert_uint_eq(next[k], m);
    mantra_reader_free(r);
}

START_TEST(no_drops_exact_mix_and_values) {
    /* 1000 = 15 * 64 + 40: 16 Scalars, 16 Strings, 16 Arrays and 952 Ticks per thread */
    char *t = scratch("exact.nettrace");
    run_tool_result r;
    emit(&r, (const char *[]){"--threads", "3", "--events", "1000", "--trace", t, NULL});
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    char *line = strdup(r.out);
    run_tool_free(&r);
    const char *s = session_at(line, 0);
    uint64_t written, dropped;
    check_session(s, 3, 1000, &written, &dropped);
    ck_assert_uint_eq(dropped, 0);
    ck_assert_uint_eq(num_after(s, "files"), 1);
    struct stat sb;
    ck_assert_int_eq(stat(t, &sb), 0);
    ck_assert_uint_eq(num_after(s, "bytes"), (uint64_t)sb.st_size);

    stats_json(&r, t);
    ck_assert_ptr_nonnull(strstr(r.out, "\"complete\":true"));
    ck_assert_uint_eq(num_after(r.out, "events"), written);
    ck_assert_uint_eq(num_after(r.out, "dropped"), 0);
    uint64_t expect[5];
    mix_counts(1000, 0, expect);
    ck_assert_uint_eq(expect[1], 952);
    ck_assert_uint_eq(expect[2], 16);
    ck_assert_uint_eq(count_of(r.out, "Mantra-Demo/1/v0"), 3 * expect[1]);
    ck_assert_uint_eq(count_of(r.out, "Mantra-Demo/2/v0"), 3 * expect[2]);
    ck_assert_uint_eq(count_of(r.out, "Mantra-Demo/3/v0"), 3 * expect[3]);
    ck_assert_uint_eq(count_of(r.out, "Mantra-Demo/4/v0"), 3 * expect[4]);
    ck_assert_uint_eq(count_of(r.out, "Microsoft-DotNETCore-EventPipe/1/v0"), 1);
    run_tool_free(&r);

    uint64_t counts[5];
    verify_values(t, 3, 1000, counts);
    for (int id = 1; id <= 4; id++)
        ck_assert_uint_eq(counts[id], 3 * expect[id]);
    free(line);
    free(t);
}
END_TEST

START_TEST(mix_tick_and_keyword_filter) {
    char *t = scratch("tick.nettrace");
    run_tool_result r;
    emit(&r, (const char *[]){"--threads", "2", "--events", "777", "--mix", "tick", "--trace", t, NULL});
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "\"mix\":\"tick\""));
    uint64_t written, dropped;
    check_session(session_at(r.out, 0), 2, 777, &written, &dropped);
    ck_assert_uint_eq(dropped, 0);
    run_tool_free(&r);
    stats_json(&r, t);
    ck_assert_uint_eq(count_of(r.out, "Mantra-Demo/1/v0"), 2 * 777);
    ck_assert_uint_eq(num_after(r.out, "events"), 2 * 777 + 1);
    run_tool_free(&r);

    /* only the Strings keyword (0x4): the other writes never reach the session */
    emit(&r, (const char *[]){"--threads", "2", "--events", "1000", "--providers", "Mantra-Demo:0x4:5", "--trace", t,
                              NULL});
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ck_assert_uint_eq(num_after(session_at(r.out, 0), "attempted"), 2 * 16 + 1);
    run_tool_free(&r);
    stats_json(&r, t);
    ck_assert_uint_eq(count_of(r.out, "Mantra-Demo/3/v0"), 2 * 16);
    ck_assert_uint_eq(count_of(r.out, "Mantra-Demo/1/v0"), 0);
    run_tool_free(&r);
    free(t);
}
END_TEST

/* ---- block mode, rotation ------------------------------------------------------------------- */

START_TEST(block_mode) {
    char *t = scratch("block.nettrace");
    run_tool_result r;
    emit(&r, (const char *[]){"--threads", "2", "--events", "50000", "--buffer-mb", "1", "--block", "--mix", "tick",
                              "--trace", t, NULL});
    if (mantra_threadless()) {
        ck_assert_int_eq(r.status, 1);
        ck_assert_msg(strncmp(r.err, "mantra emit: ", 13) == 0, "%s", r.err);
        ck_assert_str_eq(r.out, "");
    } else {
        ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
        uint64_t written, dropped;
        check_session(session_at(r.out, 0), 2, 50000, &written, &dropped);
        run_tool_free(&r);
        stats_json(&r, t);
        ck_assert_ptr_nonnull(strstr(r.out, "\"complete\":true"));
        ck_assert_uint_eq(num_after(r.out, "events"), written);
    }
    run_tool_free(&r);
    free(t);
}
END_TEST

START_TEST(rotation) {
    char *t = scratch("rot.nettrace");
    /* remove files of an earlier run */
    for (uint32_t n = 0; n < 64; n++) {
        char p[4096];
        ck_assert_int_ge(mantra_session_rotated_path(t, n, p, sizeof p), 0);
        unlink(p);
    }
    run_tool_result r;
    emit(&r, (const char *[]){"--threads", "2", "--events", "100000", "--mix", "tick", "--rotate", "1", "--trace", t,
                              NULL});
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    const char *s = session_at(r.out, 0);
    uint64_t written, dropped;
    check_session(s, 2, 100000, &written, &dropped);
    ck_assert_uint_eq(dropped, 0);
    uint64_t files = num_after(s, "files"), bytes = num_after(s, "bytes");
    ck_assert_uint_ge(files, 2);
    run_tool_free(&r);
    uint64_t events = 0, size = 0;
    for (uint32_t n = 0; n < files; n++) {
        char p[4096];
        ck_assert_int_ge(mantra_session_rotated_path(t, n, p, sizeof p), 0);
        stats_json(&r, p);
        ck_assert_msg(strstr(r.out, "\"complete\":true") != NULL, "%s: %s", p, r.out);
        events += num_after(r.out, "events");
        run_tool_free(&r);
        struct stat sb;
        ck_assert_int_eq(stat(p, &sb), 0);
        size += (uint64_t)sb.st_size;
    }
    char p[4096];
    ck_assert_int_ge(mantra_session_rotated_path(t, (uint32_t)files, p, sizeof p), 0);
    ck_assert_int_ne(access(p, F_OK), 0);
    ck_assert_uint_eq(events, written);
    ck_assert_uint_eq(size, bytes);
    free(t);
}
END_TEST

/* ---- the environment's session -------------------------------------------------------------- */

START_TEST(environment_session) {
    char *envpath = scratch("env.nettrace");
    char *t = scratch("env-own.nettrace");
    unlink(envpath);
    setenv("MANTRA_EnableEventPipe", "1", 1);
    setenv("MANTRA_EventPipeConfig", "Mantra-Demo:0x1:4", 1);
    setenv("MANTRA_EventPipeOutputPath", envpath, 1);
    unsetenv("MANTRA_EventPipeCircularMB");

    /* no --trace: the environment's session only */
    run_tool_result r;
    emit(&r, (const char *[]){"--threads", "2", "--events", "1000", NULL});
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ck_assert_int_eq(session_count(r.out), 1);
    const char *s = session_at(r.out, 0);
    ck_assert_ptr_nonnull(strstr(s, "\"output\":\"env\""));
    /* Ticks only: 2 * 952, plus ProcessInfo */
    ck_assert_uint_eq(num_after(s, "attempted"), 2 * 952 + 1);
    ck_assert_uint_eq(num_after(s, "written"), 2 * 952 + 1);
    run_tool_free(&r);
    stats_json(&r, envpath);
    ck_assert_ptr_nonnull(strstr(r.out, "\"complete\":true"));
    ck_assert_uint_eq(count_of(r.out, "Mantra-Demo/1/v0"), 2 * 952);
    run_tool_free(&r);

    /* session options without --trace have nothing to configure: a note */
    emit(&r, (const char *[]){"--events", "10", "--buffer-mb", "4", NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.err, "ignored"));
    ck_assert_int_eq(session_count(r.out), 1);
    run_tool_free(&r);

    /* --trace as well: both sessions, the environment's first */
    emit(&r, (const char *[]){"--threads", "2", "--events", "1000", "--trace", t, NULL});
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ck_assert_int_eq(session_count(r.out), 2);
    ck_assert_ptr_nonnull(strstr(session_at(r.out, 0), "\"output\":\"env\""));
    ck_assert_uint_eq(num_after(session_at(r.out, 0), "attempted"), 2 * 952 + 1);
    uint64_t written, dropped;
    check_session(session_at(r.out, 1), 2, 1000, &written, &dropped);
    ck_assert_uint_eq(dropped, 0);
    run_tool_free(&r);
    stats_json(&r, t);
    ck_assert_uint_eq(num_after(r.out, "events"), written);
    run_tool_free(&r);
    stats_json(&r, envpath);
    ck_assert_uint_eq(num_after(r.out, "events"), 2 * 952 + 1);
    run_tool_free(&r);
    unsetenv("MANTRA_EnableEventPipe");
    unsetenv("MANTRA_EventPipeConfig");
    unsetenv("MANTRA_EventPipeOutputPath");
    free(envpath);
    free(t);
}
END_TEST

/* Strings and Arrays carry partial trace metadata (nettrace cannot describe counted arrays or
 * AnsiString); with the manifest the reader decodes them whole (bug: it used the manifest only
 * when the metadata had no fields at all). */
START_TEST(partial_metadata_decoded_with_the_manifest) {
    char *t = scratch("partial.nettrace");
    run_tool_result r;
    emit(&r, (const char *[]){"--threads", "1", "--events", "4", "--trace", t, NULL});
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    run_tool_free(&r);
    char *manifest = run_tool_path(run_tool_env("MANTRA_SOURCE_DIR", "."), "manifest/dotnet.yaml");
    const char *argv[] = {tool(), "dump", "--json", "--manifest", manifest, t, NULL};
    ck_assert_int_eq(run_tool(argv, NULL, &r), 0);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "\"fields\":{\"Wide\":\"Grüße 世界 😀 t0 i2\",\"Length\":17,"
                                        "\"Narrow\":\"t0/i2 naïve\"},\"field_source\":\"manifest\""));
    ck_assert_ptr_nonnull(strstr(r.out, "\"fields\":{\"N\":1,\"Values\":[3],\"Size\":0,\"Blob\":\"\","
                                        "\"Count\":0,\"Items\":[]},\"field_source\":\"manifest\""));
    /* fully described events keep their trace metadata */
    ck_assert_ptr_nonnull(strstr(r.out, "\"fields\":{\"Thread\":0,\"Index\":0},\"field_source\":\"metadata\""));
    run_tool_free(&r);
    free(manifest);
    free(t);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("mantra emit");
    TCase *tc = tcase_create("usage");
    tcase_add_test(tc, help_and_usage_errors);
    tcase_add_test(tc, start_errors_exit_1);
    suite_add_tcase(s, tc);
    tc = tcase_create("counts");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, drops_are_counted);
    tcase_add_test(tc, no_drops_exact_mix_and_values);
    tcase_add_test(tc, mix_tick_and_keyword_filter);
    tcase_add_test(tc, block_mode);
    tcase_add_test(tc, rotation);
    tcase_add_test(tc, environment_session);
    tcase_add_test(tc, partial_metadata_decoded_with_the_manifest);
    suite_add_tcase(s, tc);
    /* separate: the reader's sequence-gap count against the session's (being aligned) */
    tc = tcase_create("reader_dropped");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, reader_dropped_equals_session_dropped);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    /* the tool's own environment must not start a session unless a test asks for it */
    unsetenv("MANTRA_EnableEventPipe");
    return run_suite(suite(), CK_FORK_GETENV);
}
