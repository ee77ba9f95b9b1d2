/* sym_logical.h - logical async stacks for `mantra report --logical` and `mantra export --logical`
 * (sym_logical.c; docs/profiler.md "Logical stacks"): the trace's Mantra-Interp AsyncMethod events
 * say, per thread and time, which async call (activity) runs, and each call's Start event carries
 * the stack it was called from and its awaiting caller (RelatedActivityId). A sample taken inside a
 * resumed method, whose physical stack ends at the dispatcher that resumed it, is attributed to the
 * chain of awaiting callers instead, as PerfView's activity computation does. */
#ifndef MANTRA_TOOL_SYM_LOGICAL_H
#define MANTRA_TOOL_SYM_LOGICAL_H

#include <stdint.h>

#include "pgo_tool.h"
#include "sym_samples.h"

typedef struct sym_activity {
    mantra_guid id;
    long parent;            /* its awaiting caller (the Start's RelatedActivityId): index in acts, -1 none */
    int started;            /* its Start was seen (self, parent and the creation frames are known) */
    uint32_t self;          /* the name of its method's frame (the Start stack's leaf) */
    uint32_t first, count;  /* the Start stack's other frames (its callers then), in frames */
    int state;              /* the logical frames below it: 0 not computed, 1 computing, 2 done */
    uint32_t below_first, below_count; /* in below */
} sym_activity;

typedef struct sym_act_event {
    uint64_t thread;
    int64_t time;
    size_t order;           /* the reader's order (index in evs when taken), for events of one time */
    uint32_t activity;      /* index in acts */
    int push;               /* Start, Resume: 1; Suspend, Stop: 0 */
} sym_act_event;

typedef struct sym_logical {
    sym_activity *acts;
    size_t nacts, cap_acts;
    pgo_strmap index;       /* activity id (32 hex digits) -> acts index */
    sym_act_event *evs;
    size_t nevs, cap_evs;
    uint32_t *frames, *below;
    size_t nframes, cap_frames, nbelow, cap_below;
    size_t attributed;      /* samples given a logical stack */
} sym_logical;

/* Whether ev is an event whose stack sym_logical_take needs (resolved and named): AsyncMethodStart. */
int sym_logical_wants(const mantra_trace_event *ev);
/* Whether ev is one of the Mantra-Interp AsyncMethod events (then taken, with names[0..n) the names
 * of its stack's frames, leaf first, for the events sym_logical_wants; n 0 for others): 1 taken, 0
 * not such an event, -2 out of memory. */
int sym_logical_take(sym_logical *lg, const mantra_trace_event *ev, const uint32_t *names, size_t n);
/* Rewrites the samples of ss (sorted by thread and time) inside a known async call with their
 * logical stacks (appended to ss->frames; the other samples keep theirs). 0 or -2. */
int sym_logical_apply(sym_logical *lg, sym_samples *ss);
void sym_logical_free(sym_logical *lg);

#endif
