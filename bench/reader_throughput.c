/* reader_throughput: nettrace reader throughput over a large synthetic V5 trace.
 *
 *   reader_throughput [-s MB] [-o FILE] [-k]
 *   reader_throughput -i FILE [-m hdr|dec] [-p] [-M]
 *
 * Generates a trace of about MB megabytes (default 1024) in FILE (default
 * $TMPDIR/mantra-bench-reader.nettrace): compressed rows of two events (V1 fields: UInt64, UInt32,
 * String; V2Params: UInt64, Int32[]), runs of 4 capture threads, a StackBlock and an SPBlock about
 * every 10 MB, the end tag. The bytes are produced here (independent of the writer under test).
 * Then reads it back: headers only, and with every field decoded; prints MB/s, events/s and the
 * peak RSS after a first pass over an eighth of the file and after the full file (memory must not
 * grow with the file). -k keeps the file.
 *
 * With -i, reads the existing FILE once per mode (-m hdr: headers only, -m dec: every field
 * decoded; default both) and prints one line per mode (bench/reader_vs_traceevent.sh alternates
 * such runs with TraceEvent's). -p registers the generated .NET runtime providers
 * (mantra_dotnet_providers, as `mantra dump` does) so that runtime events with minimal metadata
 * are decoded too. -M reads through a memory mapping (MANTRA_READER_MAP). */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "common/varint-internal.h"
#include "mantra/reader.h"
#ifdef READER_BENCH_DOTNET
#include "dotnet_registry.h"
#endif

typedef struct out {
    FILE *f;
    uint64_t off;
} out;

static void put(out *o, const void *p, size_t n) {
    if (fwrite(p, 1, n, o->f) != n) {
        perror("write");
        exit(1);
    }
    o->off += n;
}
static void put_u8(out *o, uint8_t v) { put(o, &v, 1); }
static void put_u32(out *o, uint32_t v) { put(o, &v, 4); }
static void put_u64(out *o, uint64_t v) { put(o, &v, 8); }

/* A FastSerialization block object around content[0..n). */
static void block(out *o, const char *name, const uint8_t *content, size_t n) {
    put_u8(o, 5);
    put_u8(o, 5);
    put_u8(o, 1);
    put_u32(o, 2);
    put_u32(o, 2);
    put_u32(o, (uint32_t)strlen(name));
    put(o, name, strlen(name));
    put_u8(o, 6);
    put_u32(o, (uint32_t)n);
    static const uint8_t zero[4];
    put(o, zero, (size_t)((4 - (o->off & 3)) & 3));
    put(o, content, n);
    put_u8(o, 6);
}

typedef struct buf {
    uint8_t *p;
    size_t n, cap;
} buf;

static void b_put(buf *b, const void *p, size_t n) {
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2;
        b->p = realloc(b->p, b->cap);
        if (b->p == NULL)
            exit(1);
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}
static void b_u16(buf *b, uint16_t v) { b_put(b, &v, 2); }
static void b_u32(buf *b, uint32_t v) { b_put(b, &v, 4); }
static void b_u64(buf *b, uint64_t v) { b_put(b, &v, 8); }
static void b_var(buf *b, uint64_t v) {
    uint8_t t[10];
    b_put(b, t, cm_varint_put(t, v));
}
static void b_str16(buf *b, const char *s) {
    for (; *s; s++)
        b_u16(b, (uint16_t)(unsigned char)*s);
    b_u16(b, 0);
}
static void block_header(buf *b) {
    b->n = 0;
    b_u16(b, 20);
    b_u16(b, 1);
    b_u64(b, 0);
    b_u64(b, 0);
}

static uint64_t generate(const char *path, uint64_t target) {
    out o = {fopen(path, "wb"), 0};
    if (o.f == NULL) {
        perror(path);
        exit(1);
    }
    static char iobuf[1 << 20];
    setvbuf(o.f, iobuf, _IOFBF, sizeof iobuf);
    put(&o, "Nettrace", 8);
    put_u32(&o, 20);
    put(&o, "!FastSerialization.1", 20);
    /* Trace object */
    put_u8(&o, 5);
    put_u8(&o, 5);
    put_u8(&o, 1);
    put_u32(&o, 4);
    put_u32(&o, 4);
    put_u32(&o, 5);
    put(&o, "Trace", 5);
    put_u8(&o, 6);
    static const int16_t st[8] = {2025, 1, 3, 1, 0, 0, 0, 0};
    put(&o, st, 16);
    put_u64(&o, 1000);
    put_u64(&o, 1000000000);
    put_u32(&o, 8);
    put_u32(&o, 4242);
    put_u32(&o, 8);
    put_u32(&o, 1000000);
    put_u8(&o, 6);

    buf b = {0}, md = {0};
    /* metadata: id 1 = V1 fields, id 2 = V2Params with an array */
    block_header(&b);
    for (uint32_t id = 1; id <= 2; id++) {
        md.n = 0;
        b_u32(&md, id);
        b_str16(&md, "Bench-Provider");
        b_u32(&md, id);
        b_str16(&md, id == 1 ? "MethodThing" : "ArrayThing");
        b_u64(&md, 0x10);
        b_u32(&md, 0);
        b_u32(&md, 4);
        if (id == 1) {
            b_u32(&md, 3);
            b_u32(&md, 12);
            b_str16(&md, "MethodID");
            b_u32(&md, 10);
            b_str16(&md, "MethodSize");
            b_u32(&md, 18);
            b_str16(&md, "MethodName");
        } else {
            b_u32(&md, 0);
            buf t = {0};
            b_u32(&t, 2);
            size_t s0 = t.n;
            b_u32(&t, 0);
            b_str16(&t, "Address");
            b_u32(&t, 12);
            uint32_t fs = (uint32_t)(t.n - s0);
            memcpy(t.p + s0, &fs, 4);
            s0 = t.n;
            b_u32(&t, 0);
            b_str16(&t, "Values");
            b_u32(&t, 19);
            b_u32(&t, 9);
            fs = (uint32_t)(t.n - s0);
            memcpy(t.p + s0, &fs, 4);
            b_u32(&md, (uint32_t)t.n);
            uint8_t kind = 2;
            b_put(&md, &kind, 1);
            b_put(&md, t.p, t.n);
            free(t.p);
        }
        uint8_t flags = 0x80 | 0x40 | (id == 1 ? 0x01 | 0x02 | 0x04 : 0);
        b_put(&b, &flags, 1);
        if (id == 1) {
            b_var(&b, 0);
            b_var(&b, 0); /* seq delta */
            b_var(&b, 0); /* capture thread */
            b_var(&b, 0xFFFFFFFF);
            b_var(&b, 1234);
        }
        b_var(&b, 1); /* timestamp delta */
        b_var(&b, md.n);
        b_put(&b, md.p, md.n);
    }
    block(&o, "MetadataBlock", b.p, b.n);

    uint64_t ts = 1000, events = 0;
    uint32_t seq[4] = {0, 0, 0, 0};
    uint64_t region_start = o.off;
    uint8_t payload[128];
    int need_stacks = 1;
    while (o.off < target) {
        if (need_stacks) {
            /* stack ids 1..8: 1 empty, others 1..7 frames */
            b.n = 0;
            b_u32(&b, 1);
            b_u32(&b, 8);
            for (uint32_t s = 0; s < 8; s++) {
                b_u32(&b, s * 8);
                for (uint32_t k = 0; k < s; k++)
                    b_u64(&b, UINT64_C(0x7f0012340000) + 16 * k + s);
            }
            block(&o, "StackBlock", b.p, b.n);
            need_stacks = 0;
        }
        /* one EventBlock: a run of ~64 KB per capture thread */
        uint32_t t = (uint32_t)(events % 4);
        block_header(&b);
        uint32_t prev_seq = 0, prev_md = 0, prev_stack = 0, prev_size = 0;
        uint64_t prev_ts = 0;
        int first = 1;
        while (b.n < 65000) {
            uint32_t id = (events & 3) == 3 ? 2 : 1;
            size_t pn = 0;
            uint64_t v64 = UINT64_C(0x7ffea93e0000) + events;
            memcpy(payload, &v64, 8);
            pn = 8;
            if (id == 1) {
                uint32_t sz = (uint32_t)(events & 0xFFF);
                memcpy(payload + pn, &sz, 4);
                pn += 4;
                static const char name[] = "GetPointerToFirstInvalidChar";
                size_t len = 8 + (events % 16);
                for (size_t i = 0; i < len; i++) {
                    payload[pn++] = (uint8_t)name[i];
                    payload[pn++] = 0;
                }
                payload[pn++] = 0;
                payload[pn++] = 0;
            } else {
                uint16_t c = 6;
                memcpy(payload + pn, &c, 2);
                pn += 2;
                for (int i = 0; i < 6; i++) {
                    int32_t x = (int32_t)(events * 7 + (uint64_t)i);
                    memcpy(payload + pn, &x, 4);
                    pn += 4;
                }
            }
            uint32_t sid = 1 + (uint32_t)(events % 8);
            uint32_t s = ++seq[t];
            uint8_t flags = 0;
            if (id != prev_md)
                flags |= 0x01;
            if (first || s != prev_seq + 1)
                flags |= 0x02;
            if (first)
                flags |= 0x04 | 0x40;
            if (sid != prev_stack)
                flags |= 0x08;
            if (pn != prev_size)
                flags |= 0x80;
            b_put(&b, &flags, 1);
            if (flags & 0x01)
                b_var(&b, id);
            if (flags & 0x02) {
                b_var(&b, (uint32_t)(s - prev_seq - 1));
                b_var(&b, 1000 + t);
                b_var(&b, t);
            }
            if (flags & 0x04)
                b_var(&b, 1000 + t);
            if (flags & 0x08)
                b_var(&b, sid);
            ts += 1 + (events % 5);
            b_var(&b, ts - prev_ts);
            if (flags & 0x80)
                b_var(&b, pn);
            b_put(&b, payload, pn);
            prev_md = id;
            prev_seq = s;
            prev_stack = sid;
            prev_size = (uint32_t)pn;
            prev_ts = ts;
            first = 0;
            events++;
        }
        block(&o, "EventBlock", b.p, b.n);
        if (o.off - region_start > (10u << 20) || o.off >= target) {
            b.n = 0;
            b_u64(&b, ts);
            b_u32(&b, 4);
            for (uint32_t k = 0; k < 4; k++) {
                b_u64(&b, 1000 + k);
                b_u32(&b, seq[k]);
            }
            block(&o, "SPBlock", b.p, b.n);
            region_start = o.off;
            need_stacks = 1;
        }
    }
    put_u8(&o, 1);
    fclose(o.f);
    free(b.p);
    free(md.p);
    return events;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static long peak_rss_kb(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static int sink_value(void *ctx, const mantra_value *v) {
    uint64_t *h = ctx;
    *h += v->u ^ v->count;
    return 0;
}

static const mantra_field_visitor vis = {sink_value, 0, 0, sink_value, 0};

static int with_providers;
static unsigned reader_flags;

static void pass(const char *path, int decode, uint64_t *events_out, double *secs, uint64_t *bytes) {
    mantra_reader_options o = {reader_flags, 0};
    mantra_reader *r = mantra_reader_new(&o);
#ifdef READER_BENCH_DOTNET
    for (size_t i = 0; with_providers && i < MANTRA_DOTNET_PROVIDER_COUNT; i++)
        mantra_reader_add_provider(r, mantra_dotnet_providers[i]);
#endif
    double t0 = now();
    if (mantra_reader_open_file(r, path) < 0) {
        fprintf(stderr, "%s: %s\n", path, mantra_reader_last_error(r));
        exit(1);
    }
    const mantra_trace_event *ev;
    uint64_t n = 0, h = 0;
    int rc;
    while ((rc = mantra_reader_next(r, &ev)) > 0) {
        h += (uint64_t)ev->timestamp + ev->payload_size + ev->stack_count;
        if (decode)
            mantra_decode_event(ev, &vis, &h);
        n++;
    }
    *secs = now() - t0;
    if (rc < 0) {
        fprintf(stderr, "%s: %s\n", path, mantra_reader_last_error(r));
        exit(1);
    }
    *bytes = mantra_reader_get_stats(r)->bytes_read;
    *events_out = n;
    if (h == 42)
        puts("");
    mantra_reader_free(r);
}

int main(int argc, char **argv) {
    double mb = 1024;
    const char *path = NULL;
    int keep = 0;
    const char *input = NULL, *mode = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
            mb = atof(argv[++i]);
        else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
            path = argv[++i];
        else if (strcmp(argv[i], "-k") == 0)
            keep = 1;
        else if (strcmp(argv[i], "-i") == 0 && i + 1 < argc)
            input = argv[++i];
        else if (strcmp(argv[i], "-m") == 0 && i + 1 < argc)
            mode = argv[++i];
        else if (strcmp(argv[i], "-p") == 0)
            with_providers = 1;
        else if (strcmp(argv[i], "-M") == 0)
            reader_flags |= MANTRA_READER_MAP;
        else {
            fprintf(stderr, "usage: reader_throughput [-s MB] [-o FILE] [-k]\n"
                            "       reader_throughput -i FILE [-m hdr|dec] [-p] [-M]\n");
            return 2;
        }
    }
#ifndef READER_BENCH_DOTNET
    if (with_providers) {
        fprintf(stderr, "reader_throughput: -p needs the build with mantra::dotnet\n");
        return 2;
    }
#endif
    if (input) {
        for (int d = 0; d < 2; d++) {
            if (mode && strcmp(mode, d ? "dec" : "hdr") != 0)
                continue;
            uint64_t n, bytes;
            double s;
            pass(input, d, &n, &s, &bytes);
            printf("%-26s %8.1f MB  %9" PRIu64 " events  %7.3f s  %8.1f MB/s  %11.0f events/s  peak RSS %ld KB\n",
                   d ? "file, decoding" : "file, headers only", (double)bytes / 1048576.0, n, s,
                   (double)bytes / 1048576.0 / s, (double)n / s, peak_rss_kb());
        }
        return 0;
    }
    char def[512], small[600];
    if (path == NULL) {
        const char *tmp = getenv("TMPDIR");
        snprintf(def, sizeof def, "%s/mantra-bench-reader.nettrace", tmp && tmp[0] ? tmp : "/tmp");
        path = def;
    }
    snprintf(small, sizeof small, "%s.small", path);
    uint64_t target = (uint64_t)(mb * 1048576.0);
    double g0 = now();
    uint64_t ev_small = generate(small, target / 8);
    uint64_t ev_big = generate(path, target);
    printf("generated %s: %.1f MB, %" PRIu64 " events (%.1f s); %s: %" PRIu64 " events\n", path,
           (double)target / 1048576.0, ev_big, now() - g0, small, ev_small);

    struct {
        const char *name;
        const char *file;
        int decode;
    } runs[] = {{"1/8 file, headers only", small, 0}, {"1/8 file, decoding", small, 1},
                {"full file, headers only", path, 0}, {"full file, decoding", path, 1}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        uint64_t n, bytes;
        double s;
        pass(runs[i].file, runs[i].decode, &n, &s, &bytes);
        printf("%-26s %8.1f MB  %9" PRIu64 " events  %7.3f s  %8.1f MB/s  %11.0f events/s  peak RSS %ld KB\n",
               runs[i].name, (double)bytes / 1048576.0, n, s, (double)bytes / 1048576.0 / s, (double)n / s,
               peak_rss_kb());
    }
    if (!keep) {
        unlink(path);
        unlink(small);
    }
    return 0;
}
