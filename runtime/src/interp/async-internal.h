/* async-internal.h - tasks, continuations and the scheduler of async methods (docs/interp.md "Async
 * methods"). One scheduler per program, shared by its threads under its lock. Private. */
#ifndef MANTRA_INTERP_ASYNC_INTERNAL_H
#define MANTRA_INTERP_ASYNC_INTERNAL_H

#include "interp/exec-internal.h"
#include "platform/platform-internal.h"

/* A suspended method: its frame (arguments, locals and evaluation stack) and where it goes on. */
typedef struct ip_cont {
    struct ip_cont *next;     /* the ready queue, the timers */
    const ip_lmethod *method;
    const uint8_t *ip;        /* the instruction after the one that suspended */
    uint64_t task;            /* the method's own task */
    uint64_t awaited;         /* the task whose result it receives on resumption (0: yield, delay) */
    uint64_t deadline_ns;     /* delay: when it is ready */
    uint32_t nslots;
    ip_value slots[];
} ip_cont;

typedef struct ip_task_slot {
    uint32_t gen;             /* bumped at every reuse: stale handles are refused */
    uint8_t state;            /* IP_TASK_FREE, _PENDING, _DONE */
    ip_value result;
    ip_cont *waiter;          /* the continuation awaiting it */
    uint32_t next_free;
    uint64_t activity;        /* its logical call, unique in the process (the tracer's activity) */
} ip_task_slot;

enum { IP_TASK_FREE = 0, IP_TASK_PENDING = 1, IP_TASK_DONE = 2 };

struct ip_sched {
    mantra_pal_mutex lock;
    mantra_pal_cond wake;     /* a continuation became ready, a task completed */
    ip_task_slot *slots;
    uint32_t nslots, cap, free_head; /* free_head: index + 1, 0 none */
    ip_cont *ready_head, *ready_tail;
    ip_cont *timers;
    _Atomic int32_t running;  /* threads inside a run of the program */
};

/* A scheduler (NULL: out of memory); ip_sched_fini releases what it holds, then free() it. */
ip_sched *ip_sched_new(void);
void ip_sched_fini(ip_sched *s);

/* A new pending task: its handle ((generation << 32) | (index + 1)), or 0 when out of memory. */
uint64_t ip_task_new(ip_sched *s);
/* The logical call of live task h (unique in the process, never 0), 0 for a handle that is not a
 * live task. */
uint64_t ip_task_activity(ip_sched *s, uint64_t h);
/* Completes task h with v: its waiter, if any, becomes ready. 0, or -1 for a handle that is not a
 * pending task. */
int ip_task_complete(ip_sched *s, uint64_t h, ip_value v);
/* A task's state: 1 done (the result in *v; the task is consumed: a task is awaited once), 0
 * pending, -1 not a task, -2 a task already awaited by another continuation. */
int ip_task_take(ip_sched *s, uint64_t h, ip_value *v);
/* Makes c the waiter of pending task h (ready at once if h completed meanwhile). 0, -1 not a task,
 * -2 awaited already. */
int ip_task_wait_with(ip_sched *s, uint64_t h, ip_cont *c);

/* A continuation of method m at ip with slots [from, to) of the value stack. NULL: out of memory. */
ip_cont *ip_cont_new(const ip_lmethod *m, const uint8_t *ip, uint64_t task, const ip_value *from, const ip_value *to);
void ip_sched_ready(ip_sched *s, ip_cont *c);
void ip_sched_timer(ip_sched *s, ip_cont *c, uint64_t delay_ms);
/* The next ready continuation (due timers first become ready), or NULL: *wait_ns is then how long
 * until the next timer (UINT64_MAX: no timer). */
ip_cont *ip_sched_next(ip_sched *s, uint64_t *wait_ns);
/* exec.c: resumes continuation c on t with its frame at sp, frame index depth (and frees c).
 * 0 or MANTRA_ESTATE (a fault: t->err). */
int ip_run_cont(mantra_interp_thread *t, ip_cont *c, ip_value *sp, uint32_t depth);
/* Sleeps until woken (a continuation ready, a task done) or wait_ns passed; not at all when a
 * continuation is ready or task h (0: none) is no longer pending. */
void ip_sched_sleep(ip_sched *s, uint64_t wait_ns, uint64_t h);

#endif
