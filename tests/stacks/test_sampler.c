/* The interpreter's sampler (mantra_interp_sample_threads, mantra_interp_sampler_start) and the
 * ThreadSample events and method rundown of runtime/dotnet/stacks.c. An interpreter thread is held
 * at a known call depth: its program's innermost method prints, and the output callback blocks
 * until the test has sampled, so the published stack is exactly known. A third case samples a
 * recursive program from the sampler thread while it runs (the seqlock under TSan: label threads).
 */
#include <check.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"
#include "dotnet_registry.h"
#include "dotnet_stacks.h"
#include "mantra/interp.h"
#include "mantra/pump.h"
#include "mantra/session.h"
#include "platform/platform-internal.h"
#include "session_test_util.h"

static const char BLOCK_SRC[] =
    ".module Blk 3f2504e0-4f89-11d3-9a0c-0305e82c3302\n"
    ".method Blk.main int64()\n"
    "        call Blk.outer\n"
    "        ret\n"
    ".end\n"
    ".method Blk.outer int64()\n"
    "        nop\n"
    "        call Blk.inner\n"
    "        ret\n"
    ".end\n"
    ".method Blk.inner int64()\n"
    ".locals 1\n"
    "        ldc.i8 0\n"
    "        stloc 0\n"
    "loop:   print.s \"0123456789012345678901234567890123456789012345678901234567890123456789"
    "012345678901234567890123456789\"\n"
    "        ldloc 0\n"
    "        ldc.i8 1\n"
    "        add\n"
    "        dup\n"
    "        stloc 0\n"
    "        ldc.i8 100\n"
    "        blt loop\n"
    "        ldloc 0\n"
    "        ret\n"
    ".end\n";

/* ---- a worker held inside Blk.inner ---- */

typedef struct worker {
    mantra_interp_program *prog;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int blocked, release; /* lock */
    uint64_t tid;
    int64_t result;
    int rc;
} worker;

static void blocking_write(void *ctx, const char *data, size_t size) {
    (void)data;
    (void)size;
    worker *w = ctx;
    pthread_mutex_lock(&w->lock);
    if (!w->blocked) {
        w->blocked = 1;
        pthread_cond_broadcast(&w->cond);
        while (!w->release)
            pthread_cond_wait(&w->cond, &w->lock);
    }
    pthread_mutex_unlock(&w->lock);
}

static void *worker_main(void *arg) {
    worker *w = arg;
    w->tid = mantra_pal_thread_id();
    mantra_interp_thread_options o;
    mantra_interp_thread_options_init(&o);
    o.write = blocking_write;
    o.write_ctx = w;
    mantra_interp_thread *t = NULL;
    w->rc = mantra_interp_thread_create(w->prog, &o, &t);
    mantra_interp_value r = {0};
    if (w->rc == 0)
        w->rc = mantra_interp_thread_run(t, "main", NULL, 0, &r);
    w->result = r.i;
    mantra_interp_thread_free(t);
    return NULL;
}

static mantra_interp_module *g_mod;

static mantra_interp_program *load(const char *src) {
    mantra_interp_diag d;
    ck_assert_int_eq(mantra_interp_assemble(src, strlen(src), "test.masm", &g_mod, &d), 0);
    mantra_interp_load_options lo;
    mantra_interp_load_options_init(&lo);
    lo.pgo_mode = 0;
    mantra_interp_program *p = NULL;
    ck_assert_int_eq(mantra_interp_load(g_mod, &lo, &p), 0);
    return p;
}

static void start_worker(worker *w, pthread_t *th) {
    memset(w, 0, sizeof *w);
    w->prog = load(BLOCK_SRC);
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    ck_assert_int_eq(pthread_create(th, NULL, worker_main, w), 0);
    pthread_mutex_lock(&w->lock);
    while (!w->blocked)
        pthread_cond_wait(&w->cond, &w->lock);
    pthread_mutex_unlock(&w->lock);
}

static void finish_worker(worker *w, pthread_t th) {
    pthread_mutex_lock(&w->lock);
    w->release = 1;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
    pthread_join(th, NULL);
    ck_assert_int_eq(w->rc, 0);
    ck_assert_int_eq(w->result, 100);
}

static uint64_t code_of(const mantra_interp_program *p, const char *name, size_t *size) {
    int64_t i = mantra_interp_module_find(mantra_interp_program_module(p), name);
    ck_assert_int_ge(i, 0);
    const uint8_t *c;
    ck_assert_int_eq(mantra_interp_program_code(p, (size_t)i, &c, size), 0);
    return (uint64_t)(uintptr_t)c;
}

typedef struct got {
    int n;
    uint64_t tid;
    size_t frames;
    uint64_t ips[8];
} got;

static void keep(void *ctx, const mantra_interp_sample *s) {
    got *g = ctx;
    g->n++;
    g->tid = s->os_thread_id;
    g->frames = s->frames;
    for (size_t i = 0; i < s->frames && i < 8; i++)
        g->ips[i] = s->ips[i];
}

START_TEST(published_stack_is_exact) {
    worker w;
    pthread_t th;
    start_worker(&w, &th);
    got g = {0};
    ck_assert_int_eq(mantra_interp_sample_threads(keep, &g), 1);
    ck_assert_int_eq(g.n, 1);
    ck_assert_uint_eq(g.tid, w.tid);
    ck_assert_uint_eq(g.frames, 3);
    /* leaf first: inner's loop (its last branch target, after ldc.i8 and stloc: 12 bytes in), outer's
     * call (after its 1-byte nop), main's call (offset 0) */
    ck_assert_uint_eq(g.ips[0], code_of(w.prog, "Blk.inner", NULL) + 12);
    ck_assert_uint_eq(g.ips[1], code_of(w.prog, "Blk.outer", NULL) + 1);
    ck_assert_uint_eq(g.ips[2], code_of(w.prog, "Blk.main", NULL));
    finish_worker(&w, th);
    /* the run has returned: nothing to sample */
    got none = {0};
    ck_assert_int_eq(mantra_interp_sample_threads(keep, &none), 0);
    ck_assert_int_eq(none.n, 0);
    ck_assert_int_eq(mantra_interp_sample_threads(NULL, NULL), MANTRA_EINVAL);
    mantra_interp_program_free(w.prog);
    mantra_interp_module_free(g_mod);
}
END_TEST

/* ---- ThreadSample and the rundown through a session ---- */

typedef struct trace_seen {
    int samples, methods, modules, dcend_init, dcend_complete;
    uint64_t sample_thread, sample_capture;
    size_t sample_frames;
    uint64_t sample_ips[4];
    uint32_t sample_type;
    uint64_t start[3];
    uint32_t size[3], token[3];
} trace_seen;

static void on_event(void *ctx, const mantra_trace_event *ev) {
    trace_seen *s = ctx;
    const char *prov = ev->metadata->provider;
    uint32_t id = ev->metadata->event_id;
    if (strcmp(prov, "Microsoft-DotNETCore-SampleProfiler") == 0 && id == 0) {
        s->samples++;
        s->sample_thread = ev->thread_id;
        s->sample_capture = ev->capture_thread_id;
        s->sample_frames = ev->stack_count;
        for (size_t i = 0; i < ev->stack_count && i < 4; i++)
            s->sample_ips[i] = mantra_trace_event_ip(ev, i);
        ck_assert_uint_eq(ev->payload_size, 4);
        memcpy(&s->sample_type, ev->payload, 4);
    } else if (strcmp(prov, "Microsoft-Windows-DotNETRuntimeRundown") == 0) {
        if (id == 144 && s->methods < 3) {
            /* MethodID, ModuleID, MethodStartAddress (u64), MethodSize, MethodToken (u32) */
            memcpy(&s->start[s->methods], ev->payload + 16, 8);
            memcpy(&s->size[s->methods], ev->payload + 24, 4);
            memcpy(&s->token[s->methods], ev->payload + 28, 4);
            s->methods++;
        }
        s->modules += id == 154;
        s->dcend_init += id == 148;
        s->dcend_complete += id == 146;
    }
}

START_TEST(thread_sample_and_rundown_in_a_trace) {
    /* the threadless build has no sampler thread; the rundown is registered all the same */
    ck_assert_int_eq(mantra_dotnet_stacks_init(0), mantra_threadless() ? MANTRA_EUNSUPPORTED : 0);
    mantra_interp_sampler_stop(); /* this test samples by hand: an exact count */
    worker w;
    pthread_t th;
    start_worker(&w, &th);
    const char *path = st_path("sample.nettrace");
    mantra_session_config c;
    st_config_file(&c, "Microsoft-DotNETCore-SampleProfiler:0:5", path, 0);
    c.rundown_keywords = MANTRA_DEFAULT_RUNDOWN_KEYWORDS;
    mantra_session_id id = st_start(&c);
    ck_assert_int_eq(mantra_dotnet_stacks_sample(), 1);
    finish_worker(&w, th);
    ck_assert_int_eq(mantra_dotnet_stacks_sample(), 0); /* nothing in a run */
    ck_assert_int_eq(mantra_session_stop(id), 0);       /* rundown: the program is still loaded */
    ck_assert_int_eq(mantra_dotnet_stacks_sample(), 0); /* disabled */
    trace_seen s;
    memset(&s, 0, sizeof s);
    readback rb;
    st_read_trace(path, &rb, on_event, &s);
    ck_assert_int_eq(rb.complete, 1);
    ck_assert_int_eq(s.samples, 1);
    ck_assert_uint_eq(s.sample_type, 2); /* Managed */
    ck_assert_uint_eq(s.sample_thread, w.tid);
    ck_assert_uint_eq(s.sample_capture, mantra_pal_thread_id());
    ck_assert_uint_eq(s.sample_frames, 3);
    ck_assert_uint_eq(s.sample_ips[0], code_of(w.prog, "Blk.inner", NULL) + 12);
    ck_assert_uint_eq(s.sample_ips[1], code_of(w.prog, "Blk.outer", NULL) + 1);
    ck_assert_uint_eq(s.sample_ips[2], code_of(w.prog, "Blk.main", NULL));
    ck_assert_int_eq(s.modules, 1);
    ck_assert_int_eq(s.dcend_init, 1);
    ck_assert_int_eq(s.dcend_complete, 1);
    ck_assert_int_eq(s.methods, 3);
    static const char *names[3] = {"Blk.main", "Blk.outer", "Blk.inner"};
    for (int i = 0; i < 3; i++) {
        size_t size;
        ck_assert_uint_eq(s.start[i], code_of(w.prog, names[i], &size));
        ck_assert_uint_eq(s.size[i], size);
        ck_assert_uint_eq(s.token[i], 0x06000001u + (uint32_t)i);
    }
    mantra_dotnet_stacks_fini();
    mantra_interp_program_free(w.prog);
    mantra_interp_module_free(g_mod);
}
END_TEST

/* ---- the sampler thread against a running, recursing thread ---- */

static const char FIB_SRC[] =
    ".module Fib 3f2504e0-4f89-11d3-9a0c-0305e82c3303\n"
    ".method Fib.main int64()\n"
    "        ldc.i8 24\n"
    "        call Fib.fib\n"
    "        ret\n"
    ".end\n"
    ".method Fib.fib int64(int64)\n"
    "        ldarg 0\n"
    "        ldc.i8 2\n"
    "        blt small\n"
    "        ldarg 0\n"
    "        ldc.i8 1\n"
    "        sub\n"
    "        call Fib.fib\n"
    "        ldarg 0\n"
    "        ldc.i8 2\n"
    "        sub\n"
    "        call Fib.fib\n"
    "        add\n"
    "        ret\n"
    "small:  ldarg 0\n"
    "        ret\n"
    ".end\n";

typedef struct check_ctx {
    const mantra_interp_program *prog;
    uint64_t fib, main_call, call1, call2;
    _Atomic int samples, bad;
} check_ctx;

/* Every sample must be a stack the program can have: at the leaf fib's entry, where its blt went
 * (not taken: 17 bytes in; taken: small) or one of its two call instructions (the one it returned
 * to last), those calls in between, main's call at the root. */
static void check_sample(void *ctx, const mantra_interp_sample *s) {
    check_ctx *c = ctx;
    if (s->program != c->prog)
        return;
    int ok = s->frames >= 1;
    size_t n = s->frames;
    for (size_t i = 0; ok && i < n; i++) {
        uint64_t ip = s->ips[i];
        if (n == 1) /* main's entry, or its call once fib returned */
            ok = ip == c->main_call - 9 || ip == c->main_call;
        else if (i == 0) /* fib's entry, or the call it last returned to */
            ok = ip == c->fib || ip == c->fib + 17 || ip == c->call1 || ip == c->call2 || ip == c->call2 + 7;
        else if (i == n - 1)
            ok = n - 1 < MANTRA_INTERP_SAMPLE_FRAMES - 1 ? ip == c->main_call : (ip == c->call1 || ip == c->call2);
        else
            ok = ip == c->call1 || ip == c->call2;
    }
    atomic_fetch_add(&c->samples, 1);
    if (!ok)
        atomic_fetch_add(&c->bad, 1);
}

static int tick(void *ctx) {
    (void)mantra_interp_sample_threads(check_sample, ctx);
    return 1; /* active: every interval */
}

/* An idle tick: counts its calls and asks to sleep until woken. */
static _Atomic int g_idle_ticks;
static int idle_tick(void *ctx) {
    (void)ctx;
    atomic_fetch_add(&g_idle_ticks, 1);
    return 0;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static int wait_ticks(int want) {
    for (int k = 0; k < 20000 && atomic_load(&g_idle_ticks) < want; k++)
        sleep_ms(1); /* up to 20 s: a slow sanitizer build */
    return atomic_load(&g_idle_ticks);
}

START_TEST(idle_sampler_sleeps_until_woken) {
    if (mantra_threadless()) {
        mantra_interp_sampler_wake(); /* no sampler: a no-op */
        return;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_assert_int_eq(mantra_interp_sampler_start(1, idle_tick, NULL), 0);
    ck_assert_int_eq(wait_ticks(1), 1); /* the first tick, after 1 ms, says idle */
    sleep_ms(100);                 /* an active sampler would tick ~100 times here */
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    /* only the backstop (every MANTRA_INTERP_SAMPLER_IDLE_MS) may have ticked since */
    int backstop = (int)(ms / MANTRA_INTERP_SAMPLER_IDLE_MS);
    int before = atomic_load(&g_idle_ticks);
    ck_assert_int_le(before, 1 + backstop);
    mantra_interp_sampler_wake(); /* the next tick follows at once */
    ck_assert_int_ge(wait_ticks(before + 1), before + 1);
    mantra_interp_sampler_stop();
    int after = atomic_load(&g_idle_ticks);
    sleep_ms(20);
    ck_assert_int_eq(atomic_load(&g_idle_ticks), after); /* stopped: no more ticks */
    mantra_interp_sampler_wake();                        /* after the stop: a no-op */
}
END_TEST

START_TEST(sampler_thread_sees_consistent_stacks) {
    if (mantra_threadless()) {
        ck_assert_int_eq(mantra_interp_sampler_start(1, tick, NULL), MANTRA_EUNSUPPORTED);
        return;
    }
    mantra_interp_program *p = load(FIB_SRC);
    check_ctx c;
    memset(&c, 0, sizeof c);
    c.prog = p;
    c.fib = code_of(p, "Fib.fib", NULL);
    c.main_call = code_of(p, "Fib.main", NULL) + 9; /* after ldc.i8 (9 bytes) */
    /* fib: ldarg(3) ldc.i8(9) blt(5) ldarg(3) ldc.i8(9) sub(1) call(5) ldarg(3) ldc.i8(9) sub(1) call */
    c.call1 = c.fib + 3 + 9 + 5 + 3 + 9 + 1;
    c.call2 = c.call1 + 5 + 3 + 9 + 1;
    ck_assert_int_eq(mantra_interp_sampler_start(1, tick, &c), 0);
    ck_assert_int_eq(mantra_interp_sampler_start(1, tick, &c), MANTRA_ESTATE); /* one per process */
    mantra_interp_thread *t = NULL;
    ck_assert_int_eq(mantra_interp_thread_create(p, NULL, &t), 0);
    mantra_interp_value r;
    /* runs until the sampler has seen 20 stacks (not a timing: a run is ~10 ms, a tick 1 ms) */
    for (int k = 0; k < 100000 && atomic_load(&c.samples) < 20; k++) {
        ck_assert_int_eq(mantra_interp_thread_run(t, "main", NULL, 0, &r), 0);
        ck_assert_int_eq(r.i, 46368);
    }
    mantra_interp_sampler_stop();
    mantra_interp_sampler_stop(); /* a second stop is a no-op */
    int bad = atomic_load(&c.bad), samples = atomic_load(&c.samples);
    ck_assert_int_ge(samples, 20);
    ck_assert_int_eq(bad, 0);
    mantra_interp_thread_free(t);
    mantra_interp_program_free(p);
    mantra_interp_module_free(g_mod);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("stacks_sampler");
    TCase *tc = tcase_create("main");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, published_stack_is_exact);
    tcase_add_test(tc, idle_sampler_sleeps_until_woken);
    tcase_add_test(tc, thread_sample_and_rundown_in_a_trace);
    tcase_add_test(tc, sampler_thread_sees_consistent_stacks);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    mantra_dotnet_register();
    st_init_dir("stacks");
    return run_suite(suite(), CK_FORK_GETENV);
}
