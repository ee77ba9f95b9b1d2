/* bench_time.h - what the benchmark programs time with: the monotonic clock in seconds, a qsort
 * comparator of doubles (medians), and an output sink for interpreter threads that discards. */
#ifndef MANTRA_BENCH_TIME_H
#define MANTRA_BENCH_TIME_H

#include <stddef.h>
#include <time.h>

static inline double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static inline void bench_discard(void *ctx, const char *data, size_t size) {
    (void)ctx;
    (void)data;
    (void)size;
}

#endif
