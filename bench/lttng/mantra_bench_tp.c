/* mantra_bench_tp.c - the probes of mantra_bench_tp.h, linked statically into
 * session_write_lttng (bench/lttng/build.sh): TRACEPOINT_CREATE_PROBES builds the probe code,
 * TRACEPOINT_DEFINE the tracepoint definitions and their registration constructor. */
#define TRACEPOINT_CREATE_PROBES
#define TRACEPOINT_DEFINE
#include "mantra_bench_tp.h"
