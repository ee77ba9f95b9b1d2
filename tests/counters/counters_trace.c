/* counters_trace OUT.nettrace - the interop test's program: a file session with
 * `Mantra.Runtime:0:5:EventCounterIntervalSec=1,Mantra-Demo:0x1:5` for about 2.6 s, while it writes
 * 1000 Mantra-Demo Tick events at once and 2500 more after 1.3 s. Prints {"written":3500} on success.
 * check_counters.py reads the trace through TraceEvent and `mantra dump`. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <time.h>

#include "dotnet_registry.h"
#include "dotnet_writers.h"
#include "mantra/counters.h"
#include "mantra/pump.h"
#include "mantra/session.h"

static double now_sec(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sleeps (pumping in the threadless build) until t seconds after start. */
static void until(double start, double t) {
    struct timespec nap = {0, 5000000};
    while (now_sec() - start < t) {
        mantra_pump();
        nanosleep(&nap, NULL);
    }
}

static int write_ticks(uint64_t n) {
    for (uint64_t i = 0; i < n; i++)
        if (mantra_Demo_Tick_write(1, i) != MANTRA_WRITE_OK)
            return 1;
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: counters_trace OUT.nettrace\n");
        return 2;
    }
    if (mantra_dotnet_register() != 0 || mantra_counters_init() != 0) {
        fprintf(stderr, "counters_trace: init failed: %s\n", mantra_counters_last_error());
        return 1;
    }
    mantra_session_config c;
    mantra_session_config_init(&c);
    c.providers = "Mantra.Runtime:0:5:EventCounterIntervalSec=1,Mantra-Demo:0x1:5";
    c.path = argv[1];
    mantra_session_id id;
    if (mantra_session_start(&id, &c) != 0) {
        fprintf(stderr, "counters_trace: %s\n", mantra_session_last_error());
        return 1;
    }
    double start = now_sec();
    int bad = write_ticks(1000);
    until(start, 1.3);
    bad |= write_ticks(2500);
    until(start, 2.6);
    if (mantra_session_stop(id) != 0 || bad) {
        fprintf(stderr, "counters_trace: %s\n", bad ? "a Tick write failed" : mantra_session_last_error());
        return 1;
    }
    mantra_counters_shutdown();
    printf("{\"written\":3500}\n");
    return 0;
}
