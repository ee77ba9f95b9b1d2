/* `mantra export TRACE --format speedscope|chrome -o FILE [--logical] [--image PATH]...` (docs/cli.md "mantra
 * export"): a trace's samples as a flame graph, frames resolved as `mantra symbolize` resolves them
 * (sym_samples.c). speedscope: its file format (https://www.speedscope.app/file-format-schema.json):
 * shared frames, one "sampled" profile per thread, stacks root first, each sample weighing the time
 * to its thread's next sample in milliseconds. chrome: the Trace Event Format (JSON object form,
 * "traceEvents"): per thread, each stack level's runs of one frame as complete events ("X"), every
 * other event of the trace as a thread-scoped instant ("i"); microseconds from the trace's first
 * event. Both load in their viewers as they are (speedscope; chrome://tracing and Perfetto). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym_logical.h"
#include "sym_samples.h"
#include "tool.h"

static const char usage[] =
    "Usage: mantra export TRACE --format speedscope|chrome -o FILE [--logical] [--image PATH]...\n"
    "\n"
    "Writes the trace's samples as a flame graph, frames resolved as `mantra symbolize` resolves them\n"
    "(Module!Namespace.Name, cold parts of ReadyToRun methods as Module!Namespace.Name[cold]):\n"
    "  speedscope  speedscope's JSON file format: a sampled profile per thread, samples weighing the\n"
    "              time to the thread's next sample (milliseconds)\n"
    "  chrome      the Trace Event Format (chrome://tracing, Perfetto): stacks as complete events per\n"
    "              thread, the trace's other events as instants\n"
    "  -o FILE     the output (- for standard output)\n"
    "  --logical   samples inside resumed async methods get their logical stacks (the chain of\n"
    "              awaiting callers from the trace's Mantra-Interp AsyncMethod events)\n"
    "  --image PATH  a ReadyToRun image of one of the trace's modules (as for mantra symbolize)\n"
    "\n"
    "Exit status: 0 success, 1 bad input, 2 usage error.\n";

typedef struct chrome_out {
    FILE *out;
    int first;
    const sym_samples *ss; /* being read: its t0 and freq are set before the first event comes */
} chrome_out;

static double ms(int64_t ticks, int64_t freq) { return (double)ticks * 1000.0 / (double)freq; }

/* An event other than a sample: a thread-scoped instant (chrome). */
static void instant(void *ctx, const mantra_trace_event *ev) {
    chrome_out *c = ctx;
    fputs(c->first ? "\n" : ",\n", c->out);
    c->first = 0;
    fprintf(c->out, "{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":%" PRIu64 ",\"ts\":%.3f,\"cat\":", ev->thread_id,
            ms(ev->timestamp - c->ss->t0, c->ss->freq) * 1000);
    json_string(c->out, ev->metadata->provider, strlen(ev->metadata->provider));
    fputs(",\"name\":", c->out);
    char id[32]; /* a runtime event without a name in the trace: its id, as TraceEvent shows it */
    snprintf(id, sizeof id, "EventID(%u)", ev->metadata->event_id);
    const char *n = ev->metadata->name && ev->metadata->name[0] ? ev->metadata->name : id;
    json_string(c->out, n, strlen(n));
    fputc('}', c->out);
}

static void write_speedscope(const sym_samples *x, const char *path, FILE *out) {
    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":\"mantra " MANTRA_VERSION_STRING
          "\",\"name\":",
          out);
    json_string(out, path, strlen(path));
    fputs(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", out);
    for (size_t i = 0; i < x->nnames; i++) {
        fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
        json_string(out, x->names[i], strlen(x->names[i]));
        fputc('}', out);
    }
    fputs("]},\"profiles\":[", out);
    for (size_t i = 0, np = 0; i < x->n; np++) {
        size_t j = sym_samples_thread_end(x, i);
        double start = ms(x->s[i].time - x->t0, x->freq), end = start;
        fprintf(out, "%s\n{\"type\":\"sampled\",\"name\":\"Thread %" PRIu64 "\",\"unit\":\"milliseconds\",\"samples\":[",
                np ? "," : "", x->s[i].thread);
        for (size_t k = i; k < j; k++) {
            const sym_sample *s = &x->s[k];
            fputs(k > i ? ",[" : "[", out);
            for (uint32_t f = 0; f < s->count; f++) /* root first */
                fprintf(out, "%s%" PRIu32, f ? "," : "", x->frames[s->first + s->count - 1 - f]);
            fputc(']', out);
        }
        fputs("],\"weights\":[", out);
        for (size_t k = i; k < j; k++) {
            double w = ms(sym_sample_duration(x, k, i, j), x->freq);
            end += w;
            fprintf(out, "%s%.6f", k > i ? "," : "", w);
        }
        fprintf(out, "],\"startValue\":%.6f,\"endValue\":%.6f}", start, end);
        i = j;
    }
    fputs("\n]}\n", out);
}

/* Per thread: at each stack depth (root = 0), runs of consecutive samples with the same frames down
 * to that depth become one complete event. */
static void write_chrome_samples(const sym_samples *x, FILE *out, int *first_event) {
    for (size_t i = 0; i < x->n;) {
        size_t j = sym_samples_thread_end(x, i);
        uint32_t maxd = 0;
        for (size_t k = i; k < j; k++)
            if (x->s[k].count > maxd)
                maxd = x->s[k].count;
        for (uint32_t d = 0; d < maxd; d++) {
            size_t k = i;
            while (k < j) {
                const sym_sample *s = &x->s[k];
                if (s->count <= d) {
                    k++;
                    continue;
                }
                size_t e = k + 1; /* extend while the frames 0..d are the same */
                while (e < j && x->s[e].count > d) {
                    const sym_sample *t = &x->s[e];
                    uint32_t same = 1;
                    for (uint32_t f = 0; f <= d && same; f++)
                        same = x->frames[s->first + s->count - 1 - f] == x->frames[t->first + t->count - 1 - f];
                    if (!same)
                        break;
                    e++;
                }
                int64_t ticks = x->s[e - 1].time - s->time + sym_sample_duration(x, e - 1, i, j);
                const char *n = x->names[x->frames[s->first + s->count - 1 - d]];
                fputs(*first_event ? "\n" : ",\n", out);
                *first_event = 0;
                fprintf(out, "{\"ph\":\"X\",\"pid\":1,\"tid\":%" PRIu64 ",\"ts\":%.3f,\"dur\":%.3f,\"cat\":\"sample\",\"name\":",
                        s->thread, ms(s->time - x->t0, x->freq) * 1000, ms(ticks, x->freq) * 1000);
                json_string(out, n, strlen(n));
                fputc('}', out);
                k = e;
            }
        }
        i = j;
    }
}

int cmd_export(int argc, char **argv) {
    const char *path = NULL, *format = NULL, *output = NULL;
    int logical = 0;
    const char **images = calloc((size_t)argc, sizeof *images);
    size_t nimages = 0;
    if (images == NULL)
        return TOOL_BAD_INPUT;
    int urc = -1;
    for (int i = 1; i < argc && urc < 0; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            urc = TOOL_OK;
        } else if (strcmp(a, "--logical") == 0) {
            logical = 1;
        } else if (strcmp(a, "--format") == 0 || strcmp(a, "-o") == 0 || strcmp(a, "--image") == 0) {
            if (i + 1 >= argc) {
                urc = tool_usage_error("export", "%s needs a value", a);
                break;
            }
            const char *v = argv[++i];
            if (a[1] == 'o')
                output = v;
            else if (a[2] == 'f')
                format = v;
            else
                images[nimages++] = v;
        } else if (a[0] == '-' && a[1] != '\0') {
            urc = tool_usage_error("export", "unknown option '%s'", a);
        } else if (path == NULL) {
            path = a;
        } else {
            urc = tool_usage_error("export", "one TRACE only ('%s' too)", a);
        }
    }
    if (urc < 0 && (path == NULL || format == NULL || output == NULL)) {
        fputs(usage, stderr);
        urc = TOOL_USAGE;
    }
    if (urc < 0 && strcmp(format, "speedscope") != 0 && strcmp(format, "chrome") != 0)
        urc = tool_usage_error("export", "--format '%s': speedscope or chrome", format);
    if (urc >= 0) {
        free(images);
        return urc;
    }
    int chrome = strcmp(format, "chrome") == 0;
    sym_trace st;
    sym_samples ss;
    sym_logical lg;
    memset(&ss, 0, sizeof ss);
    memset(&lg, 0, sizeof lg);
    int rc = sym_trace_build(&st, "export", path, images, nimages);
    free(images);
    FILE *out = NULL;
    if (rc == 0) {
        out = strcmp(output, "-") == 0 ? stdout : fopen(output, "w");
        if (out == NULL) {
            fprintf(stderr, "mantra export: %s: cannot write\n", output);
            rc = -1;
        }
    }
    chrome_out c = {out, 1, &ss};
    if (rc == 0 && chrome)
        fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"exporter\":\"mantra " MANTRA_VERSION_STRING "\"},\"traceEvents\":[",
              out);
    if (rc == 0)
        rc = sym_samples_read(&ss, &st, 1, logical ? &lg : NULL, chrome ? instant : NULL, &c);
    if (rc == 0 && chrome) {
        write_chrome_samples(&ss, out, &c.first);
        fputs("\n]}\n", out);
    } else if (rc == 0) {
        write_speedscope(&ss, path, out);
    }
    if (rc == 0)
        fprintf(stderr, "mantra export: %s: %zu samples, %zu distinct frames, %s written to %s\n", path, ss.n,
                ss.nnames, format, output);
    if (rc == 0 && logical)
        fprintf(stderr, "mantra export: %zu of the samples were inside async calls: logical stacks\n", lg.attributed);
    int status = rc == 0 ? TOOL_OK : TOOL_BAD_INPUT;
    if (rc == -2)
        fputs("mantra export: out of memory\n", stderr);
    if (out && out != stdout && fclose(out) != 0)
        status = TOOL_BAD_INPUT;
    else if (out == stdout && fflush(stdout) != 0)
        status = TOOL_BAD_INPUT;
    sym_logical_free(&lg);
    sym_samples_free(&ss);
    sym_trace_free(&st);
    return status;
}
