/* sample.c - what a sampling profiler and a rundown need of the interpreter (mantra/interp.h,
 * "Sampling"; docs/interp.md): the registries of live threads and loaded programs, and the
 * consistent read of a thread's published call stack (the seqlock of exec-internal.h). The
 * registries take a spin lock on create/free/load and for one walk; runs never take it. */
#include <stdatomic.h>
#include <stdlib.h>

#include "interp/exec-internal.h"
#include "platform/platform-internal.h"

static atomic_flag g_lock = ATOMIC_FLAG_INIT;
static mantra_interp_thread *g_threads;   /* g_lock */
static mantra_interp_program *g_programs; /* g_lock */

static void reg_lock(void) {
    while (atomic_flag_test_and_set_explicit(&g_lock, memory_order_acquire))
        mantra_pal_yield();
}
static void reg_unlock(void) { atomic_flag_clear_explicit(&g_lock, memory_order_release); }

void ip_registry_add_thread(mantra_interp_thread *t) {
    reg_lock();
    t->next_live = g_threads;
    g_threads = t;
    reg_unlock();
}

/* Calls and instructions of the threads already freed (mantra_interp_calls_total,
 * mantra_interp_instructions_total). */
static uint64_t g_calls_freed, g_insns_freed; /* g_lock */

/* The freed threads' part plus every live thread's count: instructions when insns, else calls. */
static uint64_t total(int insns) {
    reg_lock();
    uint64_t n = insns ? g_insns_freed : g_calls_freed;
    for (mantra_interp_thread *t = g_threads; t; t = t->next_live)
        n += atomic_load_explicit(insns ? &t->insns : &t->calls, memory_order_relaxed);
    reg_unlock();
    return n;
}

uint64_t mantra_interp_calls_total(void) { return total(0); }

uint64_t mantra_interp_instructions_total(void) { return total(1); }

void ip_registry_remove_thread(mantra_interp_thread *t) {
    reg_lock();
    g_calls_freed += atomic_load_explicit(&t->calls, memory_order_relaxed);
    g_insns_freed += atomic_load_explicit(&t->insns, memory_order_relaxed);
    for (mantra_interp_thread **pp = &g_threads; *pp; pp = &(*pp)->next_live)
        if (*pp == t) {
            *pp = t->next_live;
            break;
        }
    reg_unlock();
}

void ip_registry_add_program(mantra_interp_program *p) {
    reg_lock();
    p->next_live = g_programs;
    g_programs = p;
    reg_unlock();
}

void ip_registry_remove_program(mantra_interp_program *p) {
    reg_lock();
    for (mantra_interp_program **pp = &g_programs; *pp; pp = &(*pp)->next_live)
        if (*pp == p) {
            *pp = p->next_live;
            break;
        }
    reg_unlock();
}

/* Reads t's published stack, leaf first, at most max frames (the leaf-most). 0: not in a run, or
 * the stack kept changing (a few tries: the sampler skips the thread this time). */
static size_t read_stack(const mantra_interp_thread *t, uint64_t *ips, size_t max, uint64_t *tid) {
    const ip_pub *p = &t->pub;
    for (int attempt = 0; attempt < 8; attempt++) {
        uint32_t s1 = atomic_load_explicit(&p->seq, memory_order_acquire);
        if (s1 & 1u)
            continue;
        int32_t d = atomic_load_explicit(&p->depth, memory_order_acquire);
        size_t n = 0;
        for (int32_t k = d; k >= 0 && n < max; k--)
            ips[n++] = (uint64_t)atomic_load_explicit(&p->ips[k], memory_order_acquire);
        *tid = atomic_load_explicit(&p->os_tid, memory_order_relaxed);
        if (atomic_load_explicit(&p->seq, memory_order_relaxed) == s1)
            return d < 0 ? 0 : n;
    }
    return 0;
}

int mantra_interp_sample_threads(mantra_interp_sample_fn fn, void *ctx) {
    if (fn == NULL)
        return MANTRA_EINVAL;
    uint64_t ips[MANTRA_INTERP_SAMPLE_FRAMES];
    int n = 0;
    reg_lock();
    for (mantra_interp_thread *t = g_threads; t; t = t->next_live) {
        mantra_interp_sample s = {t->prog, 0, ips, 0};
        s.frames = read_stack(t, ips, MANTRA_INTERP_SAMPLE_FRAMES, &s.os_thread_id);
        if (s.frames == 0)
            continue;
        fn(ctx, &s);
        n++;
    }
    reg_unlock();
    return n;
}

int mantra_interp_foreach_program(void (*fn)(void *ctx, const mantra_interp_program *p), void *ctx) {
    if (fn == NULL)
        return MANTRA_EINVAL;
    int n = 0;
    reg_lock();
    for (mantra_interp_program *p = g_programs; p; p = p->next_live, n++)
        fn(ctx, p);
    reg_unlock();
    return n;
}

/* ---- the sampler thread ------------------------------------------------------------------------ */

#ifndef MANTRA_THREADLESS
typedef struct sampler {
    mantra_pal_mutex lock;
    mantra_pal_cond cond;
    int stop;  /* lock */
    int woken; /* lock: mantra_interp_sampler_wake since the last tick */
    uint32_t interval_ms;
    mantra_interp_tick_fn tick;
    void *ctx;
    mantra_pal_thread thread;
} sampler;

static sampler *g_sampler; /* g_sampler_lock */
static atomic_flag g_sampler_lock = ATOMIC_FLAG_INIT;

/* Ticks every interval while the tick says it is active; while it is idle, sleeps until a wake
 * (or the backstop), so that an idle process does not wake a thousand times a second. A wake that
 * comes while the tick runs is kept (woken) and ends the next sleep at once. */
static void sampler_main(void *arg) {
    sampler *s = arg;
    int active = 1;
    mantra_pal_mutex_lock(&s->lock);
    while (!s->stop) {
        if (!s->woken)
            mantra_pal_cond_timedwait(&s->cond, &s->lock, active ? s->interval_ms : MANTRA_INTERP_SAMPLER_IDLE_MS);
        if (s->stop)
            break;
        s->woken = 0;
        mantra_pal_mutex_unlock(&s->lock);
        active = s->tick(s->ctx) != 0;
        mantra_pal_mutex_lock(&s->lock);
    }
    mantra_pal_mutex_unlock(&s->lock);
}

int mantra_interp_sampler_start(uint32_t interval_ms, mantra_interp_tick_fn tick, void *ctx) {
    if (tick == NULL)
        return MANTRA_EINVAL;
    while (atomic_flag_test_and_set_explicit(&g_sampler_lock, memory_order_acquire))
        mantra_pal_yield();
    int rc = MANTRA_ESTATE;
    sampler *s = NULL;
    if (g_sampler == NULL && (s = calloc(1, sizeof *s)) != NULL) {
        s->interval_ms = interval_ms ? interval_ms : 1u;
        s->tick = tick;
        s->ctx = ctx;
        rc = mantra_pal_mutex_init(&s->lock);
        if (rc == 0 && (rc = mantra_pal_cond_init(&s->cond)) != 0)
            mantra_pal_mutex_destroy(&s->lock);
        if (rc == 0 && (rc = mantra_pal_thread_start(&s->thread, sampler_main, s)) != 0) {
            mantra_pal_cond_destroy(&s->cond);
            mantra_pal_mutex_destroy(&s->lock);
        }
        if (rc == 0)
            g_sampler = s;
        else
            free(s);
    } else if (g_sampler == NULL) {
        rc = MANTRA_ENOMEM;
    }
    atomic_flag_clear_explicit(&g_sampler_lock, memory_order_release);
    return rc;
}

void mantra_interp_sampler_wake(void) {
    while (atomic_flag_test_and_set_explicit(&g_sampler_lock, memory_order_acquire))
        mantra_pal_yield();
    sampler *s = g_sampler;
    if (s != NULL) { /* stop takes g_sampler_lock before it frees s */
        mantra_pal_mutex_lock(&s->lock);
        s->woken = 1;
        mantra_pal_cond_signal(&s->cond);
        mantra_pal_mutex_unlock(&s->lock);
    }
    atomic_flag_clear_explicit(&g_sampler_lock, memory_order_release);
}

void mantra_interp_sampler_stop(void) {
    while (atomic_flag_test_and_set_explicit(&g_sampler_lock, memory_order_acquire))
        mantra_pal_yield();
    sampler *s = g_sampler;
    g_sampler = NULL;
    atomic_flag_clear_explicit(&g_sampler_lock, memory_order_release);
    if (s == NULL)
        return;
    mantra_pal_mutex_lock(&s->lock);
    s->stop = 1;
    mantra_pal_cond_signal(&s->cond);
    mantra_pal_mutex_unlock(&s->lock);
    mantra_pal_thread_join(&s->thread);
    mantra_pal_cond_destroy(&s->cond);
    mantra_pal_mutex_destroy(&s->lock);
    free(s);
}
#else
/* Threadless: the interpreter runs on the only thread, so a tick could only ever see it between
 * runs, with nothing on its stack; no sampler (docs/interp.md "Sampling"). */
int mantra_interp_sampler_start(uint32_t interval_ms, mantra_interp_tick_fn tick, void *ctx) {
    (void)interval_ms;
    (void)tick;
    (void)ctx;
    return MANTRA_EUNSUPPORTED;
}
void mantra_interp_sampler_wake(void) {}
void mantra_interp_sampler_stop(void) {}
#endif
