/* async.c - the scheduler of async methods (async-internal.h): a table of tasks addressed by
 * generation-checked handles (a handle is a value a program holds, so every use is checked), the
 * ready queue of continuations (FIFO) and the timers of `delay`. */
#include <stdlib.h>

#include "common/grow-internal.h"
#include "interp/async-internal.h"

ip_sched *ip_sched_new(void) {
    ip_sched *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    if (mantra_pal_mutex_init(&s->lock) != 0) {
        free(s);
        return NULL;
    }
    if (mantra_pal_cond_init(&s->wake) != 0) {
        mantra_pal_mutex_destroy(&s->lock);
        free(s);
        return NULL;
    }
    return s;
}

static void free_list(ip_cont *c) {
    while (c != NULL) {
        ip_cont *n = c->next;
        free(c);
        c = n;
    }
}

void ip_sched_fini(ip_sched *s) {
    for (uint32_t i = 0; i < s->nslots; i++)
        free(s->slots[i].waiter);
    free(s->slots);
    free_list(s->ready_head);
    free_list(s->timers);
    mantra_pal_cond_destroy(&s->wake);
    mantra_pal_mutex_destroy(&s->lock);
}

/* Logical calls of every program's tasks, numbered in the process. */
static _Atomic uint64_t g_activities;

uint64_t ip_task_new(ip_sched *s) {
    uint64_t activity = atomic_fetch_add_explicit(&g_activities, 1u, memory_order_relaxed) + 1u;
    mantra_pal_mutex_lock(&s->lock);
    uint32_t i;
    if (s->free_head != 0) {
        i = s->free_head - 1;
        s->free_head = s->slots[i].next_free;
    } else {
        size_t cap = s->cap;
        if (s->nslots == UINT32_MAX - 1 ||
            cm_grow((void **)&s->slots, &cap, (size_t)s->nslots + 1, sizeof *s->slots, 64) != 0) {
            mantra_pal_mutex_unlock(&s->lock);
            return 0;
        }
        s->cap = (uint32_t)cap;
        i = s->nslots++;
        s->slots[i].gen = 0;
    }
    ip_task_slot *t = &s->slots[i];
    t->gen++;
    t->state = IP_TASK_PENDING;
    t->waiter = NULL;
    t->result.i = 0;
    t->activity = activity;
    uint64_t h = ((uint64_t)t->gen << 32) | (uint64_t)(i + 1);
    mantra_pal_mutex_unlock(&s->lock);
    return h;
}

/* The live slot of handle h (lock held), or NULL. */
static ip_task_slot *slot_of(ip_sched *s, uint64_t h) {
    uint32_t i = (uint32_t)h, gen = (uint32_t)(h >> 32);
    if (i == 0 || i > s->nslots)
        return NULL;
    ip_task_slot *t = &s->slots[i - 1];
    return t->state != IP_TASK_FREE && t->gen == gen ? t : NULL;
}

uint64_t ip_task_activity(ip_sched *s, uint64_t h) {
    mantra_pal_mutex_lock(&s->lock);
    ip_task_slot *t = slot_of(s, h);
    uint64_t a = t != NULL ? t->activity : 0;
    mantra_pal_mutex_unlock(&s->lock);
    return a;
}

static void release_slot(ip_sched *s, ip_task_slot *t) {
    t->state = IP_TASK_FREE;
    t->next_free = s->free_head;
    s->free_head = (uint32_t)(t - s->slots) + 1;
}

static void ready_locked(ip_sched *s, ip_cont *c) {
    c->next = NULL;
    if (s->ready_tail)
        s->ready_tail->next = c;
    else
        s->ready_head = c;
    s->ready_tail = c;
    mantra_pal_cond_broadcast(&s->wake);
}

int ip_task_complete(ip_sched *s, uint64_t h, ip_value v) {
    mantra_pal_mutex_lock(&s->lock);
    ip_task_slot *t = slot_of(s, h);
    int rc = -1;
    if (t != NULL && t->state == IP_TASK_PENDING) {
        t->state = IP_TASK_DONE;
        t->result = v;
        if (t->waiter != NULL) { /* ready: that wakes the sleepers */
            ip_cont *c = t->waiter;
            t->waiter = NULL;
            ready_locked(s, c);
        } else { /* a `wait` of it may sleep */
            mantra_pal_cond_broadcast(&s->wake);
        }
        rc = 0;
    }
    mantra_pal_mutex_unlock(&s->lock);
    return rc;
}

int ip_task_take(ip_sched *s, uint64_t h, ip_value *v) {
    mantra_pal_mutex_lock(&s->lock);
    ip_task_slot *t = slot_of(s, h);
    int rc = t == NULL ? -1 : t->waiter != NULL ? -2 : t->state == IP_TASK_DONE ? 1 : 0;
    if (rc == 1) {
        *v = t->result;
        release_slot(s, t);
    }
    mantra_pal_mutex_unlock(&s->lock);
    return rc;
}

int ip_task_wait_with(ip_sched *s, uint64_t h, ip_cont *c) {
    mantra_pal_mutex_lock(&s->lock);
    ip_task_slot *t = slot_of(s, h);
    int rc = t == NULL ? -1 : t->waiter != NULL ? -2 : 0;
    if (rc == 0) {
        c->awaited = h;
        if (t->state == IP_TASK_DONE)
            ready_locked(s, c); /* completed since the caller looked */
        else
            t->waiter = c;
    }
    mantra_pal_mutex_unlock(&s->lock);
    return rc;
}

ip_cont *ip_cont_new(const ip_lmethod *m, const uint8_t *ip, uint64_t task, const ip_value *from, const ip_value *to) {
    size_t n = (size_t)(to - from);
    ip_cont *c = malloc(sizeof *c + n * sizeof(ip_value));
    if (c == NULL)
        return NULL;
    c->next = NULL;
    c->method = m;
    c->ip = ip;
    c->task = task;
    c->awaited = 0;
    c->deadline_ns = 0;
    c->nslots = (uint32_t)n;
    if (n)
        memcpy(c->slots, from, n * sizeof(ip_value));
    return c;
}

void ip_sched_ready(ip_sched *s, ip_cont *c) {
    mantra_pal_mutex_lock(&s->lock);
    ready_locked(s, c);
    mantra_pal_mutex_unlock(&s->lock);
}

void ip_sched_timer(ip_sched *s, ip_cont *c, uint64_t delay_ms) {
    /* saturated: a delay of more than ~292 years waits as long as the clock goes */
    uint64_t now = mantra_pal_monotonic_ns(), d = delay_ms > UINT64_MAX / 1000000u ? UINT64_MAX : delay_ms * 1000000u;
    c->deadline_ns = d > UINT64_MAX - now ? UINT64_MAX : now + d;
    mantra_pal_mutex_lock(&s->lock);
    ip_cont **p = &s->timers; /* kept by deadline, earliest first (the same deadline: in order) */
    while (*p != NULL && (*p)->deadline_ns <= c->deadline_ns)
        p = &(*p)->next;
    c->next = *p;
    *p = c;
    mantra_pal_cond_broadcast(&s->wake);
    mantra_pal_mutex_unlock(&s->lock);
}

ip_cont *ip_sched_next(ip_sched *s, uint64_t *wait_ns) {
    mantra_pal_mutex_lock(&s->lock);
    uint64_t now = s->timers ? mantra_pal_monotonic_ns() : 0;
    while (s->timers != NULL && s->timers->deadline_ns <= now) { /* due timers join the ready queue */
        ip_cont *c = s->timers;
        s->timers = c->next;
        ready_locked(s, c);
    }
    ip_cont *c = s->ready_head;
    if (c != NULL) {
        s->ready_head = c->next;
        if (s->ready_head == NULL)
            s->ready_tail = NULL;
        c->next = NULL;
    }
    *wait_ns = s->timers != NULL ? s->timers->deadline_ns - now : UINT64_MAX;
    mantra_pal_mutex_unlock(&s->lock);
    return c;
}

void ip_sched_sleep(ip_sched *s, uint64_t wait_ns, uint64_t h) {
    uint64_t ms = wait_ns / 1000000u + 1u;
    mantra_pal_mutex_lock(&s->lock);
    /* looked at under the lock, so that a completion or a ready continuation since the caller's
     * last look is not slept through */
    const ip_task_slot *t = h != 0 ? slot_of(s, h) : NULL;
    if (s->ready_head == NULL && (h == 0 || (t != NULL && t->state == IP_TASK_PENDING)))
        mantra_pal_cond_timedwait(&s->wake, &s->lock, ms > 1000u ? 1000u : (uint32_t)ms);
    mantra_pal_mutex_unlock(&s->lock);
}
