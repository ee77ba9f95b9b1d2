/* writer_throughput: nettrace writer throughput to a file, against a plain write() of the same bytes
 * in the same run.
 *
 *   writer_throughput [-n EVENTS] [-p PAYLOAD_BYTES] [-r ROUNDS] [-o FILE]
 *
 * Each round: (1) the writer writes EVENTS events (4 threads, stacks from a small set, every 4th
 * without stack) through a file sink to FILE, finish + close included; (2) the bytes of that same
 * trace, produced once into memory beforehand, are written to FILE with write() in 100 KB chunks
 * (the writer's block size), close included. Rounds alternate the two; the median of each is reported
 * and their ratio (writer MB/s / write() MB/s: 1.0 = the writer costs nothing over the I/O).
 * MB = 10^6 bytes. The page cache absorbs the writes (no fsync): this measures CPU cost per byte.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mantra/metadata.h"
#include "mantra/nettrace_writer.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void die(const char *what, int rc, const char *text) {
    fprintf(stderr, "writer_throughput: %s failed (%d): %s\n", what, rc, text);
    exit(1);
}

/* Writes the benchmark trace to sink; returns the bytes written. */
static uint64_t write_trace(mantra_sink *sink, uint64_t events, uint32_t payload_size) {
    mantra_nettrace_options o;
    mantra_nettrace_options_init(&o);
    o.sync_time_unix_ms = INT64_C(1700000000000);
    o.sequence_point_bytes = 10u * 1000 * 1000;
    mantra_nettrace_writer *w;
    int rc = mantra_nettrace_writer_new(&w, sink, &o);
    if (rc)
        die("writer_new", rc, mantra_nettrace_last_error(w));
    mantra_metadata_builder *b;
    mantra_metadata_builder_new(&b);
    mantra_metadata_begin(b, 1, "Bench", 0, 0, 4, 0);
    mantra_metadata_field(b, "Id", MANTRA_TYPE_UINT64);
    mantra_metadata_array(b, "Data", MANTRA_TYPE_BYTE);
    const uint8_t *blob;
    size_t bn;
    mantra_metadata_finish(b, &blob, &bn);
    mantra_nettrace_event_key key;
    if ((rc = mantra_nettrace_add_event_raw(w, "Mantra-Bench", blob, bn, &key)))
        die("add_event_raw", rc, mantra_nettrace_last_error(w));
    uint8_t payload[65536];
    memset(payload, 0xab, sizeof payload);
    uint64_t ips[16][8];
    for (int s = 0; s < 16; s++)
        for (int f = 0; f < 8; f++)
            ips[s][f] = 0x7f0000000000u + (uint64_t)s * 0x1000 + (uint64_t)f * 0x10;
    for (uint64_t i = 0; i < events; i++) {
        memcpy(payload, &i, 8);
        mantra_nettrace_event ev = {.key = key, .timestamp = 1000 + i * 100, .thread_id = 100 + (i & 3),
                                    .processor_number = (uint32_t)(i & 7), .stack = ips[i % 16],
                                    .stack_frames = (i & 3) == 3 ? 0 : 1 + (uint32_t)(i % 8)};
        if ((rc = mantra_nettrace_write(w, &ev, payload, payload_size)))
            die("write", rc, mantra_nettrace_last_error(w));
    }
    if ((rc = mantra_nettrace_finish(w)))
        die("finish", rc, mantra_nettrace_last_error(w));
    mantra_nettrace_stats st;
    mantra_nettrace_get_stats(w, &st);
    mantra_nettrace_writer_free(w);
    mantra_metadata_builder_free(b);
    return st.bytes;
}

int main(int argc, char **argv) {
    uint64_t events = 2000000;
    uint32_t payload_size = 100;
    int rounds = 5;
    const char *path = "/tmp/mantra_writer_throughput.nettrace";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-n"))
            events = (uint64_t)strtod(argv[i + 1], NULL);
        else if (!strcmp(argv[i], "-p"))
            payload_size = (uint32_t)strtoul(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "-r"))
            rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-o"))
            path = argv[i + 1];
        else {
            fprintf(stderr, "usage: writer_throughput [-n EVENTS] [-p PAYLOAD_BYTES] [-r ROUNDS] [-o FILE]\n");
            return 2;
        }
    }
    if (rounds < 1 || rounds > 100 || payload_size < 8 || payload_size > 65536) {
        fprintf(stderr, "writer_throughput: bad arguments\n");
        return 2;
    }
    /* the reference bytes */
    mantra_sink *mem;
    if (mantra_sink_open_memory(&mem, 0))
        return 1;
    uint64_t bytes = write_trace(mem, events, payload_size);
    size_t mem_size;
    const uint8_t *ref = mantra_sink_memory(mem, &mem_size);

    double tw[100], tp[100];
    for (int r = 0; r < rounds; r++) {
        mantra_sink *s;
        double t0 = now_s();
        int rc = mantra_sink_open_file(&s, path);
        if (rc)
            die("open", rc, mantra_sink_last_error(s));
        uint64_t got = write_trace(s, events, payload_size);
        if ((rc = mantra_sink_close(s)))
            die("close", rc, mantra_sink_last_error(s));
        tw[r] = now_s() - t0;
        mantra_sink_free(s);
        if (got != bytes) {
            fprintf(stderr, "writer_throughput: file trace has %llu bytes, memory %llu\n", (unsigned long long)got,
                    (unsigned long long)bytes);
            return 1;
        }

        t0 = now_s();
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (fd < 0) {
            perror(path);
            return 1;
        }
        for (size_t off = 0; off < mem_size;) {
            size_t n = mem_size - off < 102400 ? mem_size - off : 102400;
            ssize_t k = write(fd, ref + off, n);
            if (k <= 0) {
                perror("write");
                return 1;
            }
            off += (size_t)k;
        }
        close(fd);
        tp[r] = now_s() - t0;
    }
    unlink(path);
    qsort(tw, (size_t)rounds, sizeof tw[0], cmp_d);
    qsort(tp, (size_t)rounds, sizeof tp[0], cmp_d);
    double mw = tw[rounds / 2], mp = tp[rounds / 2];
    double mbw = (double)bytes / mw / 1e6, mbp = (double)bytes / mp / 1e6;
    printf("trace: %llu events of %u payload bytes, %.1f MB, %d rounds\n", (unsigned long long)events, payload_size,
           (double)bytes / 1e6, rounds);
    printf("summary: writer_throughput writer to file %.0f MB/s, %.1f M events/s (median; best %.0f MB/s)\n", mbw,
           (double)events / mw / 1e6, (double)bytes / tw[0] / 1e6);
    printf("summary: writer_throughput plain write() of the same bytes %.0f MB/s (median; best %.0f MB/s)\n", mbp,
           (double)bytes / tp[0] / 1e6);
    printf("summary: writer_throughput ratio writer / write() %.2f\n", mbw / mbp);
    mantra_sink_free(mem);
    return 0;
}
