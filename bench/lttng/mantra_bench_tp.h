/* mantra_bench_tp.h - the LTTng-UST tracepoint provider of bench/session_write's LTTng anchor:
 * provider mantra_bench, event tick with the two integers of mantra_Demo_Tick_write (a uint32
 * thread number and a uint64 index). Compiled only by bench/lttng/build.sh (never by CMake); see
 * bench/session_lttng.sh. Written for this benchmark with the LTTng-UST 2.13 API (its
 * TRACEPOINT_EVENT / ctf_integer spelling, which 2.13 keeps). */
#undef TRACEPOINT_PROVIDER
#define TRACEPOINT_PROVIDER mantra_bench

#undef TRACEPOINT_INCLUDE
#define TRACEPOINT_INCLUDE "mantra_bench_tp.h"

#if !defined(MANTRA_BENCH_TP_H) || defined(TRACEPOINT_HEADER_MULTI_READ)
#define MANTRA_BENCH_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

TRACEPOINT_EVENT(
    mantra_bench, tick,
    TP_ARGS(uint32_t, thread_arg, uint64_t, index_arg),
    TP_FIELDS(
        ctf_integer(uint32_t, thread, thread_arg)
        ctf_integer(uint64_t, index, index_arg)))

#endif /* MANTRA_BENCH_TP_H */

#include <lttng/tracepoint-event.h>
