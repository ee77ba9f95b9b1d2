/* mantra stats --clock: the trace clock a process with this environment uses, what the machine
 * offers, what each read costs here, and what MANTRA_CLOCK would change (docs/sessions.md, "The
 * clock"; docs/cli.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mantra/clock.h"
#include "tool.h"

static const char *yes_no(int v) { return v ? "yes" : "no"; }

/* What MANTRA_CLOCK could change here, one sentence per choice (NULL when nothing). */
static void advice(const mantra_clock_info *c, const char **lines, int *n) {
    static char gain[512], unordered[512];
    int tsc_kernel = strcmp(c->kernel_clocksource, "tsc") == 0;
    *n = 0;
    if (c->invariant_tsc && strcmp(c->clock, "monotonic") == 0 && tsc_kernel) {
        snprintf(gain, sizeof gain,
                 "MANTRA_CLOCK unset (or auto, or tsc) would stamp events with the TSC, as the kernel keeps "
                 "time with it: %.1f ns less per read here than clock_gettime.",
                 c->ns_monotonic - c->ns_tsc);
        lines[(*n)++] = gain;
    } else if (c->invariant_tsc && strcmp(c->clock, "monotonic") == 0) {
        snprintf(gain, sizeof gain,
                 "MANTRA_CLOCK=tsc would stamp events with the TSC (ordered reads) instead of clock_gettime "
                 "(%s): %.1f ns less per read here. It risks events of threads on CPUs whose TSCs the host "
                 "did not synchronise coming out in the wrong order, and a jump across a live migration: the "
                 "kernel does not watch a TSC it does not use.",
                 c->kernel_clocksource[0] ? c->kernel_clocksource : "unknown clocksource",
                 c->ns_monotonic - c->ns_tsc);
        lines[(*n)++] = gain;
    }
    if (c->invariant_tsc && strcmp(c->clock, "tsc-unordered") != 0) {
        int mono = strcmp(c->clock, "monotonic") == 0;
        snprintf(unordered, sizeof unordered,
                 "MANTRA_CLOCK=tsc-unordered would read the TSC without ordering the read: %.1f ns less per read "
                 "than %s. It risks an event stamped tens of ns before an event another thread wrote earlier "
                 "(readers that sort by time show them swapped).",
                 (mono ? c->ns_monotonic : c->ns_tsc) - c->ns_tsc_unordered,
                 mono ? "clock_gettime" : "the ordered read");
        lines[(*n)++] = unordered;
    }
    if (strcmp(c->clock, "tsc-unordered") == 0)
        lines[(*n)++] = "This process reads the TSC without ordering the read (MANTRA_CLOCK=tsc-unordered): events of "
                        "different threads less than tens of ns apart may be stamped out of their causal order.";
}

int stats_clock(int json) {
    mantra_clock_info c;
    if (mantra_clock_describe(&c, 1) != MANTRA_OK) {
        fprintf(stderr, "mantra stats: cannot describe the clock\n");
        return TOOL_BAD_INPUT;
    }
    const char *env = getenv("MANTRA_CLOCK");
    if (env && !env[0])
        env = NULL; /* empty: unset, as the library reads it */
    const char *lines[3];
    int n;
    advice(&c, lines, &n);
    if (json) {
        printf("{\"clock\":");
        json_string(stdout, c.clock, strlen(c.clock));
        printf(",\"mantra_clock\":");
        if (env)
            json_string(stdout, env, strlen(env));
        else
            printf("null");
        printf(",\"kernel_clocksource\":");
        json_string(stdout, c.kernel_clocksource, strlen(c.kernel_clocksource));
        printf(",\"invariant_tsc\":%s,\"ns_per_read\":{\"monotonic\":%.2f,\"tsc\":%.2f,\"tsc_unordered\":%.2f}",
               c.invariant_tsc ? "true" : "false", c.ns_monotonic, c.ns_tsc, c.ns_tsc_unordered);
        printf(",\"tsc_ordered_read\":");
        json_string(stdout, c.tsc_ordered_read, strlen(c.tsc_ordered_read));
        printf(",\"advice\":[");
        for (int i = 0; i < n; i++) {
            if (i)
                printf(",");
            json_string(stdout, lines[i], strlen(lines[i]));
        }
        printf("]}\n");
        return TOOL_OK;
    }
    printf("clock: %s (this environment's processes stamp their events with it; MANTRA_CLOCK=%s)\n", c.clock,
           env ? env : "unset");
    printf("kernel clocksource: %s\n", c.kernel_clocksource[0] ? c.kernel_clocksource : "unknown");
    printf("invariant TSC (constant_tsc, nonstop_tsc): %s\n", yes_no(c.invariant_tsc));
    if (c.ns_tsc > 0)
        printf("one read here: clock_gettime %.1f ns, TSC %.1f ns (ordered: %s), TSC unordered %.1f ns\n",
               c.ns_monotonic, c.ns_tsc, c.tsc_ordered_read, c.ns_tsc_unordered);
    else
        printf("one read here: clock_gettime %.1f ns\n", c.ns_monotonic);
    for (int i = 0; i < n; i++)
        printf("%s\n", lines[i]);
    return TOOL_OK;
}
