/* `mantra report TRACE [--top N] [--threads] [--json] [--weight samples|time] [--image PATH]...`
 * (docs/cli.md "mantra report"): the methods the trace's samples were in, by exclusive samples
 * (the sample's first frame) and inclusive samples (any frame, a method counted once per sample),
 * frames resolved with the trace's time-aware symbol map (sym_trace.c). --weight time weighs each
 * sample by the time to its thread's next sample, as dotnet-trace report and its speedscope
 * conversion do (TraceEvent's SampleProfilerThreadTimeComputer); the default counts samples. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgo_tool.h"
#include "sym_trace.h"
#include "tool.h"

static const char usage[] =
    "Usage: mantra report TRACE [--top N] [--threads] [--json] [--weight samples|time] [--image PATH]...\n"
    "\n"
    "The methods the trace's samples (SampleProfiler) were in, frames resolved as `mantra symbolize`\n"
    "resolves them (cold parts of ReadyToRun methods included): exclusive (the sample's first frame)\n"
    "and inclusive (anywhere in its stack, once per sample), highest exclusive first.\n"
    "\n"
    "  --top N          the N first methods (default 20; 0: all)\n"
    "  --threads        one table per thread too\n"
    "  --weight samples each sample counts 1 (default)\n"
    "  --weight time    each sample weighs the time to its thread's next sample (dotnet-trace report's\n"
    "                   weighting); the last sample of a thread weighs the thread's median interval\n"
    "  --image PATH     a ReadyToRun image of one of the trace's modules (as for mantra symbolize)\n"
    "  --json           {\"samples\", \"weight\", \"methods\": [{\"name\", \"exclusive\", \"inclusive\",\n"
    "                   \"exclusive_share\", \"inclusive_share\"}]}\n"
    "\n"
    "Exit status: 0 success, 1 bad input, 2 usage error.\n";

typedef struct method_row {
    char *name;
    uint64_t excl, incl;
    double excl_w, incl_w;
    uint64_t seen_in; /* the last sample that counted it inclusively (+1) */
} method_row;

typedef struct table {
    pgo_strmap index;
    method_row *rows;
    size_t n, cap;
    uint64_t samples;
    double total;
} table;

typedef struct sample {
    uint64_t thread;
    int64_t time;
    uint32_t first, count; /* names[first .. first + count) */
} sample;

typedef struct report {
    sym_trace st;
    sample *samples;
    size_t nsamples, cap_samples;
    uint32_t *names; /* frame names as indexes into the all-threads table's rows */
    size_t nnames, cap_names;
    table all;
} report;

static int row_of(table *t, const char *name, size_t *out) {
    size_t i = pgo_strmap_get(&t->index, name);
    if (i == (size_t)-1) {
        if (tool_grow((void **)&t->rows, &t->cap, t->n + 1, sizeof *t->rows, 256) < 0)
            return -2;
        char *copy = pgo_strdup(name);
        if (copy == NULL || pgo_strmap_put(&t->index, name, t->n) < 0) {
            free(copy);
            return -2;
        }
        t->rows[t->n] = (method_row){copy, 0, 0, 0, 0, 0};
        i = t->n++;
    }
    *out = i;
    return 0;
}

static void table_free(table *t) {
    for (size_t i = 0; i < t->n; i++)
        free(t->rows[i].name);
    free(t->rows);
    pgo_strmap_free(&t->index);
}

/* The frame name a report groups by: "Module!Namespace.Name" (no parameters), "?" unresolved. */
static void frame_name(const mantra_sym_result *r, char *buf, size_t size) {
    if (r->part == MANTRA_SYM_NONE) {
        snprintf(buf, size, "?");
        return;
    }
    sym_frame_text(r, 0, 1, buf, size);
    char *paren = strchr(buf, '(');
    if (paren)
        *paren = '\0';
}

/* Reads every sample: its thread, time and resolved frame names. */
static int read_samples(report *rp) {
    mantra_reader *r = mantra_reader_new(NULL);
    if (r == NULL)
        return -2;
    if (mantra_reader_open_file(r, rp->st.path) < 0) {
        fprintf(stderr, "mantra report: %s: cannot read the trace: %s\n", rp->st.path, mantra_reader_last_error(r));
        mantra_reader_free(r);
        return -1;
    }
    const mantra_trace_event *ev;
    char name[1024];
    int rc = 0;
    while (rc == 0 && mantra_reader_next(r, &ev) > 0) {
        if (!sym_is_sample(ev))
            continue;
        if (tool_grow((void **)&rp->samples, &rp->cap_samples, rp->nsamples + 1, sizeof *rp->samples, 1024) < 0 ||
            tool_grow((void **)&rp->names, &rp->cap_names, rp->nnames + ev->stack_count, sizeof *rp->names, 4096) < 0) {
            rc = -2;
            break;
        }
        sample *s = &rp->samples[rp->nsamples++];
        *s = (sample){ev->thread_id, ev->timestamp, (uint32_t)rp->nnames, 0};
        for (size_t i = 0; rc == 0 && i < ev->stack_count; i++) {
            mantra_sym_result res;
            mantra_symbols_resolve(rp->st.map, mantra_trace_event_ip(ev, i), ev->timestamp, i > 0, &res);
            frame_name(&res, name, sizeof name);
            size_t row;
            rc = row_of(&rp->all, name, &row);
            if (rc == 0) {
                rp->names[rp->nnames++] = (uint32_t)row;
                s->count++;
            }
        }
    }
    mantra_reader_free(r);
    return rc;
}

static int cmp_sample(const void *pa, const void *pb) {
    const sample *a = pa, *b = pb;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    return a->first < b->first ? -1 : a->first > b->first;
}

static int cmp_i64(const void *pa, const void *pb) {
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return a < b ? -1 : a > b;
}

/* Each sample's weight: 1, or the ticks to its thread's next sample (the last: the thread's median
 * interval, 0 for a thread with one sample). samples must be sorted by thread and time. */
static int weights(const report *rp, int by_time, double *w) {
    int64_t *gaps = malloc((rp->nsamples ? rp->nsamples : 1) * sizeof *gaps);
    if (gaps == NULL)
        return -2;
    for (size_t i = 0; i < rp->nsamples;) {
        size_t j = i;
        while (j < rp->nsamples && rp->samples[j].thread == rp->samples[i].thread)
            j++;
        size_t ng = 0;
        for (size_t k = i; k + 1 < j; k++)
            gaps[ng++] = rp->samples[k + 1].time - rp->samples[k].time;
        int64_t median = 0;
        if (ng) {
            for (size_t k = i; k + 1 < j; k++)
                w[k] = (double)(rp->samples[k + 1].time - rp->samples[k].time);
            qsort(gaps, ng, sizeof *gaps, cmp_i64);
            median = gaps[ng / 2];
        }
        w[j - 1] = (double)median;
        if (!by_time)
            for (size_t k = i; k < j; k++)
                w[k] = 1.0;
        i = j;
    }
    free(gaps);
    return 0;
}

/* Adds samples [from, to) to t (its rows named through rp->all). */
static int tally(report *rp, table *t, const double *w, size_t from, size_t to) {
    for (size_t k = from; k < to; k++) {
        const sample *s = &rp->samples[k];
        t->samples++;
        t->total += w[k];
        for (uint32_t f = 0; f < s->count; f++) {
            size_t row;
            int rc = t == &rp->all ? (row = rp->names[s->first + f], 0) : row_of(t, rp->all.rows[rp->names[s->first + f]].name, &row);
            if (rc < 0)
                return rc;
            method_row *m = &t->rows[row];
            if (f == 0) {
                m->excl++;
                m->excl_w += w[k];
            }
            if (m->seen_in != k + 1) { /* once per sample */
                m->seen_in = k + 1;
                m->incl++;
                m->incl_w += w[k];
            }
        }
    }
    return 0;
}

static int cmp_row(const void *pa, const void *pb) {
    const method_row *a = *(const method_row *const *)pa, *b = *(const method_row *const *)pb;
    if (a->excl_w != b->excl_w)
        return a->excl_w > b->excl_w ? -1 : 1;
    if (a->incl_w != b->incl_w)
        return a->incl_w > b->incl_w ? -1 : 1;
    return strcmp(a->name, b->name);
}

static int print_table(const table *t, size_t top, int json, int by_time, const char *title) {
    const method_row **order = malloc((t->n ? t->n : 1) * sizeof *order);
    if (order == NULL)
        return -2;
    for (size_t i = 0; i < t->n; i++)
        order[i] = &t->rows[i];
    if (t->n > 1)
        qsort(order, t->n, sizeof *order, cmp_row);
    size_t shown = top && top < t->n ? top : t->n;
    double total = t->total > 0 ? t->total : 1;
    if (json) {
        printf("{\"samples\":%" PRIu64 ",\"weight\":\"%s\",\"methods\":[", t->samples, by_time ? "time" : "samples");
        for (size_t i = 0; i < shown; i++) {
            const method_row *m = order[i];
            fputs(i ? ",\n{\"name\":" : "\n{\"name\":", stdout);
            json_string(stdout, m->name, strlen(m->name));
            printf(",\"exclusive\":%" PRIu64 ",\"inclusive\":%" PRIu64 ",\"exclusive_share\":%.6f,\"inclusive_share\":%.6f}",
                   m->excl, m->incl, m->excl_w / total, m->incl_w / total);
        }
        fputs("\n]}", stdout);
    } else {
        printf("%s%s%" PRIu64 " samples, weighted by %s\n", title, title[0] ? ": " : "", t->samples,
               by_time ? "the time to the thread's next sample" : "count");
        printf("%10s %8s %10s %8s  %s\n", "exclusive", "", "inclusive", "", "method");
        for (size_t i = 0; i < shown; i++) {
            const method_row *m = order[i];
            printf("%10" PRIu64 " %7.2f%% %10" PRIu64 " %7.2f%%  %s\n", m->excl, 100 * m->excl_w / total, m->incl,
                   100 * m->incl_w / total, m->name);
        }
    }
    free(order);
    return 0;
}

int cmd_report(int argc, char **argv) {
    int json = 0, threads = 0, by_time = 0;
    size_t top = 20;
    const char *path = NULL;
    const char **images = calloc((size_t)argc, sizeof *images);
    size_t nimages = 0;
    if (images == NULL)
        return TOOL_BAD_INPUT;
    int usage_rc = -1;
    for (int i = 1; i < argc && usage_rc < 0; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            usage_rc = TOOL_OK;
        } else if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if (strcmp(a, "--threads") == 0) {
            threads = 1;
        } else if (strcmp(a, "--top") == 0 || strcmp(a, "--weight") == 0 || strcmp(a, "--image") == 0) {
            if (i + 1 >= argc) {
                usage_rc = tool_usage_error("report", "%s needs a value", a);
                break;
            }
            const char *v = argv[++i];
            char *end;
            if (a[2] == 't') {
                unsigned long long n = strtoull(v, &end, 10);
                if (*v == '\0' || *end != '\0' || n > 1000000)
                    usage_rc = tool_usage_error("report", "--top '%s': a number of methods", v);
                top = (size_t)n;
            } else if (a[2] == 'w') {
                if (strcmp(v, "time") == 0)
                    by_time = 1;
                else if (strcmp(v, "samples") == 0)
                    by_time = 0;
                else
                    usage_rc = tool_usage_error("report", "--weight '%s': samples or time", v);
            } else {
                images[nimages++] = v;
            }
        } else if (a[0] == '-' && a[1] != '\0') {
            usage_rc = tool_usage_error("report", "unknown option '%s'", a);
        } else if (path == NULL) {
            path = a;
        } else {
            usage_rc = tool_usage_error("report", "one TRACE only ('%s' too)", a);
        }
    }
    if (usage_rc < 0 && path == NULL) {
        fputs(usage, stderr);
        usage_rc = TOOL_USAGE;
    }
    if (usage_rc >= 0) {
        free(images);
        return usage_rc;
    }
    report rp;
    memset(&rp, 0, sizeof rp);
    int rc = sym_trace_build(&rp.st, "report", path, images, nimages);
    free(images);
    double *w = NULL;
    if (rc == 0)
        rc = read_samples(&rp);
    if (rc == 0 && rp.nsamples > 1)
        qsort(rp.samples, rp.nsamples, sizeof *rp.samples, cmp_sample);
    if (rc == 0 && (w = malloc((rp.nsamples ? rp.nsamples : 1) * sizeof *w)) == NULL)
        rc = -2;
    if (rc == 0)
        rc = weights(&rp, by_time, w);
    if (rc == 0)
        rc = tally(&rp, &rp.all, w, 0, rp.nsamples);
    if (rc == 0 && json && threads)
        fputs("{\"all\":", stdout);
    if (rc == 0)
        rc = print_table(&rp.all, top, json, by_time, "");
    if (rc == 0 && threads) {
        if (json)
            fputs(",\"threads\":[", stdout);
        for (size_t i = 0, nth = 0; rc == 0 && i < rp.nsamples; nth++) {
            size_t j = i;
            while (j < rp.nsamples && rp.samples[j].thread == rp.samples[i].thread)
                j++;
            table t;
            memset(&t, 0, sizeof t);
            rc = tally(&rp, &t, w, i, j);
            char title[64];
            snprintf(title, sizeof title, "\nthread %" PRIu64, rp.samples[i].thread);
            if (rc == 0 && json)
                printf("%s{\"thread_id\":%" PRIu64 ",\"table\":", nth ? "," : "", rp.samples[i].thread);
            if (rc == 0)
                rc = print_table(&t, top, json, by_time, title);
            if (rc == 0 && json)
                fputc('}', stdout);
            table_free(&t);
            i = j;
        }
        if (json)
            fputs("]}", stdout);
    }
    if (rc == 0 && json)
        fputc('\n', stdout);
    if (rc == -2)
        fputs("mantra report: out of memory\n", stderr);
    free(w);
    free(rp.samples);
    free(rp.names);
    table_free(&rp.all);
    sym_trace_free(&rp.st);
    return rc == 0 && fflush(stdout) == 0 ? TOOL_OK : TOOL_BAD_INPUT;
}
