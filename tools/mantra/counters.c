/* mantra counters (-p PID | -n NAME | --diagnostic-port ADDRESS) [--counters LIST]
 * [--refresh-interval S] [--duration T] [--format table|csv|json] [-o FILE] - live EventCounters
 * of another process, as dotnet-counters shows them (docs/cli.md; DESIGN.md "CLI contracts").
 *
 * The session is the one dotnet-counters asks for (../shared/reference/diagnostics-ipc.md,
 * "dotnet-counters monitor|collect -p PID": CollectTracing2 without rundown, each counter provider
 * with keywords 0, level 4 and EventCounterIntervalSec=<refresh>); each `EventCounters` event's
 * Payload (Name, DisplayName, DisplayUnits, CounterType Mean or Sum, Mean or Increment, Series
 * Interval=<ms>) is decoded from the live stream by mantra's reader. Values of other intervals
 * (another session's) are left out, as dotnet-counters does (CounterFilter.IsIncluded). The Meters
 * of the same names come through System.Diagnostics.Metrics with the shared session (SessionId
 * SHARED, as dotnet-counters asks on .NET 8 and later). */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "diag_target.h"
#include "mantra/decode.h"
#include "mantra/reader.h"
#include "mantra/visit.h"
#include "tool.h"

static const char counters_usage[] =
    "Usage: mantra counters (-p PID | -n NAME | --diagnostic-port ADDRESS) [--counters LIST]\n"
    "                       [--refresh-interval S] [--duration T] [--format table|csv|json] [-o FILE]\n"
    "\n"
    "Shows the counters of a running process that serves the diagnostics IPC protocol, decoded from\n"
    "the live session, until Ctrl-C (SIGINT), --duration or the process's exit: the EventCounters of\n"
    "the named providers (a .NET runtime's System.Runtime, a process that embeds mantra's\n"
    "Mantra.Runtime, any EventSource with counters) and the instruments of the Meters of the same\n"
    "names (System.Diagnostics.Metrics, as dotnet-counters asks for them: counters as their rate over\n"
    "the interval, up-down counters and gauges as their value, histograms as their quantiles with a\n"
    "Percentile=P tag).\n"
    "\n"
    "  -p, --process-id PID        the process (its socket file $TMPDIR/dotnet-diagnostic-PID-*-socket)\n"
    "  -n, --name NAME             the one process whose command's file name (or entry assembly) is NAME\n"
    "  --diagnostic-port ADDRESS[,listen|,connect]  as for mantra collect\n"
    "  --counters LIST             providers, each with an optional [counter,...] list (dotnet-counters'\n"
    "                              syntax): System.Runtime[cpu-usage,gc-heap-size],Mantra.Runtime\n"
    "                              (default System.Runtime); EventCounters\\NAME asks for no Meter NAME\n"
    "  --refresh-interval S        seconds between values (default 1; 0.01 to 86400)\n"
    "  --duration T                seconds (5, 2.5) or dd:hh:mm:ss\n"
    "  --format table|csv|json     table (default): on a terminal the latest values, redrawn; else one\n"
    "                              line per value. csv: Timestamp,Provider,Counter Name,Counter Type,\n"
    "                              Mean/Increment (dotnet-counters' columns). json: one object per line,\n"
    "                              {\"timestamp\", \"provider\", \"name\", \"display_name\", \"value\"}\n"
    "                              (display_name with the units, as dotnet-counters shows it; a Meter\n"
    "                              instrument's tags, when it has any, in \"tags\")\n"
    "  -o, --output FILE           write there instead of standard output\n"
    "\n"
    "A rate counter (CounterType Sum) shows its increase over the interval, a mean counter its value.\n"
    "Timestamps are UTC, from the trace's clock.\n"
    "\n"
    "Exit status: 0 success (also when the process exits), 1 no such process, no endpoint, the\n"
    "connection failed, the process refused the session, or the output could not be written; 2 usage\n"
    "error.\n";

#define MAX_PROVIDERS 16
#define MAX_NAMES 32
#define MAX_SHOWN 256
#define IO_TIMEOUT_MS 10000u

typedef struct wanted {
    char provider[128];
    char names[MAX_NAMES][64];
    size_t nnames;        /* 0: every counter of the provider */
    int event_counters_only; /* written EventCounters\NAME: no Meter of that name is asked for */
} wanted;

/* The fields of one EventCounters payload, or of one System.Diagnostics.Metrics value event. */
typedef struct sample {
    char name[64], display[160], units[32], type[16], series[64];
    double mean, increment;
    /* MetricsEventSource (dotnet/runtime, System.Diagnostics.DiagnosticSource,
     * MetricsEventSource.cs): the values are strings in the invariant culture */
    char session[64], meter[128], instrument[128], tags[256], rate[64], value[64], last[64], quantiles[256];
} sample;

typedef struct shown {
    char provider[128], name[192], display[200];
    double value;
} shown;

/* Where values go: the output, its format, and the table of a terminal. */
typedef struct sink {
    FILE *out;
    int fmt, tty; /* fmt: 0 table, 1 csv, 2 json */
    double refresh;
    shown rows[MAX_SHOWN];
    size_t nrows;
    uint64_t values;
} sink;

static int want_parse(const char *list, wanted *w, size_t *count) {
    *count = 0;
    const char *p = list;
    while (*p) {
        if (*count == MAX_PROVIDERS)
            return -1;
        wanted *e = &w[(*count)++];
        memset(e, 0, sizeof *e);
        if (strncmp(p, "EventCounters\\", 14) == 0) { /* dotnet-counters' prefix */
            e->event_counters_only = 1;
            p += 14;
        }
        size_t len = strcspn(p, ",[");
        if (len == 0 || len >= sizeof e->provider)
            return -1;
        memcpy(e->provider, p, len);
        p += len;
        if (*p == '[') {
            p++;
            for (;;) {
                size_t n = strcspn(p, ",]");
                if (n == 0 || n >= sizeof e->names[0] || e->nnames == MAX_NAMES || !p[n])
                    return -1;
                memcpy(e->names[e->nnames++], p, n);
                p += n;
                if (*p++ == ']')
                    break;
            }
        }
        if (*p == ',')
            p++;
        else if (*p)
            return -1;
    }
    return *count ? 0 : -1;
}

static void copy_str16(char *out, size_t size, const mantra_value *v) {
    mantra_str16 s = {v->data, v->count};
    (void)mantra_str16_to_utf8(s, out, size);
}

static int on_scalar(void *ctx, const mantra_value *v) {
    sample *s = ctx;
    if (v->type == MANTRA_TYPE_STRING) {
        char *dst = NULL;
        size_t size = 0;
        if (strcmp(v->name, "Name") == 0)
            dst = s->name, size = sizeof s->name;
        else if (strcmp(v->name, "DisplayName") == 0)
            dst = s->display, size = sizeof s->display;
        else if (strcmp(v->name, "DisplayUnits") == 0)
            dst = s->units, size = sizeof s->units;
        else if (strcmp(v->name, "CounterType") == 0)
            dst = s->type, size = sizeof s->type;
        else if (strcmp(v->name, "Series") == 0)
            dst = s->series, size = sizeof s->series;
        else if (strcmp(v->name, "sessionId") == 0)
            dst = s->session, size = sizeof s->session;
        else if (strcmp(v->name, "meterName") == 0)
            dst = s->meter, size = sizeof s->meter;
        else if (strcmp(v->name, "instrumentName") == 0)
            dst = s->instrument, size = sizeof s->instrument;
        else if (strcmp(v->name, "unit") == 0)
            dst = s->units, size = sizeof s->units;
        else if (strcmp(v->name, "tags") == 0)
            dst = s->tags, size = sizeof s->tags;
        else if (strcmp(v->name, "rate") == 0)
            dst = s->rate, size = sizeof s->rate;
        else if (strcmp(v->name, "value") == 0)
            dst = s->value, size = sizeof s->value;
        else if (strcmp(v->name, "lastValue") == 0)
            dst = s->last, size = sizeof s->last;
        else if (strcmp(v->name, "quantiles") == 0)
            dst = s->quantiles, size = sizeof s->quantiles;
        if (dst)
            copy_str16(dst, size, v);
    } else if (v->type == MANTRA_TYPE_DOUBLE || v->type == MANTRA_TYPE_SINGLE) {
        if (strcmp(v->name, "Mean") == 0)
            s->mean = v->d;
        else if (strcmp(v->name, "Increment") == 0)
            s->increment = v->d;
    }
    return 0;
}

/* Days since 1970-01-01 of a civil date (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? (unsigned)-3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* The UTC time of a trace timestamp, "YYYY-MM-DDTHH:MM:SS.mmmZ". */
static void utc_of(const mantra_trace_info *ti, int64_t ts, char *out, size_t size) {
    const int16_t *st = ti->sync_time_utc;
    double base = (double)days_from_civil(st[0], (unsigned)st[1], (unsigned)st[3]) * 86400.0 + st[4] * 3600.0 +
                  st[5] * 60.0 + st[6] + st[7] / 1000.0;
    double t = base + (ti->qpc_frequency > 0 ? (double)(ts - ti->sync_time_qpc) / (double)ti->qpc_frequency : 0);
    time_t whole = (time_t)floor(t);
    int ms = (int)((t - floor(t)) * 1000.0);
    struct tm tm;
    gmtime_r(&whole, &tm);
    char head[32];
    strftime(head, sizeof head, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, size, "%s.%03dZ", head, ms);
}

static void redraw(FILE *out, const shown *rows, size_t n, double refresh) {
    fputs("\033[H\033[J", out);
    fprintf(out, "Press Ctrl-C to quit; refresh every %g s\n\n", refresh);
    const char *last = "";
    for (size_t i = 0; i < n; i++) {
        if (strcmp(rows[i].provider, last) != 0)
            fprintf(out, "[%s]\n", last = rows[i].provider);
        fprintf(out, "    %-60s %16.6g\n", rows[i].display, rows[i].value);
    }
    fflush(out);
}

/* The name dotnet-counters shows: "NAME (UNITS)", a rate "NAME (UNITS / R sec)" ("Count" without
 * units), nothing in parentheses for a value without units. */
static void display_of(char *out, size_t size, const char *name, const char *units, int rate, double refresh) {
    int n; /* a name too long for out is cut */
    if (rate)
        n = snprintf(out, size, "%s (%s / %g sec)", name, units[0] ? units : "Count", refresh);
    else if (units[0])
        n = snprintf(out, size, "%s (%s)", name, units);
    else
        n = snprintf(out, size, "%s", name);
    if (n < 0)
        out[0] = 0;
}

/* One value out: a JSON line, a CSV row, a line, or the terminal's table redrawn. */
static void show(sink *k, const char *when, const char *provider, const char *name, const char *display,
                 const char *tags, int rate, double value) {
    k->values++;
    FILE *out = k->out;
    if (k->fmt == 2) {
        fprintf(out, "{\"timestamp\":\"%s\",\"provider\":", when);
        json_string(out, provider, strlen(provider));
        fputs(",\"name\":", out);
        json_string(out, name, strlen(name));
        fputs(",\"display_name\":", out);
        json_string(out, display, strlen(display));
        if (tags[0]) {
            fputs(",\"tags\":", out);
            json_string(out, tags, strlen(tags));
        }
        fprintf(out, ",\"value\":%.17g}\n", value);
    } else if (k->fmt == 1) { /* the tags' commas would split the column: ';' instead */
        char t[320];
        snprintf(t, sizeof t, "%s", tags);
        for (char *c = t; *c; c++)
            if (*c == ',')
                *c = ';';
        fprintf(out, "%s,%s,%s%s%s%s,%s,%.17g\n", when, provider, display, t[0] ? " [" : "", t, t[0] ? "]" : "",
                rate ? "Rate" : "Metric", value);
    } else if (!k->tty) {
        fprintf(out, "%s  %-24s %-48s %16.6g%s%s\n", when, provider, display, value, tags[0] ? "  " : "", tags);
    } else {
        char key[192];
        snprintf(key, sizeof key, "%s%s%s", name, tags[0] ? "|" : "", tags);
        size_t i = 0;
        while (i < k->nrows && !(strcmp(k->rows[i].provider, provider) == 0 && strcmp(k->rows[i].name, key) == 0))
            i++;
        if (i == k->nrows && k->nrows < MAX_SHOWN) {
            snprintf(k->rows[i].provider, sizeof k->rows[i].provider, "%s", provider);
            snprintf(k->rows[i].name, sizeof k->rows[i].name, "%s", key);
            k->nrows++;
        }
        if (i < k->nrows) {
            snprintf(k->rows[i].display, sizeof k->rows[i].display, "%s%s%s", display, tags[0] ? " " : "", tags);
            k->rows[i].value = value;
            redraw(out, k->rows, k->nrows, k->refresh);
        }
    }
    fflush(out);
}

/* A number the MetricsEventSource wrote as text; 0 when it is not one (an empty rate: no measurement). */
static int metric_number(const char *text, double *v) {
    char *end;
    *v = strtod(text, &end);
    return end != text && !*end;
}

/* The values of one System.Diagnostics.Metrics event of this client's shared session: counters
 * (their rate over the interval), up-down counters (their value), gauges (the last value),
 * histograms (each quantile, tagged Percentile=P as dotnet-counters shows them). */
static void show_metric(sink *k, const char *when, const char *event, const sample *m, const wanted *want,
                        size_t nwant) {
    const wanted *w = NULL;
    for (size_t i = 0; i < nwant && !w; i++)
        if (strcmp(want[i].provider, m->meter) == 0 && !want[i].event_counters_only)
            w = &want[i];
    int listed = w && w->nnames == 0;
    for (size_t i = 0; w && i < w->nnames && !listed; i++)
        listed = strcmp(w->names[i], m->instrument) == 0;
    if (!listed || strcmp(m->session, "SHARED") != 0)
        return;
    char display[200], rate_display[200];
    display_of(display, sizeof display, m->instrument, m->units, 0, k->refresh);
    display_of(rate_display, sizeof rate_display, m->instrument, m->units, 1, k->refresh);
    double v;
    if (strcmp(event, "CounterRateValuePublished") == 0 && metric_number(m->rate, &v))
        show(k, when, m->meter, m->instrument, rate_display, m->tags, 1, v);
    else if (strcmp(event, "UpDownCounterRateValuePublished") == 0 && metric_number(m->value, &v))
        show(k, when, m->meter, m->instrument, display, m->tags, 0, v);
    else if (strcmp(event, "GaugeValuePublished") == 0 && metric_number(m->last, &v))
        show(k, when, m->meter, m->instrument, display, m->tags, 0, v);
    else if (strcmp(event, "HistogramValuePublished") == 0) {
        /* "0.5=1.5;0.95=3;0.99=4" */
        const char *p = m->quantiles;
        while (*p) {
            size_t len = strcspn(p, ";");
            char item[64], tags[320];
            snprintf(item, sizeof item, "%.*s", (int)(len < sizeof item ? len : sizeof item - 1), p);
            char *eq = strchr(item, '=');
            double q;
            if (eq) {
                *eq = 0;
                if (metric_number(item, &q) && metric_number(eq + 1, &v)) {
                    snprintf(tags, sizeof tags, "%s%sPercentile=%g", m->tags, m->tags[0] ? "," : "", q * 100.0);
                    show(k, when, m->meter, m->instrument, display, tags, 0, v);
                }
            }
            p += len;
            if (*p == ';')
                p++;
        }
    }
}

int cmd_counters(int argc, char **argv) {
    const char *pid_arg = NULL, *name = NULL, *port = NULL, *list = "System.Runtime", *format = "table";
    const char *output = NULL, *refresh_arg = "1", *duration_arg = NULL;
    const tool_option opts[] = {{"--process-id", "-p", &pid_arg},   {"--name", "-n", &name},
                                {"--diagnostic-port", NULL, &port},  {"--counters", NULL, &list},
                                {"--refresh-interval", NULL, &refresh_arg}, {"--format", NULL, &format},
                                {"--output", "-o", &output},          {"--duration", NULL, &duration_arg},
                                {NULL, NULL, NULL}};
    int status = tool_options("counters", counters_usage, opts, argc, argv);
    if (status != TOOL_OK)
        return status < 0 ? TOOL_OK : status;
    double duration = 0;
    if (duration_arg && (duration = tool_parse_duration(duration_arg)) < 0)
        return tool_usage_error("counters", "--duration '%s': want seconds (5, 2.5) or dd:hh:mm:ss", duration_arg);
    char *end;
    double refresh = strtod(refresh_arg, &end);
    if (end == refresh_arg || *end || !(refresh >= 0.01 && refresh <= 86400) || strlen(refresh_arg) > 32)
        return tool_usage_error("counters", "--refresh-interval '%s': want 0.01 to 86400 seconds", refresh_arg);
    int fmt = strcmp(format, "table") == 0 ? 0 : strcmp(format, "csv") == 0 ? 1 : strcmp(format, "json") == 0 ? 2 : -1;
    if (fmt < 0)
        return tool_usage_error("counters", "--format '%s': want table, csv or json", format);
    static wanted want[MAX_PROVIDERS];
    size_t nwant = 0;
    if (want_parse(list, want, &nwant) != 0)
        return tool_usage_error("counters", "--counters '%s': want PROVIDER[counter,...],... (at most 16 providers, "
                                            "32 counters each)", list);
    if ((pid_arg != NULL) + (name != NULL) + (port != NULL) != 1)
        return tool_usage_error("counters", "%s", "give exactly one of -p PID, -n NAME and --diagnostic-port ADDRESS");

    static mantra_provider_spec specs[MAX_PROVIDERS + 1];
    for (size_t i = 0; i < nwant; i++) {
        memset(&specs[i], 0, sizeof specs[i]);
        memcpy(specs[i].name, want[i].provider, strlen(want[i].provider) + 1); /* < 128 bytes (want_parse) */
        specs[i].level = 4;
        snprintf(specs[i].args, sizeof specs[i].args, "EventCounterIntervalSec=%s", refresh_arg);
    }
    /* the Meters of the same names: the provider dotnet-counters asks for (its SessionId SHARED,
     * MetricSourceConfiguration.cs; keyword 0x2 TimeSeriesValues) */
    size_t nspecs = nwant, nmeters = 0;
    for (size_t i = 0; i < nwant; i++)
        nmeters += !want[i].event_counters_only;
    if (nmeters) {
        mantra_provider_spec *m = &specs[nspecs++];
        memset(m, 0, sizeof *m);
        snprintf(m->name, sizeof m->name, "System.Diagnostics.Metrics");
        m->keywords = 0x2;
        m->level = 4;
        uint8_t id[16];
        FILE *rnd = fopen("/dev/urandom", "rb");
        if (!rnd || fread(id, 1, sizeof id, rnd) != sizeof id)
            memset(id, 0x5a, sizeof id);
        if (rnd)
            fclose(rnd);
        int len = snprintf(m->args, sizeof m->args, "SessionId=SHARED;Metrics=");
        for (size_t i = 0, n = 0; i < nwant && len > 0 && (size_t)len < sizeof m->args; i++)
            if (!want[i].event_counters_only)
                len += snprintf(m->args + len, sizeof m->args - (size_t)len, "%s%s", n++ ? "," : "", want[i].provider);
        if (len > 0 && (size_t)len < sizeof m->args)
            len += snprintf(m->args + len, sizeof m->args - (size_t)len,
                            ";RefreshInterval=%s;MaxTimeSeries=1000;MaxHistograms=10;ClientId=%02x%02x%02x%02x-%02x%02x-"
                            "%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                            refresh_arg, id[0], id[1], id[2], id[3], id[4], id[5], id[6], id[7], id[8], id[9], id[10],
                            id[11], id[12], id[13], id[14], id[15]);
        if (len < 0 || (size_t)len >= sizeof m->args)
            nspecs--; /* more names than the filter data holds: EventCounters only */
    }
    char series[64];
    snprintf(series, sizeof series, "Interval=%.0f", refresh * 1000.0);

    FILE *out = stdout;
    if (output && !(out = fopen(output, "w"))) {
        fprintf(stderr, "mantra counters: %s: cannot write\n", output);
        return TOOL_BAD_INPUT;
    }
    char address[512], err[512];
    uint64_t pid = 0;
    tool_signals_catch();
    mantra_diag_target *t = NULL;
    status = tool_diag_target("counters", pid_arg, name, port, &t, &pid, address, sizeof address);
    mantra_diag_session *s = NULL;
    if (status == TOOL_OK) {
        mantra_diag_collect_request req = {specs, nspecs, 256, 0, 1};
        uint32_t hr = 0;
        if (mantra_diag_collect_start(t, &req, IO_TIMEOUT_MS, &s, &hr, err, sizeof err) != 0 ||
            mantra_diag_resume(t, IO_TIMEOUT_MS, &hr, err, sizeof err) != 0) {
            fprintf(stderr, "mantra counters: %s: %s\n", address, err);
            status = TOOL_BAD_INPUT;
        }
    }
    mantra_reader *r = NULL;
    if (status == TOOL_OK) {
        r = mantra_reader_new(NULL);
        if (!r || mantra_reader_open_fd(r, mantra_diag_session_fd(s)) != 0) {
            fprintf(stderr, "mantra counters: %s: %s\n", address, r ? mantra_reader_last_error(r) : "out of memory");
            status = TOOL_BAD_INPUT;
        }
    }
    if (status != TOOL_OK) {
        if (s)
            (void)mantra_diag_session_request_stop(s, t, IO_TIMEOUT_MS, err, sizeof err);
        mantra_reader_free(r);
        mantra_diag_session_close(s);
        mantra_diag_target_free(t);
        tool_signals_restore();
        if (output)
            fclose(out);
        return status;
    }
    static sink k;
    memset(&k, 0, sizeof k);
    k.out = out;
    k.fmt = fmt;
    k.tty = fmt == 0 && isatty(fileno(out));
    k.refresh = refresh;
    if (fmt == 1)
        fputs("Timestamp,Provider,Counter Name,Counter Type,Mean/Increment\n", out);
    double t0 = tool_now_s();
    int stopping = 0, rc, meter_error = 0;
    const mantra_trace_event *ev;
    while ((rc = mantra_reader_next(r, &ev)) == 1) {
        if (!stopping && (tool_stop_signal || (duration > 0 && tool_now_s() - t0 >= duration))) {
            stopping = 1;
            if (mantra_diag_session_request_stop(s, t, IO_TIMEOUT_MS, err, sizeof err) != 0) {
                fprintf(stderr, "mantra counters: StopTracing: %s\n", err);
                break;
            }
        }
        if (stopping)
            continue;
        int metrics = strcmp(ev->metadata->provider, "System.Diagnostics.Metrics") == 0;
        const wanted *w = NULL;
        for (size_t i = 0; i < nwant && !w && !metrics; i++)
            if (strcmp(want[i].provider, ev->metadata->provider) == 0)
                w = &want[i];
        if (!metrics && (!w || strcmp(ev->metadata->name, "EventCounters") != 0))
            continue;
        sample smp;
        memset(&smp, 0, sizeof smp);
        mantra_field_visitor vis = {.scalar = on_scalar};
        if (mantra_decode_event(ev, &vis, &smp) < 0)
            continue;
        char when[40];
        utc_of(mantra_reader_info(r), ev->timestamp, when, sizeof when);
        if (metrics) {
            if (strstr(ev->metadata->name, "Error") && !meter_error++) /* once: the Meters are not shown */
                fprintf(stderr, "mantra counters: the process refused the Meter session (%s: another client's metrics "
                                "session may be running); EventCounters go on\n", ev->metadata->name);
            show_metric(&k, when, ev->metadata->name, &smp, want, nwant);
            continue;
        }
        if (strcmp(smp.series, series) != 0 || !smp.name[0])
            continue;
        int listed = w->nnames == 0;
        for (size_t i = 0; i < w->nnames && !listed; i++)
            listed = strcmp(w->names[i], smp.name) == 0;
        if (!listed)
            continue;
        int rate = strcmp(smp.type, "Sum") == 0;
        char display[200];
        display_of(display, sizeof display, smp.display[0] ? smp.display : smp.name, smp.units, rate, refresh);
        show(&k, when, ev->metadata->provider, smp.name, display, "", rate, rate ? smp.increment : smp.mean);
    }
    int status_out = TOOL_OK;
    if (rc < 0 && rc != MANTRA_ETRUNCATED) {
        fprintf(stderr, "mantra counters: %s: %s\n", address, mantra_reader_last_error(r));
        status_out = TOOL_BAD_INPUT;
    }
    if (!stopping)
        fprintf(stderr, "mantra counters: the process ended the session (it exited or stopped it)\n");
    mantra_reader_free(r);
    mantra_diag_session_close(s);
    mantra_diag_target_free(t);
    tool_signals_restore();
    if ((output && fclose(out) != 0) || (!output && fflush(out) != 0)) {
        fprintf(stderr, "mantra counters: %s: cannot write\n", output ? output : "standard output");
        return TOOL_BAD_INPUT;
    }
    if (k.values == 0)
        fprintf(stderr, "mantra counters: no counter values came (does the process have %s?)\n", list);
    return status_out;
}
