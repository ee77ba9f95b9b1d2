/* The reader over every trace of $MANTRA_SHARED_DIR/fixtures/nettrace (see SOURCES.md there).
 * Expected values come from SOURCES.md (event counts), from TraceEvent's baseline files (NAME.baseline.txt)
 * (per-event counts, parsed here; first-event values, hard-coded below with their baseline text)
 * and from synthetic-v6/NAME.expected.json (hard-coded below). */
#define _POSIX_C_SOURCE 200809L

#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "gen/run_tool.h"
#include "mantra/decode.h"
#include "mantra/reader.h"
#include "reader_test_util.h"
#ifdef MANTRA_TEST_HAVE_DOTNET
#include "dotnet_registry.h"
#endif

#define PV "microsoft-perfview/"
#define CHECKPOINTS PV "eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace"
#define ARRAYTYPES PV "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace"
#define OBJVER4 PV "eventpipe-dotnetcore3.0-win-x64-objver4.nettrace"
#define MIXED PV "mixed_managed_external_samples.nettrace"
#define NETPERF PV "eventpipe-dotnetcore2.1-linux-x64-tracelogging.netperf"
#define TRUNCATED "dotnet-diagnostics/trace.nettrace"
#define CALENDAR "erlendthune-RememberCalendar/trace.nettrace"
#define V6MIN "synthetic-v6/te-test-ParseMinimalTraceV6.nettrace"
#define V6HDR "synthetic-v6/te-test-ParseV6CompressedEventHeaders.nettrace"

/* Loads a fixture; NULL (after SKIP, or a failure when it is required) when absent. */
static uint8_t *load(const char *rel, size_t *size) {
    int must_fail;
    char *p = fixture_path(rel, &must_fail);
    if (p == NULL) {
        ck_assert_msg(!must_fail, "fixture %s is required (MANTRA_REQUIRE_INTEROP=1)", rel);
        return NULL;
    }
    uint8_t *d = (uint8_t *)run_tool_read_file(p, size);
    ck_assert_msg(d != NULL, "cannot read %s", p);
    free(p);
    return d;
}

typedef struct expect {
    const char *rel;
    int rc;
    int complete;
    int format_version;
    uint64_t events, metadata, stacks, sequence_points, dropped, size;
} expect;

/* Event counts as SOURCES.md gives them (105,540 / 1,970 / 32,247 / 4,693 / 3); the rest from
 * our own reading, cross-checked with the block counts of SOURCES.md (18 SPBlocks, 1,762 stacks,
 * 6 SPBlocks in the truncated trace). */
static const expect fixtures[] = {
    {CHECKPOINTS, 0, 1, 4, 3, 1, 1, 1, 0, 582},
    {ARRAYTYPES, 0, 1, 4, 1970, 13, 4, 1, 0, 486814},
    {OBJVER4, 0, 1, 4, 105540, 39, 1762, 18, 0, 4826850},
    {MIXED, 0, 1, 4, 32247, 29, 230, 5, 0, 493898},
    {CALENDAR, 0, 1, 4, 4693, 50, 25, 1, 0, 1600150},
    {TRUNCATED, MANTRA_ETRUNCATED, 0, 4, 19842, 27, 607, 6, 0, 4170673},
    {V6MIN, 0, 1, 6, 0, 0, 0, 0, 0, 68},
    /* 3 "dropped": the test stream's sequence numbers jump per capture thread (TE counts them too) */
    {V6HDR, 0, 1, 6, 7, 2, 0, 0, 3, 306},
};

static void check_run(const expect *x, const trace_run *t, const char *how) {
    ck_assert_msg(t->rc == x->rc, "%s (%s): status %d, expected %d (%s)", x->rel, how, t->rc, x->rc, t->error);
    ck_assert_msg(t->complete == x->complete, "%s (%s): complete %d", x->rel, how, t->complete);
    ck_assert_int_eq(t->format_version, x->format_version);
    ck_assert_msg(t->events == x->events, "%s (%s): %" PRIu64 " events, expected %" PRIu64, x->rel, how, t->events,
                  x->events);
    ck_assert_uint_eq(t->stats.events, x->events);
    ck_assert_uint_eq(t->stats.metadata, x->metadata);
    ck_assert_uint_eq(t->stats.stacks, x->stacks);
    ck_assert_uint_eq(t->stats.sequence_points, x->sequence_points);
    ck_assert_uint_eq(t->stats.dropped, x->dropped);
    /* complete traces are read to the exact end; the truncated one up to its last complete block */
    ck_assert_msg(t->stats.bytes_read == x->size, "%s (%s): %" PRIu64 " bytes read, expected %" PRIu64, x->rel, how,
                  t->stats.bytes_read, x->size);
}

START_TEST(fixture_memory) {
    const expect *x = &fixtures[_i];
    size_t size;
    uint8_t *d = load(x->rel, &size);
    if (d == NULL)
        return;
    trace_run t;
    run_memory(d, size, 0, &t);
    check_run(x, &t, "memory");
    run_memory(d, size, MANTRA_READER_SORTED, &t);
    check_run(x, &t, "memory, sorted");
    free(d);
}
END_TEST

/* The same through a file path and through a pipe (a descriptor that cannot seek). */
START_TEST(fixture_file_and_pipe) {
    const expect *x = &fixtures[_i];
    int must_fail;
    char *p = fixture_path(x->rel, &must_fail);
    if (p == NULL) {
        ck_assert(!must_fail);
        return;
    }
    for (int mode = 0; mode < 2; mode++) {
        mantra_reader *r = mantra_reader_new(NULL);
        ck_assert_ptr_nonnull(r);
        int fds[2] = {-1, -1};
        pid_t child = -1;
        int rc;
        if (mode == 0) {
            rc = mantra_reader_open_file(r, p);
        } else {
            ck_assert_int_eq(pipe(fds), 0);
            child = fork();
            ck_assert_int_ge(child, 0);
            if (child == 0) {
                close(fds[0]);
                size_t n;
                char *d = run_tool_read_file(p, &n);
                size_t off = 0;
                while (d && off < n) {
                    size_t chunk = n - off < 777 ? n - off : 777; /* odd chunks: blocks straddle reads */
                    ssize_t k = write(fds[1], d + off, chunk);
                    if (k <= 0)
                        _exit(1);
                    off += (size_t)k;
                }
                _exit(0);
            }
            close(fds[1]);
            rc = mantra_reader_open_fd(r, fds[0]);
        }
        uint64_t events = 0;
        const mantra_trace_event *ev;
        if (rc == 0)
            while ((rc = mantra_reader_next(r, &ev)) > 0)
                events++;
        ck_assert_msg(rc == x->rc, "%s (%s): %d %s", x->rel, mode ? "pipe" : "file", rc, mantra_reader_last_error(r));
        ck_assert_uint_eq(events, x->events);
        ck_assert_int_eq(mantra_reader_complete(r), x->complete);
        ck_assert_uint_eq(mantra_reader_get_stats(r)->bytes_read, x->size);
        if (mode == 0 && x->complete)
            ck_assert_uint_eq(mantra_reader_get_stats(r)->total_bytes, x->size);
        mantra_reader_free(r);
        if (mode == 1) {
            close(fds[0]);
            int st;
            waitpid(child, &st, 0);
        }
    }
    free(p);
}
END_TEST

START_TEST(truncated_error_text) {
    size_t size;
    uint8_t *d = load(TRUNCATED, &size);
    if (d == NULL)
        return;
    trace_run t;
    run_memory(d, size, 0, &t);
    /* SOURCES.md: the last EventBlock declares 5,488 content bytes, the file ends 2,048 short */
    ck_assert_str_eq(t.error, "offset 4170673: EventBlock truncated: it declares 5488 content bytes ending at offset "
                              "4176192, the input ends at offset 4174144 (incomplete trace)");
    ck_assert_uint_eq(size, 4174144);
    free(d);
}
END_TEST

START_TEST(netperf_refused) {
    size_t size;
    uint8_t *d = load(NETPERF, &size);
    if (d == NULL)
        return;
    trace_run t;
    run_memory(d, size, 0, &t);
    ck_assert_int_eq(t.rc, MANTRA_EUNSUPPORTED);
    ck_assert_int_eq(t.format_version, 3);
    ck_assert_uint_eq(t.events, 0);
    ck_assert_str_eq(t.error, "offset 0: NetPerf format (version 3, no \"Nettrace\" magic) is not supported: mantra "
                              "reads nettrace V4, V5 and V6 traces (.NET Core 3.0 and later)");
    free(d);
}
END_TEST

/* ---- the 582-byte .NET 6 trace, value by value ----
 * Baseline: Microsoft-Windows-DotNETRuntimeRundown/ExecutionCheckpointRundown/ExecutionCheckpointDCEnd, 3,
 *   <Event MSec="1753.7906" PID="9832" TID="25112" ClrInstanceID="9" Name="RuntimeInit"
 *    Timestamp="11,111,925,598,665"/>
 * The runtime writes minimal metadata for it (no fields; dotnet/runtime,
 * src/native/eventpipe/ep-metadata-generator.c, event_build_minimum_metadata): the field list below is the
 * ClrEtwAll.man template of ExecutionCheckpointDCEnd (id 300), given through a provider
 * description as a generated registry would. */
static const uint8_t checkpoint_md[] = {
    0x2c, 0x01, 0, 0,             /* EventId 300 */
    0, 0,                         /* EventName "" */
    0, 0, 0, 0, 0, 0, 0, 0,       /* Keywords */
    0, 0, 0, 0,                   /* Version 0 */
    4, 0, 0, 0,                   /* Level */
    3, 0, 0, 0,                   /* 3 fields */
    8, 0, 0, 0, 'C', 0, 'l', 0, 'r', 0, 'I', 0, 'n', 0, 's', 0, 't', 0, 'a', 0, 'n', 0, 'c', 0, 'e', 0, 'I', 0,
    'D', 0, 0, 0,
    18, 0, 0, 0, 'N', 0, 'a', 0, 'm', 0, 'e', 0, 0, 0,
    11, 0, 0, 0, 'T', 0, 'i', 0, 'm', 0, 'e', 0, 's', 0, 't', 0, 'a', 0, 'm', 0, 'p', 0, 0, 0,
};
static const mantra_event_desc checkpoint_events[] = {
    {"ExecutionCheckpointDCEnd", "ExecutionCheckpointDCEnd", 0, 300, 0, 4, 0, 0, 0, 3, checkpoint_md,
     sizeof checkpoint_md},
};
static mantra_event_state checkpoint_states[1];
static const mantra_provider_desc checkpoint_provider = {
    "Microsoft-Windows-DotNETRuntimeRundown", "Rundown", {0, 0, 0, {0}}, checkpoint_events, checkpoint_states, 1};

typedef struct collect {
    char names[8][32];
    char text[8][64];
    uint64_t u[8];
    int n;
} collect;

static int collect_scalar(void *ctx, const mantra_value *v) {
    collect *c = ctx;
    if (c->n >= 8)
        return -1;
    snprintf(c->names[c->n], sizeof c->names[0], "%s", v->name);
    c->u[c->n] = v->u;
    c->text[c->n][0] = '\0';
    if (v->type == MANTRA_TYPE_STRING) {
        mantra_str16 s = {v->data, v->count};
        mantra_str16_to_utf8(s, c->text[c->n], sizeof c->text[0]);
    }
    c->n++;
    return 0;
}

START_TEST(checkpoints_exact_values) {
    size_t size;
    uint8_t *d = load(CHECKPOINTS, &size);
    if (d == NULL)
        return;
    ck_assert_uint_eq(size, 582);
    mantra_reader *r = mantra_reader_new(NULL);
    ck_assert_int_eq(mantra_reader_add_provider(r, &checkpoint_provider), 0);
    ck_assert_int_eq(mantra_reader_open_memory(r, d, size), 0);
    const mantra_trace_info *info = mantra_reader_info(r);
    ck_assert_int_eq(info->format_version, 4);
    ck_assert_uint_eq(info->pointer_size, 8);
    ck_assert_uint_eq(info->process_id, 9832); /* PID="9832" */
    ck_assert_int_eq(info->qpc_frequency, 10000000);
    const char *names[3] = {"RuntimeInit", "RuntimeSuspend", "RuntimeResumed"};
    const mantra_trace_event *ev;
    int n = 0, rc;
    while ((rc = mantra_reader_next(r, &ev)) > 0) {
        ck_assert_str_eq(ev->metadata->provider, "Microsoft-Windows-DotNETRuntimeRundown");
        ck_assert_uint_eq(ev->metadata->event_id, 300);
        ck_assert_uint_eq(ev->version, 0);
        ck_assert_str_eq(ev->metadata->name, "");
        ck_assert_int_eq(ev->metadata->fields_from_registry, 1);
        ck_assert_uint_eq(ev->thread_id, 25112); /* TID="25112" */
        ck_assert_uint_eq(ev->sequence, (uint32_t)n + 1);
        ck_assert_uint_eq(ev->processor, 0xFFFFFFFFu);
        ck_assert_uint_eq(ev->stack_count, 0);
        collect c;
        memset(&c, 0, sizeof c);
        ck_assert_int_eq(mantra_decode_event(ev, &(mantra_field_visitor){collect_scalar, 0, 0, 0, 0}, &c), 0);
        ck_assert_int_eq(c.n, 3);
        ck_assert_str_eq(c.names[0], "ClrInstanceID");
        ck_assert_uint_eq(c.u[0], 9);
        ck_assert_str_eq(c.names[1], "Name");
        ck_assert_str_eq(c.text[1], names[n]);
        ck_assert_str_eq(c.names[2], "Timestamp");
        if (n == 0) {
            ck_assert_uint_eq(c.u[2], UINT64_C(11111925598665));
            ck_assert_int_eq(ev->timestamp, INT64_C(11111943296237));
            /* MSec="1753.7906": (timestamp - SyncTimeQPC) / frequency in ms */
            double ms = (double)(ev->timestamp - info->sync_time_qpc) * 1000.0 / (double)info->qpc_frequency;
            ck_assert_msg(fabs(ms - 1753.7906) < 0.00006, "MSec %.4f", ms);
        }
        n++;
    }
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(n, 3);
    mantra_reader_free(r);
    free(d);
}
END_TEST

/* ---- per-event counts against the TraceEvent baselines ----
 * The baseline has one line per TraceEvent event name: "Provider/Name, COUNT, <Event .../>". We
 * key events by (provider, event id), so the comparison is per provider, of the sorted lists of
 * counts, with what TraceEvent does differently (documented per file):
 *  - it merges event versions and events it cannot name (DotNETRuntime 200 + 201 are both "GC");
 *  - its baseline generator leaves out MethodILToNativeMap (DotNETRuntime 190, Rundown 150) and
 *    MethodDCEndVerbose (Rundown 144). */
typedef struct exclusion {
    const char *provider;
    uint32_t event_id;
    int merge_into; /* -1: left out of the baseline; else event id it is merged with */
} exclusion;

static const exclusion exclusions[] = {
    {"Microsoft-Windows-DotNETRuntime", 190, -1},
    {"Microsoft-Windows-DotNETRuntimeRundown", 150, -1},
    {"Microsoft-Windows-DotNETRuntimeRundown", 144, -1},
    {"Microsoft-Windows-DotNETRuntime", 201, 200},
};

typedef struct pcount {
    char provider[64];
    uint32_t event_id;
    uint64_t count;
} pcount;

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void check_baseline(const char *rel) {
    size_t size, bsize;
    char brel[256];
    snprintf(brel, sizeof brel, "%s.baseline.txt", rel);
    uint8_t *d = load(rel, &size);
    if (d == NULL)
        return;
    char *base = (char *)load(brel, &bsize);
    if (base == NULL) {
        free(d);
        return;
    }
    static pcount ours[512];
    size_t nours = 0;
    mantra_reader *r = mantra_reader_new(NULL);
    ck_assert_int_eq(mantra_reader_open_memory(r, d, size), 0);
    const mantra_trace_event *ev;
    int rc;
    while ((rc = mantra_reader_next(r, &ev)) > 0) {
        uint32_t id = ev->metadata->event_id;
        int skip = 0;
        for (size_t i = 0; i < sizeof exclusions / sizeof exclusions[0]; i++) {
            if (strcmp(exclusions[i].provider, ev->metadata->provider) == 0 && exclusions[i].event_id == id) {
                if (exclusions[i].merge_into < 0)
                    skip = 1;
                else
                    id = (uint32_t)exclusions[i].merge_into;
            }
        }
        if (skip)
            continue;
        size_t i;
        for (i = 0; i < nours; i++)
            if (ours[i].event_id == id && strcmp(ours[i].provider, ev->metadata->provider) == 0)
                break;
        if (i == nours) {
            ck_assert_uint_lt(nours, 512);
            snprintf(ours[i].provider, sizeof ours[i].provider, "%s", ev->metadata->provider);
            ours[i].event_id = id;
            ours[i].count = 0;
            nours++;
        }
        ours[i].count++;
    }
    ck_assert_int_eq(rc, 0);
    mantra_reader_free(r);

    /* baseline: per provider, the list of counts */
    static char provs[64][64];
    size_t nprov = 0;
    static uint64_t bcounts[64][128], ocounts[64][128];
    size_t nb[64] = {0}, no[64] = {0};
    char *save = NULL;
    for (char *line = strtok_r(base, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if ((unsigned char)line[0] == 0xEF)
            line += 3; /* UTF-8 byte order mark */
        char *slash = strchr(line, '/');
        char *comma = strstr(line, ", ");
        if (slash == NULL || comma == NULL || slash > comma)
            continue;
        *slash = '\0';
        size_t pi;
        for (pi = 0; pi < nprov; pi++)
            if (strcmp(provs[pi], line) == 0)
                break;
        if (pi == nprov) {
            snprintf(provs[pi], sizeof provs[pi], "%s", line);
            nprov++;
        }
        bcounts[pi][nb[pi]++] = strtoull(comma + 2, NULL, 10);
    }
    ck_assert_uint_gt(nprov, 0);
    for (size_t i = 0; i < nours; i++) {
        size_t pi;
        for (pi = 0; pi < nprov; pi++)
            if (strcmp(provs[pi], ours[i].provider) == 0)
                break;
        ck_assert_msg(pi < nprov, "%s: provider %s is not in the baseline", rel, ours[i].provider);
        ocounts[pi][no[pi]++] = ours[i].count;
    }
    for (size_t pi = 0; pi < nprov; pi++) {
        ck_assert_msg(no[pi] == nb[pi], "%s: %s has %zu event types, the baseline %zu", rel, provs[pi], no[pi], nb[pi]);
        qsort(bcounts[pi], nb[pi], sizeof(uint64_t), cmp_u64);
        qsort(ocounts[pi], no[pi], sizeof(uint64_t), cmp_u64);
        for (size_t k = 0; k < nb[pi]; k++)
            ck_assert_msg(bcounts[pi][k] == ocounts[pi][k], "%s: %s counts differ: %" PRIu64 " vs baseline %" PRIu64, rel,
                          provs[pi], ocounts[pi][k], bcounts[pi][k]);
    }
    free(base);
    free(d);
}

START_TEST(baseline_counts) {
    static const char *const files[] = {CHECKPOINTS, ARRAYTYPES, OBJVER4};
    check_baseline(files[_i]);
}
END_TEST

/* ---- first-event values of the arraytypes baseline (V5 V2Params arrays, Opcode tag) ---- */
typedef struct textout {
    char buf[2048];
    size_t len;
    int first[16];
    int depth;
} textout;

static void out_s(textout *t, const char *s) {
    size_t n = strlen(s);
    if (t->len + n < sizeof t->buf) {
        memcpy(t->buf + t->len, s, n + 1);
        t->len += n;
    }
}

static void sep(textout *t, const mantra_value *v) {
    if (!t->first[t->depth])
        out_s(t, ",");
    t->first[t->depth] = 0;
    if (t->depth == 0 || v->name[0]) {
        out_s(t, v->name);
        out_s(t, "=");
    }
}

static int t_scalar(void *ctx, const mantra_value *v) {
    textout *t = ctx;
    char b[256];
    sep(t, v);
    switch (v->type) {
    case MANTRA_TYPE_STRING: {
        mantra_str16 s = {v->data, v->count};
        mantra_str16_to_utf8(s, b, sizeof b);
        break;
    }
    case MANTRA_TYPE_CHAR: {
        uint8_t u[2] = {(uint8_t)v->u, (uint8_t)(v->u >> 8)};
        mantra_str16 s = {u, 1};
        mantra_str16_to_utf8(s, b, sizeof b);
        break;
    }
    case MANTRA_TYPE_INT16:
    case MANTRA_TYPE_INT32:
    case MANTRA_TYPE_INT64:
        snprintf(b, sizeof b, "%" PRId64, v->i);
        break;
    default:
        snprintf(b, sizeof b, "%" PRIu64, v->u);
        break;
    }
    out_s(t, b);
    return 0;
}
static int t_begin(void *ctx, const mantra_value *v) {
    textout *t = ctx;
    sep(t, v);
    out_s(t, "[");
    t->depth++;
    t->first[t->depth] = 1;
    return 0;
}
static int t_end(void *ctx, const mantra_value *v) {
    textout *t = ctx;
    (void)v;
    out_s(t, "]");
    t->depth--;
    return 0;
}

static void decode_text(const mantra_trace_event *ev, textout *t) {
    memset(t, 0, sizeof *t);
    t->first[0] = 1;
    static const mantra_field_visitor vis = {t_scalar, t_begin, t_end, t_begin, t_end};
    ck_assert_int_eq(mantra_decode_event(ev, &vis, t), 0);
}

START_TEST(arraytypes_first_values) {
    size_t size;
    uint8_t *d = load(ARRAYTYPES, &size);
    if (d == NULL)
        return;
    mantra_reader_options o = {MANTRA_READER_SORTED, 0};
    mantra_reader *r = mantra_reader_new(&o);
    ck_assert_int_eq(mantra_reader_open_memory(r, d, size), 0);
    /* baseline lines (first event of each name, in dispatch order):
     * TestEvent1 arg0="[2032854139,1608221689,1470019200,199494339,1238846140,1366609043]"
     *            arg1="[26494,17115,-7229,18850,27931]" arg2="2,033,417,279"
     * TestEvent2 arg0="-1,001,479,330" arg1="-1,397,908,228" arg2="[1470938110,172564262,1133558854,-1572049829]"
     *            arg3="[2055126903,593325874,2130052527,162795177]"
     * TestEvent3/24 arg0="㎯隍ᳯ诤" (a Char array; its first element, U+E7A3, prints as nothing there)
     * ProcessInfo CommandLine="C:\work\arraytypes_test\repro\\runtime\corerun.exe  C:\work\...\\arraytypesapp.dll" */
    static const char *const want[][2] = {
        {"TestEvent1", "arg0=[2032854139,1608221689,1470019200,199494339,1238846140,1366609043],"
                       "arg1=[26494,17115,-7229,18850,27931],arg2=2033417279"},
        {"TestEvent2", "arg0=-1001479330,arg1=-1397908228,arg2=[1470938110,172564262,1133558854,-1572049829],"
                       "arg3=[2055126903,593325874,2130052527,162795177]"},
        {"TestEvent3", "arg0=[\xee\x9e\xa3,\xe3\x8e\xaf,\xe9\x9a\x8d,\xe1\xb3\xaf,\xe8\xaf\xa4]"},
        {"ProcessInfo", "CommandLine=C:\\work\\arraytypes_test\\repro\\\\runtime\\corerun.exe  "
                        "C:\\work\\arraytypes_test\\repro\\\\arraytypesapp.dll"},
    };
    int seen[4] = {0};
    const mantra_trace_event *ev;
    int rc;
    while ((rc = mantra_reader_next(r, &ev)) > 0) {
        for (int i = 0; i < 4; i++) {
            if (!seen[i] && strcmp(ev->metadata->name, want[i][0]) == 0) {
                textout t;
                decode_text(ev, &t);
                ck_assert_str_eq(t.buf, want[i][1]);
                ck_assert_uint_eq(ev->thread_id, i == 3 ? 33504 : 23560); /* TID of the baseline lines */
                if (i == 2)
                    ck_assert_uint_eq(ev->opcode, 24); /* "TestEvent3/24": the Opcode tag */
                seen[i] = 1;
            }
        }
    }
    ck_assert_int_eq(rc, 0);
    for (int i = 0; i < 4; i++)
        ck_assert_msg(seen[i], "%s not seen", want[i][0]);
    mantra_reader_free(r);
    free(d);
}
END_TEST

#ifdef MANTRA_TEST_HAVE_DOTNET
/* Runtime events with minimal metadata, decoded through the generated registry. Baseline:
 * Method/LoadVerbose, 53, <Event MSec="457.5450" TID="7532" MethodID="0x00007FFEA93E45B0"
 *   ModuleID="0x00007FFEA9014020" MethodStartAddress="0x00007FFEA9177390" MethodSize="0x00001052"
 *   MethodToken="0x06002783" MethodFlags="Jitted" MethodNamespace="System.Text.Unicode.Utf16Utility"
 *   MethodName="GetPointerToFirstInvalidChar" MethodSignature="wchar*  (wchar*,int32,int64&amp;,int32&amp;)"
 *   ClrInstanceID="3" .../>   (MethodFlags 136 = 0x88: Jitted | ...; TE prints the flag names) */
START_TEST(objver4_registry_values) {
    size_t size;
    uint8_t *d = load(OBJVER4, &size);
    if (d == NULL)
        return;
    mantra_reader_options o = {MANTRA_READER_SORTED, 0};
    mantra_reader *r = mantra_reader_new(&o);
    for (size_t i = 0; i < MANTRA_DOTNET_PROVIDER_COUNT; i++)
        ck_assert_int_eq(mantra_reader_add_provider(r, mantra_dotnet_providers[i]), 0);
    ck_assert_int_eq(mantra_reader_open_memory(r, d, size), 0);
    const mantra_trace_event *ev;
    int rc, found = 0;
    while ((rc = mantra_reader_next(r, &ev)) > 0) {
        if (!found && ev->metadata->event_id == 143 &&
            strcmp(ev->metadata->provider, "Microsoft-Windows-DotNETRuntime") == 0) {
            textout t;
            decode_text(ev, &t);
            ck_assert_str_eq(t.buf, "MethodID=140731737851312,ModuleID=140731733852192,MethodStartAddress="
                                    "140731735307152,MethodSize=4178,MethodToken=100673411,MethodFlags=136,"
                                    "MethodNamespace=System.Text.Unicode.Utf16Utility,MethodName="
                                    "GetPointerToFirstInvalidChar,MethodSignature=wchar*  (wchar*,int32,int64&,"
                                    "int32&),ClrInstanceID=3");
            ck_assert_uint_eq(ev->thread_id, 7532);
            found = 1;
        }
    }
    ck_assert_int_eq(rc, 0);
    ck_assert(found);
    mantra_reader_free(r);
    free(d);
}
END_TEST
#endif

/* Sorted delivery of real traces: time order throughout (the files have 149 negative deltas). */
START_TEST(sorted_is_time_ordered) {
    static const char *const files[] = {OBJVER4, MIXED, CALENDAR, TRUNCATED};
    size_t size;
    uint8_t *d = load(files[_i], &size);
    if (d == NULL)
        return;
    mantra_reader_options o = {MANTRA_READER_SORTED, 0};
    mantra_reader *r = mantra_reader_new(&o);
    ck_assert_int_eq(mantra_reader_open_memory(r, d, size), 0);
    const mantra_trace_event *ev;
    int64_t prev = INT64_MIN;
    uint64_t n = 0;
    int rc;
    while ((rc = mantra_reader_next(r, &ev)) > 0) {
        ck_assert_msg(ev->timestamp >= prev, "%s: event %" PRIu64 " goes back in time", files[_i], n);
        prev = ev->timestamp;
        n++;
    }
    ck_assert(rc == 0 || rc == MANTRA_ETRUNCATED);
    mantra_reader_free(r);
    free(d);
}
END_TEST

/* ---- synthetic V6 streams ---- */
START_TEST(v6_minimal) {
    size_t size;
    uint8_t *d = load(V6MIN, &size);
    if (d == NULL)
        return;
    mantra_reader *r = mantra_reader_new(NULL);
    ck_assert_int_eq(mantra_reader_open_memory(r, d, size), 0);
    const mantra_trace_info *info = mantra_reader_info(r);
    ck_assert_int_eq(info->format_version, 6); /* FileFormatVersionNumber 6 */
    ck_assert_int_eq(info->sync_time_utc[0], 2025);
    ck_assert_int_eq(info->qpc_frequency, 1000);
    ck_assert_uint_eq(info->pointer_size, 8);
    ck_assert_uint_eq(info->kv_count, 0);
    const mantra_trace_event *ev;
    ck_assert_int_eq(mantra_reader_next(r, &ev), 0);
    ck_assert_int_eq(mantra_reader_complete(r), 1);
    mantra_reader_free(r);
    free(d);
}
END_TEST

static void guid_text(const mantra_guid *g, char *out, size_t n) {
    snprintf(out, n, "%08" PRIX32 "-%04X-%04X-%02X%02X-%02X%02X%02X%02X%02X%02X", g->data1, g->data2, g->data3,
             g->data4[0], g->data4[1], g->data4[2], g->data4[3], g->data4[4], g->data4[5], g->data4[6], g->data4[7]);
}

/* te-test-ParseV6CompressedEventHeaders.expected.json, "expected_dispatch_order" (7 events). */
START_TEST(v6_compressed_headers_order) {
    static const struct {
        const char *name;
        uint64_t tid;
        const char *activity; /* NULL: none */
        int64_t ts;
    } want[7] = {
        {"TestEvent1", 12, "0BBEAA1B-35B4-4FF3-BA34-283EBE589A9A", 10000},
        {"TestEvent1", 13, "26F353D1-C0C8-45C1-A0CF-7C29EAE6DC7F", 10500},
        {"TestEvent2", 13, "26F353D1-C0C8-45C1-A0CF-7C29EAE6DC7F", 11123},
        {"TestEvent2", 12, NULL, 15000},
        {"TestEvent2", 13, "26F353D1-C0C8-45C1-A0CF-7C29EAE6DC7F", 17000},
        {"TestEvent2", 14, NULL, 20000},
        {"TestEvent1", 12, "0BBEAA1B-35B4-4FF3-BA34-283EBE589A9A", 22000},
    };
    size_t size;
    uint8_t *d = load(V6HDR, &size);
    if (d == NULL)
        return;
    mantra_reader_options o = {MANTRA_READER_SORTED, 0};
    mantra_reader *r = mantra_reader_new(&o);
    ck_assert_int_eq(mantra_reader_open_memory(r, d, size), 0);
    const mantra_trace_event *ev;
    int n = 0, rc;
    while ((rc = mantra_reader_next(r, &ev)) > 0) {
        ck_assert_int_lt(n, 7);
        ck_assert_str_eq(ev->metadata->name, want[n].name);
        ck_assert_str_eq(ev->metadata->provider, "TestProvider");
        ck_assert_uint_eq(ev->thread_id, want[n].tid);
        ck_assert_int_eq(ev->timestamp, want[n].ts);
        char g[40];
        guid_text(&ev->activity_id, g, sizeof g);
        ck_assert_str_eq(g, want[n].activity ? want[n].activity : "00000000-0000-0000-0000-000000000000");
        n++;
    }
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(n, 7);
    ck_assert_int_eq(mantra_reader_complete(r), 1);
    mantra_reader_free(r);

    /* file order differs exactly where TE reorders: rows 4 and 5 (17000 was queued) */
    r = mantra_reader_new(NULL);
    ck_assert_int_eq(mantra_reader_open_memory(r, d, size), 0);
    static const int64_t file_order[7] = {10000, 10500, 11123, 17000, 15000, 20000, 22000};
    n = 0;
    while ((rc = mantra_reader_next(r, &ev)) > 0)
        ck_assert_int_eq(ev->timestamp, file_order[n++]);
    ck_assert_int_eq(n, 7);
    mantra_reader_free(r);
    free(d);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("reader_fixtures");
    TCase *tc = tcase_create("fixtures");
    tcase_set_timeout(tc, 300);
    int nfix = (int)(sizeof fixtures / sizeof fixtures[0]);
    tcase_add_loop_test(tc, fixture_memory, 0, nfix);
    tcase_add_loop_test(tc, fixture_file_and_pipe, 0, nfix);
    tcase_add_test(tc, truncated_error_text);
    tcase_add_test(tc, netperf_refused);
    tcase_add_test(tc, checkpoints_exact_values);
    tcase_add_loop_test(tc, baseline_counts, 0, 3);
    tcase_add_test(tc, arraytypes_first_values);
#ifdef MANTRA_TEST_HAVE_DOTNET
    tcase_add_test(tc, objver4_registry_values);
#endif
    tcase_add_loop_test(tc, sorted_is_time_ordered, 0, 4);
    tcase_add_test(tc, v6_minimal);
    tcase_add_test(tc, v6_compressed_headers_order);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
