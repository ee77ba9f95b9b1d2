/* mantra emit - writes the events of the Mantra-Demo provider through the real runtime (sessions,
 * per-thread buffers, drain, nettrace writer) from N threads, and prints one JSON line of counts
 * and timings (docs/cli.md "mantra emit").
 *
 * The event mix is deterministic, so that tests can check counts and values exactly: thread t
 * (0-based) writes indexes i = 0 .. M-1; with --mix all, i % 64 == 1 writes Scalars, 2 Strings,
 * 3 Arrays and every other index Tick; with --mix tick every index writes Tick. The values of each
 * event derive from (t, i) only (see the emit_* functions below and docs/cli.md). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emit_cmd.h"
#include "emit_threads.h"
#include "tool.h"

#ifdef MANTRA_TOOL_HAVE_DOTNET
#include "dotnet_registry.h"
#include "dotnet_writers.h"
#include "mantra/pump.h"
#include "mantra/session.h"
#endif

static const char emit_usage[] =
    "Usage: mantra emit [--threads N] [--events M] [--trace FILE] [--providers SPEC] [--buffer-mb MB]\n"
    "                   [--rotate MB] [--block] [--mix tick|all]\n"
    "       mantra emit --duration SECONDS [--rate EVENTS_PER_SECOND] [--trace FILE] ...\n"
    "\n"
    "Writes the events of the Mantra-Demo provider through libmantra's sessions from N threads that\n"
    "start together, then prints one JSON line on stdout:\n"
    "  {\"threads\":N,\"events_per_thread\":M,\"mix\":\"all\",\"write_seconds\":S,\"total_seconds\":T,\n"
    "   \"start_seconds\":T0,\"stop_seconds\":T1,\"events_per_second\":E,\"sessions\":[{\"id\":ID,\"output\":\"FILE\" or \"env\",\"attempted\":A,\n"
    "   \"written\":W,\"dropped\":D,\"oversized\":O,\"blocked\":B,\"files\":F,\"bytes\":Y},...]}\n"
    "write_seconds: wall time while the threads write; total_seconds: from the start to every trace\n"
    "closed, of which start_seconds before the writes (start-up, sessions started) and stop_seconds\n"
    "after the last write (sessions stopped, traces closed); events_per_second: N*M / write_seconds.\n"
    "\n"
    "  --threads N       writing threads (default 2, at most 1024; the WASI build: 1, its loop pumps)\n"
    "  --events M        events written by EACH thread (default 100000)\n"
    "  --trace FILE      the trace of mantra emit's own session (default emit.nettrace; see below)\n"
    "  --providers SPEC  providers of that session, dotnet-trace syntax (default Mantra-Demo:0xF:5)\n"
    "                    keywords: Ticks 0x1, Scalars 0x2, Strings 0x4, Arrays 0x8\n"
    "  --buffer-mb MB    that session's buffer cap in MB (default 256); full buffers drop events\n"
    "  --rotate MB       start a new file (FILE.1.nettrace, ...) after MB MB (default 0: never)\n"
    "  --block           writers wait for buffer space (up to 100 ms per event) instead of dropping;\n"
    "                    refused by the threadless build\n"
    "  --mix all|tick    all (default): per 64 indexes of a thread, index%64 == 1 Scalars, 2 Strings\n"
    "                    (non-ASCII text), 3 Arrays, the other 61 Tick; tick: only Tick events\n"
    "  --duration S      steady mode: one writer (this thread) writes RATE events per second for S\n"
    "                    seconds (1..86400), so that tools can attach (dotnet-trace collect -p PID);\n"
    "                    --threads and --events do not apply; no session of its own unless --trace\n"
    "                    is given (attached tools and MANTRA_EnableEventPipe bring theirs);\n"
    "                    events_per_thread reports the events written\n"
    "  --rate N          steady mode: events per second (default 1000, at most 1000000000: as fast\n"
    "                    as the writer goes)\n"
    "  --no-pump         threadless build: the loop never pumps the job queue while writing, so the\n"
    "                    sessions keep what fits under their cap, count the rest as dropped, and are\n"
    "                    drained at shutdown (a host that never pumps); default: pump every 100 ms\n"
    "\n"
    "mantra_init() also starts the diagnostics server (docs/diagnostics.md) unless\n"
    "MANTRA_EnableDiagnostics=0.\n"
    "Environment: the MANTRA_* startup variables (MANTRA_EnableEventPipe=1, MANTRA_EventPipeConfig,\n"
    "MANTRA_EventPipeOutputPath, MANTRA_EventPipeCircularMB) start a session of their own first; it\n"
    "is reported with \"output\":\"env\". When it runs and --trace is not given, it is the only session\n"
    "(--providers, --buffer-mb, --rotate and --block then have nothing to configure: ignored).\n"
    "\n"
    "Exit status: 0 success, 1 a session could not start or stop, 2 usage error.\n";

double emit_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#define EMIT_MAX_THREADS 1024u
#define EMIT_PERIOD 64u /* --mix all: one Scalars, Strings and Arrays event per 64 indexes */

/* Parses a decimal unsigned integer in [min, max]; 0 or -1. */
static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out) {
    if (s == NULL || s[0] < '0' || s[0] > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

#ifndef MANTRA_TOOL_HAVE_DOTNET

int cmd_emit(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(emit_usage, stdout);
            return TOOL_OK;
        }
    (void)parse_u64;
    fprintf(stderr, "mantra emit: this mantra was built without the generated providers (mantra::dotnet)\n");
    return TOOL_BAD_INPUT;
}

#else

enum { MIX_ALL = 0, MIX_TICK = 1 };

typedef struct emit_options {
    uint32_t threads;
    uint64_t events;
    const char *trace;
    const char *providers;
    uint32_t buffer_mb;
    uint32_t rotate_mb;
    int block;
    int mix;
    int session_opts; /* --providers/--buffer-mb/--rotate/--block given */
    int no_pump;      /* --no-pump */
    uint64_t duration_s; /* --duration: steady mode when non-zero */
    uint64_t rate;       /* --rate: events per second in steady mode */
} emit_options;

/* ---- the events (values derive from (t, i) only) ----------------------------------------- */

static void emit_scalars(uint32_t t, uint64_t i) {
    uint64_t r = i / EMIT_PERIOD;
    mantra_guid id = {t, (uint16_t)i, (uint16_t)(i >> 16), {0}};
    for (int k = 0; k < 8; k++)
        id.data4[k] = (uint8_t)(i >> (8 * k));
    (void)mantra_Demo_Scalars_write((int8_t)-(int8_t)(i % 128), (uint8_t)(r % 3), (int16_t)-(int16_t)(t + 1),
                                    (uint16_t)i, (int32_t)-(int32_t)(i % 1000000), t, -(int64_t)i,
                                    ((uint64_t)t << 48) | (i & UINT64_C(0xFFFFFFFFFFFF)), (float)(i % 1024) * 0.5f,
                                    (double)i / 4.0 + (double)t, (r & 1) != 0, &id, (uintptr_t)(0x10000u + (i % 4096) * 8u),
                                    UINT64_C(116444736000000000) + i * UINT64_C(10000000));
}

/* UTF-16 code units of a valid UTF-8 string: one per lead byte, two for 4-byte sequences. */
static uint32_t utf16_units(const char *s) {
    uint32_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p & 0xC0) != 0x80)
            n += *p >= 0xF0 ? 2u : 1u;
    return n;
}

static void emit_strings(uint32_t t, uint64_t i) {
    char wide[96], narrow[64];
    /* "Grüße 世界 😀" (U+00FC, U+00DF, U+4E16, U+754C, U+1F600: a surrogate pair in UTF-16) */
    snprintf(wide, sizeof wide, "Gr\xC3\xBC\xC3\x9F" "e \xE4\xB8\x96\xE7\x95\x8C \xF0\x9F\x98\x80 t%" PRIu32 " i%" PRIu64,
             t, i);
    snprintf(narrow, sizeof narrow, "t%" PRIu32 "/i%" PRIu64 " na\xC3\xAFve", t, i); /* "naïve" */
    (void)mantra_Demo_Strings_write(wide, utf16_units(wide), narrow);
}

static void emit_arrays(uint32_t t, uint64_t i) {
    uint64_t r = i / EMIT_PERIOD;
    uint32_t values[8];
    uint8_t blob[16];
    uint8_t items[3 * (8 + 2 * 16)];
    uint16_t n = (uint16_t)(1 + r % 8);
    uint32_t size = (uint32_t)(r % 17);
    uint32_t count = (uint32_t)(r % 4);
    for (uint16_t j = 0; j < n; j++)
        values[j] = (uint32_t)(i + j) ^ (t << 24);
    for (uint32_t j = 0; j < size; j++)
        blob[j] = (uint8_t)(t + i + j);
    size_t off = 0;
    for (uint32_t j = 0; j < count; j++) {
        uint64_t key = ((uint64_t)t << 32) | (uint32_t)(i + j);
        for (int k = 0; k < 8; k++)
            items[off++] = (uint8_t)(key >> (8 * k));
        /* Name: "item<j>é" in UTF-16LE with its terminator */
        const uint16_t name[] = {'i', 't', 'e', 'm', (uint16_t)('0' + j), 0x00E9, 0};
        for (size_t k = 0; k < sizeof name / sizeof name[0]; k++) {
            items[off++] = (uint8_t)name[k];
            items[off++] = (uint8_t)(name[k] >> 8);
        }
    }
    (void)mantra_Demo_Arrays_write(n, values, size, blob, count, items, off);
}

/* Index i of thread t under --mix all. */
static void emit_one_all(uint32_t t, uint64_t i) {
    switch (i % EMIT_PERIOD) {
    case 1:
        emit_scalars(t, i);
        break;
    case 2:
        emit_strings(t, i);
        break;
    case 3:
        emit_arrays(t, i);
        break;
    default:
        (void)mantra_Demo_Tick_write(t, i);
        break;
    }
}

static void emit_write(emit_thread *w) {
    const uint32_t t = w->number;
    const uint64_t m = w->events;
    void (*tick)(void) = w->tick;
    if (w->mix == MIX_TICK) {
        for (uint64_t i = 0; i < m; i++) {
            (void)mantra_Demo_Tick_write(t, i);
            if (tick != NULL && (i & (EMIT_TICK_EVENTS - 1u)) == EMIT_TICK_EVENTS - 1u)
                tick();
        }
    } else {
        for (uint64_t i = 0; i < m; i++) {
            emit_one_all(t, i);
            if (tick != NULL && (i & (EMIT_TICK_EVENTS - 1u)) == EMIT_TICK_EVENTS - 1u)
                tick();
        }
    }
    w->end = emit_now();
}

/* ---- arguments ----------------------------------------------------------------------------- */

/* The value of option `name` at argv[*i]: "--name=VALUE" or "--name VALUE". NULL when argv[*i] is
 * not this option; *missing set when it is but has no value. */
static const char *opt_value(const char *name, int argc, char **argv, int *i, int *missing) {
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return NULL;
    if (a[n] == '=')
        return a + n + 1;
    if (a[n] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        *missing = 1;
        return NULL;
    }
    return argv[++*i];
}

/* -1: parsed, go on; else an exit status. */
static int parse_args(int argc, char **argv, emit_options *o) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v;
        int missing = 0;
        uint64_t n;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(emit_usage, stdout);
            return TOOL_OK;
        }
        if (strcmp(a, "--version") == 0) {
            printf("mantra %s\n", MANTRA_VERSION_STRING);
            return TOOL_OK;
        }
        if (strcmp(a, "--block") == 0) {
            o->block = 1;
            o->session_opts = 1;
        } else if (strcmp(a, "--no-pump") == 0) {
            o->no_pump = 1;
        } else if ((v = opt_value("--threads", argc, argv, &i, &missing)) != NULL || missing) {
            if (missing || parse_u64(v, 1, EMIT_MAX_THREADS, &n) < 0)
                return tool_usage_error("emit", "--threads needs a number from 1 to 1024 (got '%s')", missing ? "" : v);
            if (n > emit_max_threads())
                return tool_usage_error("emit", "%s", "--threads: this build has no threads (WASI): only 1 writer");
            o->threads = (uint32_t)n;
        } else if ((v = opt_value("--events", argc, argv, &i, &missing)) != NULL || missing) {
            if (missing || parse_u64(v, 0, UINT64_C(1) << 40, &n) < 0)
                return tool_usage_error("emit", "--events needs a number of events per thread (got '%s')",
                                        missing ? "" : v);
            o->events = n;
        } else if ((v = opt_value("--trace", argc, argv, &i, &missing)) != NULL || missing) {
            if (missing || v[0] == '\0')
                return tool_usage_error("emit", "%s", "--trace needs a FILE");
            o->trace = v;
        } else if ((v = opt_value("--providers", argc, argv, &i, &missing)) != NULL || missing) {
            if (missing || v[0] == '\0')
                return tool_usage_error("emit", "%s", "--providers needs a SPEC (Name[:0xKEYWORDS[:LEVEL]],...)");
            o->providers = v;
            o->session_opts = 1;
        } else if ((v = opt_value("--buffer-mb", argc, argv, &i, &missing)) != NULL || missing) {
            if (missing || parse_u64(v, 1, 1u << 20, &n) < 0)
                return tool_usage_error("emit", "--buffer-mb needs a number of MB from 1 to 1048576 (got '%s')",
                                        missing ? "" : v);
            o->buffer_mb = (uint32_t)n;
            o->session_opts = 1;
        } else if ((v = opt_value("--rotate", argc, argv, &i, &missing)) != NULL || missing) {
            if (missing || parse_u64(v, 0, 1u << 20, &n) < 0)
                return tool_usage_error("emit", "--rotate needs a number of MB from 0 to 1048576 (got '%s')",
                                        missing ? "" : v);
            o->rotate_mb = (uint32_t)n;
            o->session_opts = 1;
        } else if ((v = opt_value("--duration", argc, argv, &i, &missing)) != NULL || missing) {
            if (missing || parse_u64(v, 1, 86400, &n) < 0)
                return tool_usage_error("emit", "--duration needs a number of seconds from 1 to 86400 (got '%s')",
                                        missing ? "" : v);
            o->duration_s = n;
        } else if ((v = opt_value("--rate", argc, argv, &i, &missing)) != NULL || missing) {
            if (missing || parse_u64(v, 1, 1000000000, &n) < 0)
                return tool_usage_error("emit", "--rate needs events per second from 1 to 1000000000 (got '%s')",
                                        missing ? "" : v);
            o->rate = n;
        } else if ((v = opt_value("--mix", argc, argv, &i, &missing)) != NULL || missing) {
            if (!missing && strcmp(v, "all") == 0)
                o->mix = MIX_ALL;
            else if (!missing && strcmp(v, "tick") == 0)
                o->mix = MIX_TICK;
            else
                return tool_usage_error("emit", "--mix is 'all' or 'tick' (got '%s')", missing ? "" : v);
        } else if (a[0] == '-') {
            return tool_usage_error("emit", "unknown option '%s'", a);
        } else {
            return tool_usage_error("emit", "unexpected argument '%s'", a);
        }
    }
    if (o->rate && !o->duration_s)
        return tool_usage_error("emit", "%s", "--rate needs --duration");
    return -1;
}

/* ---- the run ------------------------------------------------------------------------------- */

typedef struct emit_session {
    mantra_session_id id;
    const char *output; /* NULL: the environment's session */
    mantra_session_stats st;
    int stopped;
} emit_session;

/* The run's wall times: write, total, and the parts of total before the writes (registration,
 * start-up tracing, the sessions' start) and after them (the sessions' stop, traces closed). */
typedef struct emit_times {
    double write_s, total_s, start_s, stop_s;
} emit_times;

static void print_json(const emit_options *o, const emit_times *tm, const emit_session *ss, size_t n) {
    uint64_t total = (uint64_t)o->threads * o->events;
    printf("{\"threads\":%" PRIu32 ",\"events_per_thread\":%" PRIu64 ",\"mix\":\"%s\",\"write_seconds\":%.6f"
           ",\"total_seconds\":%.6f,\"start_seconds\":%.6f,\"stop_seconds\":%.6f,\"events_per_second\":%.0f,"
           "\"sessions\":[",
           o->threads, o->events, o->mix == MIX_TICK ? "tick" : "all", tm->write_s, tm->total_s, tm->start_s, tm->stop_s,
           tm->write_s > 0 ? (double)total / tm->write_s : 0.0);
    for (size_t k = 0; k < n; k++) {
        const mantra_session_stats *s = &ss[k].st;
        printf("%s{\"id\":%" PRIu64 ",\"output\":", k ? "," : "", ss[k].id);
        const char *out = ss[k].output ? ss[k].output : "env";
        json_string(stdout, out, strlen(out));
        printf(",\"attempted\":%" PRIu64 ",\"written\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"oversized\":%" PRIu64
               ",\"blocked\":%" PRIu64 ",\"files\":%" PRIu32 ",\"bytes\":%" PRIu64 "}",
               s->attempted, s->written, s->dropped, s->oversized, s->blocked, s->files, s->bytes);
    }
    fputs("]}\n", stdout);
    fflush(stdout);
}

/* Stops a session with its final counters; 0, or TOOL_BAD_INPUT after the message. */
static int stop_session(emit_session *s) {
    if (s->stopped)
        return TOOL_OK;
    s->stopped = 1;
    int rc = mantra_session_stop_stats(s->id, &s->st);
    if (rc < 0) {
        const char *e = mantra_session_last_error();
        fprintf(stderr, "mantra emit: stopping the session of %s: %s\n", s->output ? s->output : "the environment",
                e[0] ? e : "failed");
        return TOOL_BAD_INPUT;
    }
    return TOOL_OK;
}

static void pump_jobs(void) { (void)mantra_pump(); }

/* Steady mode (--duration): rate events per second on this thread for duration seconds, paced
 * against the clock (a late loop catches up, never more than one second's worth at once, and
 * reads the clock again every EMIT_TICK_EVENTS events); the threadless build pumps between
 * bursts. Returns the number of events written (the Tick Index of an event is its index in the
 * schedule, so indexes skipped after a stall show as gaps). */
static uint64_t emit_steady(const emit_options *o) {
    double start = emit_now(), end = start + (double)o->duration_s;
    uint64_t i = 0, written = 0; /* i: the next index due; skipped indexes are never written */
    for (;;) {
        double now = emit_now();
        if (now >= end)
            break;
        uint64_t due = (uint64_t)((now - start) * (double)o->rate);
        if (due > i + o->rate)
            i = due - o->rate; /* a stall longer than a second is not made up for */
        uint64_t stop = due - i > EMIT_TICK_EVENTS ? i + EMIT_TICK_EVENTS : due; /* then the clock again */
        for (; i < stop; i++, written++) {
            if (o->mix == MIX_TICK)
                (void)mantra_Demo_Tick_write(0, i);
            else
                emit_one_all(0, i);
        }
        if (mantra_threadless())
            pump_jobs();
        if (i < due)
            continue; /* behind: no sleep */
        struct timespec ts = {0, 1000000}; /* 1 ms */
        nanosleep(&ts, NULL);
    }
    return written;
}

int cmd_emit(int argc, char **argv) {
    emit_options o = {emit_max_threads() < 2 ? 1u : 2u, 100000, NULL, "Mantra-Demo:0xF:5", 256, 0, 0, MIX_ALL, 0, 0, 0, 0};
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0)
        return rc;

    double t_start = emit_now();
    if (mantra_dotnet_register() != 0) {
        fprintf(stderr, "mantra emit: cannot register the providers of manifest/dotnet.yaml\n");
        return TOOL_BAD_INPUT;
    }
    if (mantra_init() < 0) {
        const char *e = mantra_session_last_error();
        fprintf(stderr, "mantra emit: %s\n", e[0] ? e : "startup tracing failed");
        return TOOL_BAD_INPUT;
    }
    emit_session ss[2];
    size_t nss = 0;
    memset(ss, 0, sizeof ss);
    mantra_session_id env_id = mantra_startup_session();
    if (env_id != 0) {
        ss[nss].id = env_id;
        ss[nss].output = NULL;
        nss++;
    }
    if ((env_id == 0 && o.duration_s == 0) || o.trace != NULL) {
        mantra_session_config c;
        mantra_session_config_init(&c);
        c.providers = o.providers;
        c.output = MANTRA_SESSION_OUTPUT_FILE;
        c.path = o.trace ? o.trace : "emit.nettrace";
        c.buffer_mb = o.buffer_mb;
        c.rotate_mb = o.rotate_mb;
        c.buffer_mode = o.block ? MANTRA_BUFFER_BLOCK : MANTRA_BUFFER_DROP;
        if (mantra_session_start(&ss[nss].id, &c) < 0) {
            const char *e = mantra_session_last_error();
            fprintf(stderr, "mantra emit: %s\n", e[0] ? e : "cannot start the session");
            mantra_shutdown();
            return TOOL_BAD_INPUT;
        }
        ss[nss].output = c.path;
        nss++;
    } else if (o.session_opts) {
        fprintf(stderr, "mantra emit: note: no --trace and the environment's session runs: --providers, "
                        "--buffer-mb, --rotate and --block are ignored\n");
    }

    if (o.duration_s) {
        if (o.rate == 0)
            o.rate = 1000;
        double t0 = emit_now();
        uint64_t written = emit_steady(&o);
        double t1 = emit_now();
        int st = TOOL_OK;
        for (size_t k = nss; k-- > 0;)
            if (stop_session(&ss[k]) != TOOL_OK)
                st = TOOL_BAD_INPUT;
        mantra_shutdown();
        o.threads = 1;
        o.events = written;
        double t_done = emit_now();
        emit_times tm = {t1 - t0, t_done - t_start, t0 - t_start, t_done - t1};
        print_json(&o, &tm, ss, nss);
        return st;
    }
    emit_thread *ws = calloc(o.threads, sizeof *ws);
    if (ws == NULL) {
        fprintf(stderr, "mantra emit: out of memory\n");
        mantra_shutdown();
        return TOOL_BAD_INPUT;
    }
    int status = TOOL_OK;
    for (uint32_t k = 0; k < o.threads; k++) {
        ws[k].number = k;
        ws[k].events = o.events;
        ws[k].mix = o.mix;
    }
    double t_write = emit_now(), t_end = t_write;
    /* The threadless build has no drain thread: the host (this thread) pumps the job queue, every
     * 100 ms like the threaded build's drain (flush_interval_ms), so both builds drop alike; where
     * the one writer is this thread (WASI), it pumps every EMIT_TICK_EVENTS events instead, as a
     * host loop that writes faster than a 100 ms drain could keep under the cap must. */
    double pump_s = emit_max_threads() == 1 ? 0.0 : 0.1;
    uint32_t started =
        emit_threads_run(ws, o.threads, emit_write, mantra_threadless() && !o.no_pump ? pump_jobs : NULL, pump_s);
    if (started < o.threads) {
        fprintf(stderr, "mantra emit: cannot start thread %" PRIu32 " of %" PRIu32 "\n", started + 1, o.threads);
        status = TOOL_BAD_INPUT;
    }
    for (uint32_t k = 0; k < started; k++)
        if (ws[k].end > t_end)
            t_end = ws[k].end;
    free(ws);

    /* own session first (it started last), then the environment's, then whatever else runs */
    for (size_t k = nss; k-- > 0;)
        if (stop_session(&ss[k]) != TOOL_OK)
            status = TOOL_BAD_INPUT;
    mantra_shutdown();
    double t_done = emit_now();
    emit_times tm = {t_end - t_write, t_done - t_start, t_write - t_start, t_done - t_end};
    if (started == o.threads)
        print_json(&o, &tm, ss, nss);
    return status;
}

#endif
