/* mantra/clock.h for every host: the clock this process uses, what the machine offers, and what
 * one read of each clock costs here, timed against CLOCK_MONOTONIC. */
#include <string.h>

#include "mantra/clock.h"
#include "platform-internal.h"

#define CLOCK_READS 200000u

/* ns per read: mode 0 the monotonic clock, else the TSC read of that mode (platform-internal.h:
 * 2 or 4 ordered, 3 plain). */
static double time_reads(int mode) {
    volatile uint64_t sink = 0;
    uint64_t t0 = mantra_pal_now_ns();
    for (uint32_t i = 0; i < CLOCK_READS; i++) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
        if (mode != 0) {
            sink += mantra__pal_rdtsc(mode);
            continue;
        }
#else
        (void)mode;
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
    out->tsc_ordered_read = "";
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    /* the clock's own choice: RDTSCP where the CPU has it (a guest may not), else LFENCE then RDTSC */
    int ordered = mantra_pal_tsc_ordered_mode();
    if (out->invariant_tsc)
        out->tsc_ordered_read = ordered == 2 ? "rdtscp" : "lfence+rdtsc";
#endif
    if (measure) {
        out->ns_monotonic = time_reads(0);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
        if (out->invariant_tsc) {
            out->ns_tsc = time_reads(ordered);
            out->ns_tsc_unordered = time_reads(3);
        }
#endif
    }
    return MANTRA_OK;
}
