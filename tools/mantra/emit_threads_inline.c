/* emit_threads.h for hosts without threads (WASI): the one writer runs on the calling thread and,
 * through its tick, pumps the job queue every pump_s seconds while it writes, as the host loop of
 * a threadless runtime does. */
#include <stddef.h>

#include "emit_threads.h"

static void (*g_pump)(void);
static double g_pump_s, g_last;

uint32_t emit_max_threads(void) { return 1u; }

static void tick(void) {
    double t = emit_now();
    if (t - g_last >= g_pump_s) {
        g_pump();
        g_last = t;
    }
}

uint32_t emit_threads_run(emit_thread *ws, uint32_t n, void (*write)(emit_thread *), void (*pump)(void),
                          double pump_s) {
    if (n != 1)
        return 0;
    g_pump = pump;
    g_pump_s = pump_s;
    g_last = emit_now();
    ws[0].tick = pump != NULL ? tick : NULL;
    write(&ws[0]);
    return 1;
}
