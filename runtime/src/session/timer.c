/* timer.c - mantra_session_stop_after: stopping one session when a window ends. A timer thread
 * per window (threaded build) or a job of mantra_pump that checks the clock (threadless build).
 * The stop goes by session id, and ids carry a generation (session.c), so a timer left from an
 * earlier session can never stop a later one, even one in the same slot. mantra_shutdown
 * cancels every timer first (ss_timers_shutdown). */
#include <stdlib.h>

#include "session-internal.h"
#include "mantra/pump.h"

#ifndef MANTRA_THREADLESS
typedef struct ss_timer {
    struct ss_timer *next; /* g_timers, table lock */
    mantra_session_id id;
    uint64_t deadline_ns;
    mantra_pal_mutex lock;
    mantra_pal_cond cond;
    int cancelled;   /* lock */
    _Atomic int done; /* the thread has finished: join and free */
    mantra_pal_thread thread;
} ss_timer;

static ss_timer *g_timers; /* threaded timers, under the table lock */
#endif

/* 1 while the session still runs (a stopped one needs no timer). */
static int session_running(mantra_session_id id) { return mantra_session_bit(id) >= 0; }

#ifndef MANTRA_THREADLESS
static void timer_main(void *arg) {
    ss_timer *t = arg;
    int fire = 0;
    mantra_pal_mutex_lock(&t->lock);
    for (;;) {
        if (t->cancelled)
            break;
        uint64_t now = mantra_pal_now_ns();
        if (now >= t->deadline_ns) {
            fire = 1;
            break;
        }
        uint64_t left_ms = (t->deadline_ns - now + 999999u) / 1000000u;
        mantra_pal_cond_timedwait(&t->cond, &t->lock, (uint32_t)(left_ms < 100 ? left_ms : 100));
        if (!session_running(t->id)) /* stopped by someone else: nothing left to do */
            break;
    }
    mantra_pal_mutex_unlock(&t->lock);
    if (fire)
        (void)mantra_session_stop(t->id);
    atomic_store(&t->done, 1);
}

/* Joins and frees the timers whose thread has finished. */
static void reap(int all) {
    for (;;) {
        ss_timer *found = NULL;
        ss_ctl_lock();
        for (ss_timer **pp = &g_timers; *pp != NULL; pp = &(*pp)->next)
            if (all || atomic_load(&(*pp)->done)) {
                found = *pp;
                *pp = found->next;
                break;
            }
        ss_ctl_unlock();
        if (found == NULL)
            return;
        if (all) {
            mantra_pal_mutex_lock(&found->lock);
            found->cancelled = 1;
            mantra_pal_cond_signal(&found->cond);
            mantra_pal_mutex_unlock(&found->lock);
        }
        mantra_pal_thread_join(&found->thread);
        mantra_pal_cond_destroy(&found->cond);
        mantra_pal_mutex_destroy(&found->lock);
        free(found);
    }
}

int mantra_session_stop_after(mantra_session_id id, uint32_t ms) {
    if (!session_running(id))
        return ss_set_error("unknown session id"), MANTRA_EINVAL;
    reap(0);
    ss_timer *t = calloc(1, sizeof *t);
    if (t == NULL)
        return ss_set_error("out of memory"), MANTRA_ENOMEM;
    t->id = id;
    t->deadline_ns = mantra_pal_now_ns() + (uint64_t)ms * 1000000u;
    if (mantra_pal_mutex_init(&t->lock) != 0) {
        free(t);
        return ss_set_error("out of memory"), MANTRA_ENOMEM;
    }
    if (mantra_pal_cond_init(&t->cond) != 0) {
        mantra_pal_mutex_destroy(&t->lock);
        free(t);
        return ss_set_error("out of memory"), MANTRA_ENOMEM;
    }
    /* linked before the thread starts, so that a shutdown racing with us joins it */
    ss_ctl_lock();
    int rc = mantra_pal_thread_start(&t->thread, timer_main, t);
    if (rc == 0) {
        t->next = g_timers;
        g_timers = t;
    }
    ss_ctl_unlock();
    if (rc != 0) {
        mantra_pal_cond_destroy(&t->cond);
        mantra_pal_mutex_destroy(&t->lock);
        free(t);
        return ss_set_error("cannot start the timer thread"), rc;
    }
    return MANTRA_OK;
}

void ss_timers_shutdown(void) { reap(1); }

#else /* MANTRA_THREADLESS: a job that checks the clock at every pump */

static _Atomic unsigned g_cancel_epoch; /* bumped by mantra_shutdown: every queued timer ends */

typedef struct job_timer {
    mantra_session_id id;
    uint64_t deadline_ns;
    unsigned epoch;
} job_timer;

static int timer_job(void *data) {
    job_timer *t = data;
    if (atomic_load(&g_cancel_epoch) != t->epoch || !session_running(t->id)) {
        free(t);
        return MANTRA_JOB_DONE;
    }
    if (mantra_pal_now_ns() < t->deadline_ns)
        return MANTRA_JOB_AGAIN;
    (void)mantra_session_stop(t->id);
    free(t);
    return MANTRA_JOB_DONE;
}

int mantra_session_stop_after(mantra_session_id id, uint32_t ms) {
    if (!session_running(id))
        return ss_set_error("unknown session id"), MANTRA_EINVAL;
    job_timer *t = malloc(sizeof *t);
    if (t == NULL)
        return ss_set_error("out of memory"), MANTRA_ENOMEM;
    t->id = id;
    t->deadline_ns = mantra_pal_now_ns() + (uint64_t)ms * 1000000u;
    t->epoch = atomic_load(&g_cancel_epoch);
    int rc = mantra_queue_job(timer_job, t);
    if (rc != 0) {
        free(t);
        return ss_set_error("cannot queue the timer job"), rc;
    }
    return MANTRA_OK;
}

void ss_timers_shutdown(void) { atomic_fetch_add(&g_cancel_epoch, 1); }
#endif
