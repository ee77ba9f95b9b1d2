/* mantra/clock.h - the trace clock of this process: which one stamps its events, what the machine
 * offers, and what one read of each costs here (docs/sessions.md, "The clock"). `mantra stats
 * --clock` prints it. */
#ifndef MANTRA_CLOCK_H
#define MANTRA_CLOCK_H

#include "mantra/status.h"

MANTRA_BEGIN_DECLS

typedef struct mantra_clock_info {
    /* the clock this process stamps events with: "monotonic" (CLOCK_MONOTONIC), "tsc" (the
     * invariant TSC, ordered reads) or "tsc-unordered"; chosen at its first use from MANTRA_CLOCK
     * and the machine */
    const char *clock;
    char kernel_clocksource[32]; /* the kernel's current clocksource ("" where it does not say) */
    int invariant_tsc;           /* 1: the CPU flags constant_tsc and nonstop_tsc (x86-64 Linux) */
    /* the ordered TSC read this CPU gives the clock: "rdtscp", "lfence+rdtsc" (a CPU or guest
     * without RDTSCP), "" (no invariant TSC) */
    const char *tsc_ordered_read;
    /* what one read costs here, in ns, measured by mantra_clock_describe (0: not measured, or the
     * host has no such read): clock_gettime(CLOCK_MONOTONIC), the ordered TSC read
     * (tsc_ordered_read), RDTSC */
    double ns_monotonic, ns_tsc, ns_tsc_unordered;
} mantra_clock_info;

/* Fills *out; with measure != 0 it also times each read (about 10 ms). MANTRA_OK or MANTRA_EINVAL
 * (out NULL). */
int mantra_clock_describe(mantra_clock_info *out, int measure);

MANTRA_END_DECLS

#endif /* MANTRA_CLOCK_H */
