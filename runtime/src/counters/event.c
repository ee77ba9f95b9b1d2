/* The Mantra.Runtime provider and its EventCounters event, as .NET's EventSource counters write it
 * (dotnet/runtime, src/libraries/System.Private.CoreLib/src/System/Diagnostics/Tracing/):
 * EventSource.Write("EventCounters", Level LogAlways, keywords 0) of an object whose one property
 * `Payload` is a CounterPayload (PollingCounter.cs) or an IncrementingCounterPayload
 * (IncrementingPollingCounter.cs). TraceLogging describes it as a top-level struct with an empty
 * name holding the struct `Payload` (the EventCounters metadata of the dotnet/diagnostics trace
 * fixture, ../shared/fixtures/nettrace/dotnet-diagnostics/trace.nettrace, reads exactly so), with
 * the properties in declaration order (CounterPayload.cs):
 *   Mean: Name, DisplayName (string), Mean, StandardDeviation (double), Count (int32), Min, Max
 *         (double), IntervalSec (float), Series, CounterType ("Mean"), Metadata, DisplayUnits (string)
 *   Sum:  Name, DisplayName, DisplayRateTimeScale (string), Increment (double), IntervalSec (float),
 *         Metadata, Series, CounterType ("Sum"), DisplayUnits (string)
 * Strings are UTF-16 with their NUL. Series is "Interval=<ms>" (the session's interval), which
 * dotnet-counters compares with its refresh interval (dotnet/diagnostics,
 * src/Microsoft.Diagnostics.Monitoring.EventPipe/Counters/CounterFilter.cs). The two shapes get
 * event ids 1 and 2, so that a reader keying parsers by event id never mixes them (.NET gives each
 * TraceLogging shape its own id; the fixture's mean shape has id 2).
 *
 * The provider's GUID is EventSource's name hash of "Mantra.Runtime" (dotnet/runtime,
 * EventSource.cs, GetGuid / GenerateGuidFromName; the generator's resolve.py eventsource_guid gives
 * the same: ea81d72b-a5c5-53b0-5773-3b4490846f92). EventPipe enables providers by name, and
 * TraceEvent derives a V5 trace's provider GUID from the name the same way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters-internal.h"
#include "mantra/metadata.h"
#include "mantra/types.h"

enum { EV_MEAN = 0, EV_SUM = 1 };

static uint8_t g_meta[2][1024];
static mantra_event_desc g_events[2] = {
    {"EventCounters", "EventCounters_Mean", 0, 1, 0, MANTRA_LEVEL_LOG_ALWAYS, 0, 0, 0, 1, g_meta[0], 0},
    {"EventCounters", "EventCounters_Sum", 0, 2, 0, MANTRA_LEVEL_LOG_ALWAYS, 0, 0, 0, 1, g_meta[1], 0},
};
static mantra_event_state g_states[2];
static const mantra_provider_desc g_provider = {
    MANTRA_COUNTERS_PROVIDER,
    "MantraRuntime",
    {0xea81d72bu, 0xa5c5u, 0x53b0u, {0x57, 0x73, 0x3b, 0x44, 0x90, 0x84, 0x6f, 0x92}},
    g_events,
    g_states,
    2,
};

typedef struct field {
    const char *name;
    uint32_t type;
} field;

static const field MEAN_FIELDS[] = {
    {"Name", MANTRA_TYPE_STRING},     {"DisplayName", MANTRA_TYPE_STRING},    {"Mean", MANTRA_TYPE_DOUBLE},
    {"StandardDeviation", MANTRA_TYPE_DOUBLE}, {"Count", MANTRA_TYPE_INT32},  {"Min", MANTRA_TYPE_DOUBLE},
    {"Max", MANTRA_TYPE_DOUBLE},      {"IntervalSec", MANTRA_TYPE_SINGLE},    {"Series", MANTRA_TYPE_STRING},
    {"CounterType", MANTRA_TYPE_STRING}, {"Metadata", MANTRA_TYPE_STRING},    {"DisplayUnits", MANTRA_TYPE_STRING},
};
static const field SUM_FIELDS[] = {
    {"Name", MANTRA_TYPE_STRING},        {"DisplayName", MANTRA_TYPE_STRING}, {"DisplayRateTimeScale", MANTRA_TYPE_STRING},
    {"Increment", MANTRA_TYPE_DOUBLE},   {"IntervalSec", MANTRA_TYPE_SINGLE}, {"Metadata", MANTRA_TYPE_STRING},
    {"Series", MANTRA_TYPE_STRING},      {"CounterType", MANTRA_TYPE_STRING}, {"DisplayUnits", MANTRA_TYPE_STRING},
};

static int build(mantra_metadata_builder *b, mantra_event_desc *d, const field *f, size_t n) {
    int rc = mantra_metadata_begin(b, d->id, d->name, d->keywords, d->version, d->level, d->opcode);
    if (!rc)
        rc = mantra_metadata_begin_struct(b, ""); /* the top-level object: no name */
    if (!rc)
        rc = mantra_metadata_begin_struct(b, "Payload");
    for (size_t i = 0; !rc && i < n; i++)
        rc = mantra_metadata_field(b, f[i].name, f[i].type);
    if (!rc)
        rc = mantra_metadata_end_struct(b);
    if (!rc)
        rc = mantra_metadata_end_struct(b);
    const uint8_t *blob;
    size_t size;
    if (!rc)
        rc = mantra_metadata_finish(b, &blob, &size);
    if (!rc && size > sizeof g_meta[0])
        rc = MANTRA_ERANGE;
    if (!rc) {
        memcpy((void *)d->metadata, blob, size);
        d->metadata_size = (uint32_t)size;
    }
    return rc;
}

int ct_provider_init(void) {
    static int done; /* under mantra_counters_init's lock */
    if (done)
        return MANTRA_OK;
    mantra_metadata_builder *b;
    int rc = mantra_metadata_builder_new(&b);
    if (rc)
        return ct_set_error("out of memory"), rc;
    rc = build(b, &g_events[EV_MEAN], MEAN_FIELDS, sizeof MEAN_FIELDS / sizeof MEAN_FIELDS[0]);
    if (!rc)
        rc = build(b, &g_events[EV_SUM], SUM_FIELDS, sizeof SUM_FIELDS / sizeof SUM_FIELDS[0]);
    if (rc)
        ct_set_error(mantra_metadata_last_error(b));
    mantra_metadata_builder_free(b);
    if (!rc && (rc = mantra_register_provider(&g_provider)) != 0)
        ct_set_error("the provider registry is full");
    if (!rc)
        done = 1;
    return rc;
}

int ct_interval_of(const mantra_provider_spec *specs, size_t count, uint32_t *interval_ms) {
    if (!mantra_provider_spec_enables(specs, count, MANTRA_COUNTERS_PROVIDER, &g_events[EV_MEAN]))
        return 0;
    for (size_t i = 0; i < count; i++) {
        if (strcmp(specs[i].name, MANTRA_COUNTERS_PROVIDER) != 0)
            continue;
        /* EventCounterIntervalSec: a float, as CounterGroup.cs reads it (float.TryParse) */
        char v[64], *end;
        if (mantra_provider_spec_arg(&specs[i], "EventCounterIntervalSec", v, sizeof v) != 1 || !v[0])
            return 0;
        double sec = strtod(v, &end);
        if (*end != 0 || !(sec > 0) || sec > 86400.0)
            return 0;
        double ms = sec * 1000.0;
        *interval_ms = ms < MANTRA_COUNTERS_MIN_INTERVAL_MS ? MANTRA_COUNTERS_MIN_INTERVAL_MS : (uint32_t)ms;
        return 1;
    }
    return 0;
}

int ct_write_counter(const ct_snapshot *s, double value, float interval_sec, uint32_t interval_ms) {
    char series[32];
    snprintf(series, sizeof series, "Interval=%u", interval_ms);
    const mantra_data STR_EMPTY = {"", 0, MANTRA_DATA_UTF8_AS_UTF16Z};
#define STR(p) ((mantra_data){(p), 0, MANTRA_DATA_UTF8_AS_UTF16Z})
#define NUM(p) ((mantra_data){(p), sizeof *(p), MANTRA_DATA_BYTES})
    int rc;
    if (s->kind == MANTRA_COUNTER_MEAN) {
        double sd = 0.0;
        int32_t count = 1; /* one reading per interval, as PollingCounter.cs */
        mantra_data d[] = {STR(s->name), STR(s->display), NUM(&value), NUM(&sd), NUM(&count), NUM(&value),
                           NUM(&value), NUM(&interval_sec), STR(series), STR("Mean"), STR_EMPTY, STR(s->units)};
        rc = mantra_event_write(&g_events[EV_MEAN], &g_states[EV_MEAN], d, sizeof d / sizeof d[0]);
    } else {
        /* DisplayRateTimeScale: TimeSpan.ToString("c") of one second */
        mantra_data d[] = {STR(s->name), STR(s->display), STR("00:00:01"), NUM(&value), NUM(&interval_sec),
                           STR_EMPTY, STR(series), STR("Sum"), STR(s->units)};
        rc = mantra_event_write(&g_events[EV_SUM], &g_states[EV_SUM], d, sizeof d / sizeof d[0]);
    }
#undef STR
#undef NUM
    atomic_fetch_add_explicit(rc == MANTRA_WRITE_OK ? &ct_self_written : &ct_self_dropped, 1, memory_order_relaxed);
    return rc;
}
