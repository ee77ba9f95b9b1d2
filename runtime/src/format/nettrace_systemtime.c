/* nettrace_systemtime.c - mantra_nettrace_systemtime(): a UTC time in milliseconds since 1970 as
 * the 8 SYSTEMTIME fields that open the Trace object (Year, Month, DayOfWeek, Day, Hour, Minute,
 * Second, Milliseconds), for years 1601..30827 (dotnet/runtime, src/native/eventpipe/ep-file.c,
 * file_fast_serialize_func; microsoft/perfview, src/TraceEvent/EventPipe/EventPipeEventSource.cs,
 * the Trace object reader). */
#include "mantra/nettrace_writer.h"

int mantra_nettrace_systemtime(int64_t unix_ms, uint16_t out[8]) {
    /* Years 1601..30827 are what SYSTEMTIME / .NET DateTime accept. */
    const int64_t min_ms = INT64_C(-11644473600000);  /* 1601-01-01 */
    const int64_t max_ms = INT64_C(910692730085477); /* 30828-09-14 (FILETIME max), well within */
    if (!out || unix_ms < min_ms || unix_ms > max_ms)
        return MANTRA_EINVAL;
    int64_t days = unix_ms / 86400000, ms = unix_ms % 86400000;
    if (ms < 0) {
        ms += 86400000;
        days--;
    }
    /* civil_from_days (H. Hinnant's algorithm, proleptic Gregorian). */
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = yoe + era * 400;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int64_t d = doy - (153 * mp + 2) / 5 + 1;
    int64_t m = mp < 10 ? mp + 3 : mp - 9;
    if (m <= 2)
        y++;
    if (y > 30827)
        return MANTRA_EINVAL;
    int64_t dow = (days % 7 + 7 + 4) % 7; /* 1970-01-01 was a Thursday (4); Sunday = 0 */
    out[0] = (uint16_t)y;
    out[1] = (uint16_t)m;
    out[2] = (uint16_t)dow;
    out[3] = (uint16_t)d;
    out[4] = (uint16_t)(ms / 3600000);
    out[5] = (uint16_t)(ms / 60000 % 60);
    out[6] = (uint16_t)(ms / 1000 % 60);
    out[7] = (uint16_t)(ms % 1000);
    return MANTRA_OK;
}
