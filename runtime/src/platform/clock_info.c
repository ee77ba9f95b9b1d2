/* mantra/clock.h for every host: the clock this process uses, what the machine offers, and what
 * one read of each clock costs here, timed against CLOCK_MONOTONIC. */
#include <string.h>

#include "mantra/clock.h"
#include "platform-internal.h"

#define CLOCK_READS 200000u

/* ns per read: kind 0 the monotonic clock, 1 the ordered TSC read, 2 the plain one. */
static double time_reads(int kind) {
    volatile uint64_t sink = 0;
    uint64_t t0 = mantra_pal_now_ns();
    for (uint32_t i = 0; i < CLOCK_READS; i++) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
        if (kind != 0) {
            sink += mantra__pal_rdtsc(kind == 1 ? 2 : 3);
            continue;
        }
#else
        (void)kind;
#endif
        sink += mantra_pal_monotonic_ns();
    }
    (void)sink;
    return (double)(mantra_pal_now_ns() - t0) / CLOCK_READS;
}

int mantra_clock_describe(mantra_clock_info *out, int measure) {
    if (!out)
        return MANTRA_EINVAL;
    memset(out, 0, sizeof *out);
    out->clock = mantra_pal_clock_name();
    mantra_pal_kernel_clocksource(out->kernel_clocksource, sizeof out->kernel_clocksource);
    out->invariant_tsc = mantra_pal_tsc_invariant();
    if (measure) {
        out->ns_monotonic = time_reads(0);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
        if (out->invariant_tsc) {
            out->ns_tsc = time_reads(1);
            out->ns_tsc_unordered = time_reads(2);
        }
#endif
    }
    return MANTRA_OK;
}
