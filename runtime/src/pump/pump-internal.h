/* pump-internal.h - test hooks of the job queue. Private. */
#ifndef MANTRA_PUMP_INTERNAL_H
#define MANTRA_PUMP_INTERNAL_H

/* The next n calls of mantra_queue_job fail with MANTRA_ENOMEM (failure-path tests). */
void mantra__jobs_fail_next(int n);

#endif /* MANTRA_PUMP_INTERNAL_H */
