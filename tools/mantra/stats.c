/* mantra stats [--json] [--manifest FILE]... TRACE - counts of a trace (DESIGN.md "CLI contracts"). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

static const char stats_usage[] =
    "Usage: mantra stats [--json] [--manifest FILE]... TRACE\n"
    "       mantra stats [--json] --clock\n"
    "\n"
    "Reads a whole nettrace trace and prints its counts, then a table of its events by name with\n"
    "their counts, most events first. With --json, one JSON object:\n"
    "  format_version  3, 4 or 6 as the file says (V5 files say 4)\n"
    "  complete        whether the end-of-stream marker was seen\n"
    "  pointer_size    the trace header's pointer size in bytes (4: a 32-bit process such as WASI)\n"
    "  events, metadata, stacks, sequence_points\n"
    "  dropped         events lost, from per-thread sequence-number gaps\n"
    "  decode_errors   events whose payload does not match their manifest template\n"
    "  by_event        \"<provider>/<event id>/v<version>\" -> count\n"
    "  by_name         \"<provider>/<event name>\" -> count (versions together; \"<provider>/<id>\" for\n"
    "                  events without a name), most events first\n"
    "  errors          list of strings (\"offset N: what\")\n"
    "TRACE '-' reads standard input.\n"
    "\n"
    "  --clock            no trace: the clock that processes with this environment stamp events with\n"
    "                     (MANTRA_CLOCK: auto, tsc, tsc-unordered, monotonic), the kernel's clocksource,\n"
    "                     whether the TSC is invariant, what one read of each clock costs here (about\n"
    "                     10 ms of measuring), and what MANTRA_CLOCK=tsc or tsc-unordered would gain and\n"
    "                     risk (docs/sessions.md, \"The clock\"). With --json: clock, mantra_clock,\n"
    "                     kernel_clocksource, invariant_tsc, ns_per_read {monotonic, tsc, tsc_unordered},\n"
    "                     tsc_ordered_read (rdtscp, lfence+rdtsc or \"\"), advice (list of strings)\n"
    "\n"
    "  --manifest FILE    a manifest (YAML, as `mantra-gen --emit-yaml` prints) for events whose trace\n"
    "                     metadata has no fields; repeatable; MANTRA_MANIFEST_PATH (colon-separated)\n"
    "                     adds more. The .NET runtime's providers are built in (manifest/clr/); a\n"
    "                     manifest given here wins for the events it defines\n"
    "\n"
    "Exit status: 0 every complete block was read, 1 unreadable trace or bad manifest, 2 usage error.\n";

typedef struct bucket {
    char *key;      /* "<provider>/<event id>/v<version>" */
    char *name_key; /* "<provider>/<event name>", or "<provider>/<event id>" when it has no name */
    const char *name; /* the event name ("" when none) */
    uint64_t count;
} bucket;

typedef struct counter {
    /* metadata (pointer, version) -> index in buckets, open addressing */
    const void **mkeys;
    uint32_t *mvers;
    size_t *midx;
    size_t mcap, mcount;
    bucket *b;
    size_t nb, capb;
} counter;

static size_t hash_ptr(const void *p, uint32_t v) {
    uint64_t k = (uint64_t)(uintptr_t)p ^ ((uint64_t)v << 48);
    k ^= k >> 33;
    k *= UINT64_C(0xff51afd7ed558ccd);
    k ^= k >> 33;
    return (size_t)k;
}

static int bucket_cmp(const void *a, const void *b) {
    return strcmp(((const bucket *)a)->key, ((const bucket *)b)->key);
}

/* Most events first; equal counts by key. */
static int by_count_cmp(const void *a, const void *b) {
    const bucket *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* The buckets merged by name_key (versions of one event together), most events first, in *out
 * (free with free(); the keys are borrowed). -1 when out of memory. */
static int by_name(const bucket *b, size_t n, bucket **out, size_t *nout) {
    bucket *r = malloc((n ? n : 1) * sizeof *r);
    if (r == NULL)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < k && strcmp(r[j].name_key, b[i].name_key) != 0)
            j++;
        if (j == k) {
            r[k] = b[i];
            r[k].key = b[i].name_key;
            k++;
        } else {
            r[j].count += b[i].count;
        }
    }
    if (k > 1)
        qsort(r, k, sizeof *r, by_count_cmp);
    *out = r;
    *nout = k;
    return 0;
}

static int count_event(counter *c, const mantra_trace_event *ev) {
    if ((c->mcount + 1) * 2 > c->mcap) {
        size_t ncap = c->mcap ? c->mcap * 2 : 64;
        const void **k = calloc(ncap, sizeof *k);
        uint32_t *v = calloc(ncap, sizeof *v);
        size_t *x = calloc(ncap, sizeof *x);
        if (!k || !v || !x) {
            free(k);
            free(v);
            free(x);
            return -1;
        }
        for (size_t i = 0; i < c->mcap; i++) {
            if (c->mkeys[i] == NULL)
                continue;
            size_t j = hash_ptr(c->mkeys[i], c->mvers[i]) & (ncap - 1);
            while (k[j])
                j = (j + 1) & (ncap - 1);
            k[j] = c->mkeys[i];
            v[j] = c->mvers[i];
            x[j] = c->midx[i];
        }
        free(c->mkeys);
        free(c->mvers);
        free(c->midx);
        c->mkeys = k;
        c->mvers = v;
        c->midx = x;
        c->mcap = ncap;
    }
    const mantra_trace_metadata *m = ev->metadata;
    size_t j = hash_ptr(m, ev->version) & (c->mcap - 1);
    while (c->mkeys[j] && !(c->mkeys[j] == m && c->mvers[j] == ev->version))
        j = (j + 1) & (c->mcap - 1);
    if (c->mkeys[j] == NULL) {
        /* new (metadata, version): find or make the bucket of its key */
        size_t len = strlen(m->provider) + 32;
        char *key = malloc(len);
        if (key == NULL)
            return -1;
        snprintf(key, len, "%s/%" PRIu32 "/v%" PRIu32, m->provider, m->event_id, ev->version);
        size_t nlen = strlen(m->provider) + strlen(m->name) + 16;
        char *name_key = malloc(nlen);
        if (name_key == NULL) {
            free(key);
            return -1;
        }
        if (m->name[0])
            snprintf(name_key, nlen, "%s/%s", m->provider, m->name);
        else
            snprintf(name_key, nlen, "%s/%" PRIu32, m->provider, m->event_id);
        size_t bi;
        for (bi = 0; bi < c->nb; bi++)
            if (strcmp(c->b[bi].key, key) == 0)
                break;
        if (bi == c->nb) {
            if (c->nb == c->capb) {
                size_t ncap = c->capb ? c->capb * 2 : 32;
                bucket *nb = realloc(c->b, ncap * sizeof *nb);
                if (nb == NULL) {
                    free(key);
                    free(name_key);
                    return -1;
                }
                c->b = nb;
                c->capb = ncap;
            }
            c->b[c->nb].key = key;
            c->b[c->nb].name_key = name_key;
            c->b[c->nb].name = m->name;
            c->b[c->nb].count = 0;
            c->nb++;
        } else {
            free(key);
            free(name_key);
        }
        c->mkeys[j] = m;
        c->mvers[j] = ev->version;
        c->midx[j] = bi;
        c->mcount++;
    }
    c->b[c->midx[j]].count++;
    return 0;
}

static void counter_free(counter *c) {
    for (size_t i = 0; i < c->nb; i++) {
        free(c->b[i].key);
        free(c->b[i].name_key);
    }
    free(c->b);
    free(c->mkeys);
    free(c->mvers);
    free(c->midx);
}

int cmd_stats(int argc, char **argv) {
    int json = 0, clock = 0;
    const char *path = NULL;
    tool_manifests ms;
    memset(&ms, 0, sizeof ms);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(stats_usage, stdout);
            return TOOL_OK;
        }
        if (strcmp(a, "--version") == 0) {
            printf("mantra %s\n", MANTRA_VERSION_STRING);
            return TOOL_OK;
        }
        if (strcmp(a, "--json") == 0)
            json = 1;
        else if (strcmp(a, "--clock") == 0)
            clock = 1;
        else {
            int rc = tool_common_arg("stats", argc, argv, &i, &ms, &path);
            if (rc >= 0)
                return rc;
        }
    }
    if (clock) {
        tool_manifests_free(&ms);
        if (path != NULL)
            return tool_usage_error("stats", "%s", "--clock reads no trace");
        return stats_clock(json);
    }
    if (path == NULL) {
        tool_manifests_free(&ms);
        return tool_usage_error("stats", "%s", "no trace given");
    }
    if (tool_manifests_load(&ms) < 0) {
        tool_manifests_free(&ms);
        return TOOL_BAD_INPUT;
    }
    mantra_reader *r = tool_reader("stats", 0, &ms);
    if (r == NULL) {
        tool_manifests_free(&ms);
        return TOOL_BAD_INPUT;
    }
    counter c;
    memset(&c, 0, sizeof c);
    int rc = tool_open(r, "stats", path);
    if (rc >= 0) {
        const mantra_trace_event *ev;
        while ((rc = mantra_reader_next(r, &ev)) > 0) {
            if (count_event(&c, ev) < 0) {
                fprintf(stderr, "mantra stats: out of memory\n");
                counter_free(&c);
                mantra_reader_free(r);
                tool_manifests_free(&ms);
                return TOOL_BAD_INPUT;
            }
            if (ev->decode_status != 0)
                tool_decode_warning("stats", path, ev);
            tool_progress(r, "stats", 0);
        }
        tool_decode_summary("stats", path, r);
        tool_progress(r, "stats", 1);
        if (rc < 0)
            tool_report(r, "stats", path);
    }
    if (c.nb > 1)
        qsort(c.b, c.nb, sizeof *c.b, bucket_cmp);
    bucket *names = NULL;
    size_t nnames = 0;
    if (by_name(c.b, c.nb, &names, &nnames) < 0) {
        fprintf(stderr, "mantra stats: out of memory\n");
        counter_free(&c);
        mantra_reader_free(r);
        tool_manifests_free(&ms);
        return TOOL_BAD_INPUT;
    }
    const mantra_reader_stats *s = mantra_reader_get_stats(r);
    const mantra_trace_info *info = mantra_reader_info(r);
    const char *err = rc < 0 ? mantra_reader_last_error(r) : "";
    if (json) {
        printf("{\"format_version\":%d,\"complete\":%s,\"pointer_size\":%" PRIu32 ",\"events\":%" PRIu64
               ",\"metadata\":%" PRIu64 ",\"stacks\":%" PRIu64 ",\"sequence_points\":%" PRIu64
               ",\"dropped\":%" PRIu64 ",\"manifest_events\":%" PRIu64 ",\"decode_errors\":%" PRIu64
               ",\"by_event\":{",
               info->format_version, mantra_reader_complete(r) ? "true" : "false", info->pointer_size, s->events,
               s->metadata, s->stacks, s->sequence_points, s->dropped, s->manifest_events, s->decode_errors);
        for (size_t i = 0; i < c.nb; i++) {
            if (i)
                putchar(',');
            json_string(stdout, c.b[i].key, strlen(c.b[i].key));
            printf(":%" PRIu64, c.b[i].count);
        }
        fputs("},\"by_name\":{", stdout);
        for (size_t i = 0; i < nnames; i++) {
            if (i)
                putchar(',');
            json_string(stdout, names[i].key, strlen(names[i].key));
            printf(":%" PRIu64, names[i].count);
        }
        fputs("},\"errors\":[", stdout);
        if (err[0])
            json_string(stdout, err, strlen(err));
        fputs("]}\n", stdout);
    } else {
        printf("format version   %d\ncomplete         %s\npointer size     %" PRIu32 "\nevents           %" PRIu64
               "\nmetadata         %" PRIu64 "\nstacks           %" PRIu64 "\nsequence points  %" PRIu64
               "\ndropped          %" PRIu64 "\nmanifest events  %" PRIu64 "\ndecode errors    %" PRIu64 "\n",
               info->format_version, mantra_reader_complete(r) ? "yes" : "no", info->pointer_size, s->events,
               s->metadata, s->stacks, s->sequence_points, s->dropped, s->manifest_events, s->decode_errors);
        if (c.nb > 1)
            qsort(c.b, c.nb, sizeof *c.b, by_count_cmp);
        if (c.nb)
            printf("\n%10s  %-40s %s\n", "count", "event", "provider/id/version");
        for (size_t i = 0; i < c.nb; i++)
            printf("%10" PRIu64 "  %-40s %s\n", c.b[i].count, c.b[i].name[0] ? c.b[i].name : "-", c.b[i].key);
        if (err[0])
            printf("error: %s\n", err);
    }
    fflush(stdout);
    int status = tool_status(rc);
    free(names);
    counter_free(&c);
    mantra_reader_free(r);
    tool_manifests_free(&ms);
    return status;
}
