/* emit_threads.h with POSIX threads: each writer checks in at a gate and waits until the main
 * thread opens it for all at once (a barrier that also lets the main thread call the run off when
 * a thread cannot be created). */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "emit_threads.h"

static pthread_mutex_t g_gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_gate_cond = PTHREAD_COND_INITIALIZER;
static uint32_t g_ready;
static int g_gate; /* 0 closed, 1 open: write, -1 open: write nothing */
static atomic_uint g_finished;

typedef struct runner {
    pthread_t handle;
    emit_thread *w;
    void (*write)(emit_thread *);
} runner;

uint32_t emit_max_threads(void) { return 1024u; }

static void *runner_main(void *arg) {
    runner *r = arg;
    pthread_mutex_lock(&g_gate_lock);
    g_ready++;
    pthread_cond_broadcast(&g_gate_cond);
    while (g_gate == 0)
        pthread_cond_wait(&g_gate_cond, &g_gate_lock);
    int go = g_gate > 0;
    pthread_mutex_unlock(&g_gate_lock);
    if (!go)
        r->w->events = 0;
    r->write(r->w);
    atomic_fetch_add(&g_finished, 1);
    return NULL;
}

uint32_t emit_threads_run(emit_thread *ws, uint32_t n, void (*write)(emit_thread *), void (*pump)(void),
                          double pump_s) {
    runner *rs = calloc(n, sizeof *rs);
    if (rs == NULL)
        return 0;
    uint32_t started = 0;
    for (; started < n; started++) {
        rs[started].w = &ws[started];
        rs[started].write = write;
        if (pthread_create(&rs[started].handle, NULL, runner_main, &rs[started]) != 0)
            break;
    }
    pthread_mutex_lock(&g_gate_lock);
    while (g_ready < started)
        pthread_cond_wait(&g_gate_cond, &g_gate_lock);
    g_gate = started == n ? 1 : -1;
    pthread_cond_broadcast(&g_gate_cond);
    pthread_mutex_unlock(&g_gate_lock);
    if (pump != NULL) {
        const struct timespec ms = {0, 1000000};
        double last = emit_now();
        while (atomic_load(&g_finished) < started) {
            nanosleep(&ms, NULL);
            double t = emit_now();
            if (t - last >= pump_s) {
                pump();
                last = t;
            }
        }
    }
    for (uint32_t k = 0; k < started; k++)
        pthread_join(rs[k].handle, NULL);
    free(rs);
    return started;
}
