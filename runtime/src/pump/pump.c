/* The job queue of the threadless build (mantra/pump.h), as EventPipe's ep_rt_queue_job under
 * PERFTRACING_DISABLE_THREADS (dotnet/runtime, src/native/eventpipe/ep-rt.h and ep-session.c,
 * streaming_loop_tick).
 *
 * A FIFO list under a spin lock (queueing and pumping are rare next to event writes). mantra_pump()
 * detaches the list, runs each job once without the lock held (a job may queue jobs or stop
 * sessions), then puts the jobs that asked to run again back in front of anything queued
 * meanwhile, in their original order. */
#include <stdatomic.h>
#include <stdlib.h>

#include "mantra/pump.h"
#include "mantra/status.h"
#include "platform/platform-internal.h"
#include "pump-internal.h"

typedef struct job {
    struct job *next;
    mantra_job_fn fn;
    void *data;
} job;

static atomic_flag g_lock = ATOMIC_FLAG_INIT;
static job *g_head, *g_tail; /* g_lock */
static size_t g_count;       /* g_lock */
static _Atomic int g_fail_next; /* tests: the next n queue attempts fail as out of memory */

static void lock(void) {
    while (atomic_flag_test_and_set_explicit(&g_lock, memory_order_acquire))
        mantra_pal_yield();
}
static void unlock(void) { atomic_flag_clear_explicit(&g_lock, memory_order_release); }

void mantra__jobs_fail_next(int n) { atomic_store(&g_fail_next, n); }

int mantra_queue_job(mantra_job_fn fn, void *data) {
    if (!fn)
        return MANTRA_EINVAL;
    int f = atomic_load(&g_fail_next);
    while (f > 0 && !atomic_compare_exchange_weak(&g_fail_next, &f, f - 1))
        ;
    if (f > 0)
        return MANTRA_ENOMEM;
    job *j = malloc(sizeof *j);
    if (!j)
        return MANTRA_ENOMEM;
    j->next = NULL;
    j->fn = fn;
    j->data = data;
    lock();
    if (g_tail)
        g_tail->next = j;
    else
        g_head = j;
    g_tail = j;
    g_count++;
    unlock();
    return MANTRA_OK;
}

size_t mantra_pump(void) {
    lock();
    job *list = g_head;
    g_head = g_tail = NULL;
    g_count = 0;
    unlock();
    job *again = NULL, *again_tail = NULL;
    size_t kept = 0;
    while (list) {
        job *j = list;
        list = j->next;
        j->next = NULL;
        if (j->fn(j->data) == MANTRA_JOB_AGAIN) {
            if (again_tail)
                again_tail->next = j;
            else
                again = j;
            again_tail = j;
            kept++;
        } else {
            free(j);
        }
    }
    lock();
    if (again) {
        again_tail->next = g_head;
        if (!g_head)
            g_tail = again_tail;
        g_head = again;
        g_count += kept;
    }
    size_t n = g_count;
    unlock();
    return n;
}

size_t mantra_jobs_pending(void) {
    lock();
    size_t n = g_count;
    unlock();
    return n;
}

int mantra_threadless(void) {
#ifdef MANTRA_THREADLESS
    return 1;
#else
    return 0;
#endif
}
