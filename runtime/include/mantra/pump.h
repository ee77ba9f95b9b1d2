/* mantra/pump.h - the job queue that replaces threads in the threadless build, as EventPipe's
 * ep_rt_queue_job under PERFTRACING_DISABLE_THREADS (dotnet/runtime, src/native/eventpipe/ep-rt.h;
 * ep-session.c, streaming_loop_tick).
 *
 * Built with -DMANTRA_THREADLESS=ON, libmantra starts no thread: each session's streaming work is
 * a job on this queue, and the host runs the queue from its event loop with mantra_pump(). A job
 * returns MANTRA_JOB_AGAIN to run on the next pump or MANTRA_JOB_DONE when it has finished (and
 * released what it held). mantra_shutdown() (mantra/session.h) runs the queued jobs once more so
 * that every trace ends with its end-of-stream tag. The queue exists in the threaded build too
 * (nothing of libmantra queues jobs there), so a host can use one pump for both builds.
 *
 * The queue is guarded by a lock; jobs run on the pumping thread, one at a time, in the order they
 * were queued; a job queued while the pump runs waits for the next pump. */
#ifndef MANTRA_PUMP_H
#define MANTRA_PUMP_H

#include <stddef.h>

#include "mantra/status.h"

MANTRA_BEGIN_DECLS

#define MANTRA_JOB_AGAIN 0
#define MANTRA_JOB_DONE 1
typedef int (*mantra_job_fn)(void *data);

/* Queues fn(data). MANTRA_OK, or a MANTRA_E* code (mantra/status.h): MANTRA_EINVAL for a NULL fn,
 * MANTRA_ENOMEM when it cannot be queued (the caller keeps ownership of data and must release it). */
int mantra_queue_job(mantra_job_fn fn, void *data);
/* Runs every job queued before the call once; returns the number of jobs still queued. */
size_t mantra_pump(void);
/* Jobs currently queued. */
size_t mantra_jobs_pending(void);
/* 1 in the threadless build, else 0. */
int mantra_threadless(void);

MANTRA_END_DECLS

#endif /* MANTRA_PUMP_H */
