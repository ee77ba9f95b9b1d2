/* mantra/activity.h - activity ids: per thread, a current and a related activity id that every
 * event the thread writes carries in its header (nettrace: the row header's ActivityID and
 * RelatedActivityID; TraceEvent reports them as TraceEvent.ActivityID / RelatedActivityID).
 *
 * As EventSource keeps them (dotnet/runtime, src/libraries/System.Private.CoreLib/src/System/
 * Diagnostics/Tracing/EventSource.cs, SetCurrentThreadActivityId, and ActivityTracker.cs,
 * OnStart/OnStop): the ids are thread-local; a start makes a new id the current one and remembers
 * the previous, a stop restores it. Unlike ActivityTracker, whose ids encode the path of nested
 * activities, mantra's new ids are unique per process (a counter, the process id and the start
 * time), and the related id is thread state too: while it is set every event carries it, not
 * only the start event (docs/sessions.md "Activity ids").
 *
 * All zero means "none". None of these allocate after the thread's first event; they are cheap
 * enough for every request of a server. */
#ifndef MANTRA_ACTIVITY_H
#define MANTRA_ACTIVITY_H

#include "mantra/event.h"

MANTRA_BEGIN_DECLS

/* The calling thread's current activity id (all zero when none). */
void mantra_activity_get(mantra_guid *out);
/* Sets it (NULL or all zero: none); the previous one in *previous (may be NULL), as
 * EventSource.SetCurrentThreadActivityId(Guid, out Guid) returns it. MANTRA_OK or MANTRA_ENOMEM
 * (the thread could get no record: events carry no ids). */
int mantra_activity_set(const mantra_guid *id, mantra_guid *previous);
/* The calling thread's related activity id, and its setter (same rules). */
void mantra_activity_get_related(mantra_guid *out);
int mantra_activity_set_related(const mantra_guid *id, mantra_guid *previous);

/* What mantra_activity_start saves for its stop. */
typedef struct mantra_activity_scope {
    mantra_guid previous;         /* the current id before the start */
    mantra_guid previous_related; /* the related id before the start */
} mantra_activity_scope;

/* A new activity id, unique in the process (never all zero). */
void mantra_activity_new_id(mantra_guid *out);
/* The id of path /N in EventSource's activity path form (ActivityTracker; TraceEvent's
 * IsActivityPath and ActivityPathString, which print it "/#PID/N/"): the numbers of the path
 * nibble-coded in the first 12 bytes (a nibble 0xC + k - 1 then k little-endian bytes, a 0 nibble
 * at the end; N past 2^32 as the two numbers N >> 32 and N's low half), the last 4 bytes the sum of
 * the first three little-endian 32-bit words and 0x599D99AD, XORed with the process id. TraceEvent's
 * StartStopActivityComputer follows Start/Stop events only when their ids have this form (the
 * interpreter's async calls use it: docs/profiler.md). Never all zero. */
void mantra_activity_path_id(uint64_t n, mantra_guid *out);
/* Starts an activity on the calling thread: a new id becomes current, the previous current one
 * becomes the related id (the parent, as the start event's RelatedActivityID in EventSource), and
 * both previous values go into *scope. *id (may be NULL) gets the new id. MANTRA_OK, MANTRA_EINVAL
 * (scope NULL) or MANTRA_ENOMEM. */
int mantra_activity_start(mantra_activity_scope *scope, mantra_guid *id);
/* Ends it: restores the ids scope saved. Stops nest: stop in the reverse order of the starts. */
void mantra_activity_stop(const mantra_activity_scope *scope);

MANTRA_END_DECLS

#endif /* MANTRA_ACTIVITY_H */
