/* `mantra report TRACE [--top N] [--threads] [--json] [--weight samples|time] [--logical] [--image PATH]...`
 * (docs/cli.md "mantra report"): the methods the trace's samples were in, by exclusive samples
 * (the sample's first frame) and inclusive samples (any frame, a method counted once per sample),
 * frames resolved with the trace's time-aware symbol map (sym_samples.c). --weight time weighs
 * each sample by the time to its thread's next sample, as dotnet-trace report and its speedscope
 * conversion do (TraceEvent's SampleProfilerThreadTimeComputer); the default counts samples.
 * --logical attributes samples inside async calls to their logical stacks (sym_logical.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym_logical.h"
#include "sym_samples.h"
#include "tool.h"

static const char usage[] =
    "Usage: mantra report TRACE [--top N] [--threads] [--json] [--weight samples|time] [--logical]\n"
    "                    [--image PATH]...\n"
    "\n"
    "The methods the trace's samples (SampleProfiler) were in, frames resolved as `mantra symbolize`\n"
    "resolves them (cold parts of ReadyToRun methods included): exclusive (the sample's first frame)\n"
    "and inclusive (anywhere in its stack, once per sample), highest exclusive first.\n"
    "\n"
    "  --top N          the N first methods (default 20; 0: all)\n"
    "  --threads        one table per thread too\n"
    "  --weight samples each sample counts 1 (default)\n"
    "  --weight time    each sample weighs the time to its thread's next sample (dotnet-trace report's\n"
    "                   weighting); a thread's last sample weighs nothing, as there\n"
    "  --logical        a sample inside a resumed async method counts for its logical stack: the\n"
    "                   chain of awaiting callers (the trace's Mantra-Interp AsyncMethod events),\n"
    "                   not the dispatcher that resumed it\n"
    "  --image PATH     a ReadyToRun image of one of the trace's modules (as for mantra symbolize)\n"
    "  --json           {\"samples\", \"weight\", \"methods\": [{\"name\", \"exclusive\", \"inclusive\",\n"
    "                   \"exclusive_share\", \"inclusive_share\"}]}; with --threads also \"threads\":\n"
    "                   [{\"thread_id\", \"table\": {\"samples\", \"weight\", \"methods\"}}]; with\n"
    "                   --logical also \"logical_samples\" (the samples given a logical stack)\n"
    "\n"
    "Exit status: 0 success, 1 bad input, 2 usage error.\n";

typedef struct method_row {
    const char *name;
    uint64_t excl, incl;
    double excl_w, incl_w;
    uint64_t seen_in; /* the last sample that counted it inclusively (+1) */
} method_row;

typedef struct table {
    method_row *rows; /* one per name of the samples */
    uint64_t samples;
    double total;
} table;

/* Adds samples [from, to) to t. */
static void tally(const sym_samples *ss, table *t, int by_time, size_t from, size_t to) {
    for (size_t i = from; i < to;) {
        size_t thread_end = sym_samples_thread_end(ss, i), end = thread_end < to ? thread_end : to;
        for (size_t k = i; k < end; k++) {
            const sym_sample *s = &ss->s[k];
            double w = by_time ? (double)sym_sample_duration(ss, k, i, thread_end) : 1.0;
            t->samples++;
            t->total += w;
            for (uint32_t f = 0; f < s->count; f++) {
                method_row *m = &t->rows[ss->frames[s->first + f]];
                if (f == 0) {
                    m->excl++;
                    m->excl_w += w;
                }
                if (m->seen_in != k + 1) { /* once per sample */
                    m->seen_in = k + 1;
                    m->incl++;
                    m->incl_w += w;
                }
            }
        }
        i = end;
    }
}

static int cmp_row(const void *pa, const void *pb) {
    const method_row *a = *(const method_row *const *)pa, *b = *(const method_row *const *)pb;
    if (a->excl_w != b->excl_w)
        return a->excl_w > b->excl_w ? -1 : 1;
    if (a->incl_w != b->incl_w)
        return a->incl_w > b->incl_w ? -1 : 1;
    return strcmp(a->name, b->name);
}

static int print_table(const table *t, size_t n, size_t top, int json, int by_time, const char *title) {
    const method_row **order = malloc((n ? n : 1) * sizeof *order);
    if (order == NULL)
        return -2;
    size_t used = 0;
    for (size_t i = 0; i < n; i++)
        if (t->rows[i].incl)
            order[used++] = &t->rows[i];
    if (used > 1)
        qsort(order, used, sizeof *order, cmp_row);
    size_t shown = top && top < used ? top : used;
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
        fputs("\n]", stdout); /* the object is closed by the caller: the all-threads table may go on */
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

static int new_table(const sym_samples *ss, table *t) {
    memset(t, 0, sizeof *t);
    t->rows = calloc(ss->nnames ? ss->nnames : 1, sizeof *t->rows);
    if (t->rows == NULL)
        return -2;
    for (size_t i = 0; i < ss->nnames; i++)
        t->rows[i].name = ss->names[i];
    return 0;
}

int cmd_report(int argc, char **argv) {
    int json = 0, threads = 0, by_time = 0;
    size_t top = 20;
    int logical = 0;
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
        } else if (strcmp(a, "--logical") == 0) {
            logical = 1;
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
    sym_trace st;
    sym_samples ss;
    sym_logical lg;
    memset(&lg, 0, sizeof lg);
    table all;
    memset(&ss, 0, sizeof ss);
    memset(&all, 0, sizeof all);
    int rc = sym_trace_build(&st, "report", path, images, nimages);
    free(images);
    if (rc == 0)
        rc = sym_samples_read(&ss, &st, 0, logical ? &lg : NULL, NULL, NULL);
    if (rc == 0)
        rc = new_table(&ss, &all);
    if (rc == 0) {
        tally(&ss, &all, by_time, 0, ss.n);
        rc = print_table(&all, ss.nnames, top, json, by_time, "");
        if (logical) {
            if (json)
                printf(",\"logical_samples\":%zu", lg.attributed);
            else
                printf("logical stacks: %zu of %zu samples were inside async calls\n", lg.attributed, ss.n);
        }
    }
    if (rc == 0 && threads) {
        if (json)
            fputs(",\"threads\":[", stdout);
        for (size_t i = 0, nth = 0; rc == 0 && i < ss.n; nth++) {
            size_t j = sym_samples_thread_end(&ss, i);
            table t;
            rc = new_table(&ss, &t);
            if (rc == 0) {
                tally(&ss, &t, by_time, i, j);
                char title[64];
                snprintf(title, sizeof title, "\nthread %" PRIu64, ss.s[i].thread);
                if (json)
                    printf("%s{\"thread_id\":%" PRIu64 ",\"table\":", nth ? "," : "", ss.s[i].thread);
                rc = print_table(&t, ss.nnames, top, json, by_time, title);
                if (rc == 0 && json)
                    fputs("}}", stdout);
            }
            free(t.rows);
            i = j;
        }
        if (json)
            fputs("]", stdout);
    }
    if (rc == 0 && json)
        fputs("}\n", stdout);
    if (rc == -2)
        fputs("mantra report: out of memory\n", stderr);
    free(all.rows);
    sym_logical_free(&lg);
    sym_samples_free(&ss);
    sym_trace_free(&st);
    return rc == 0 && fflush(stdout) == 0 ? TOOL_OK : TOOL_BAD_INPUT;
}
