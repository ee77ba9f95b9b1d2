/* mantra/sink.h: memory, fixed buffer, file, fd (pipe) and callback sinks; I/O errors reported and
 * counted, in the sink and through the nettrace writer. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "format/walk.h"
#include "mantra/metadata.h"
#include "mantra/nettrace_writer.h"
#include "mantra/sink.h"
#include "platform/platform-internal.h"

static char g_dir[4096];

static void make_dir(void) {
    const char *b = getenv("MANTRA_BINARY_DIR");
    snprintf(g_dir, sizeof g_dir, "%s/format", b ? b : "/tmp");
    mkdir(g_dir, 0777);
    snprintf(g_dir, sizeof g_dir, "%s/format/test_sink", b ? b : "/tmp");
    mkdir(g_dir, 0777);
}

static uint8_t *read_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *d = malloc((size_t)len + 1);
    ck_assert_uint_eq(fread(d, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return d;
}

START_TEST(memory_sink_grows) {
    mantra_sink *s;
    ck_assert_int_eq(mantra_sink_open_memory(&s, 16), 0);
    uint8_t chunk[37];
    for (int i = 0; i < 100; i++) {
        memset(chunk, i, sizeof chunk);
        ck_assert_int_eq(mantra_sink_write(s, chunk, sizeof chunk), 0);
    }
    ck_assert_int_eq(mantra_sink_write(s, NULL, 0), 0);
    size_t n;
    const uint8_t *d = mantra_sink_memory(s, &n);
    ck_assert_uint_eq(n, 3700);
    ck_assert_uint_eq(mantra_sink_bytes_written(s), 3700);
    for (size_t i = 0; i < n; i++)
        ck_assert_uint_eq(d[i], i / 37);
    ck_assert_int_eq(mantra_sink_flush(s), 0);
    ck_assert_int_eq(mantra_sink_close(s), 0);
    ck_assert_int_eq(mantra_sink_close(s), 0);
    ck_assert_int_eq(mantra_sink_write(s, chunk, 1), MANTRA_ESTATE);
    ck_assert_str_eq(mantra_sink_last_error(s), "write after close");
    d = mantra_sink_memory(s, &n); /* still readable after close */
    ck_assert_uint_eq(n, 3700);
    mantra_sink_free(s);
}
END_TEST

START_TEST(fixed_buffer_refuses_whole_writes) {
    uint8_t buf[10];
    mantra_sink *s;
    ck_assert_int_eq(mantra_sink_open_buffer(&s, buf, sizeof buf), 0);
    ck_assert_int_eq(mantra_sink_write(s, "abcdef", 6), 0);
    ck_assert_int_eq(mantra_sink_write(s, "ghijk", 5), MANTRA_ENOSPC);
    ck_assert_str_eq(mantra_sink_last_error(s), "buffer sink full: 5 bytes do not fit in the 4 left");
    ck_assert_uint_eq(mantra_sink_bytes_written(s), 6);
    ck_assert_uint_eq(mantra_sink_error_count(s), 1);
    ck_assert_int_eq(mantra_sink_write(s, "ghij", 4), 0);
    size_t n;
    ck_assert_ptr_eq(mantra_sink_memory(s, &n), buf);
    ck_assert_uint_eq(n, 10);
    ck_assert_mem_eq(buf, "abcdefghij", 10);
    mantra_sink_free(s);
}
END_TEST

START_TEST(file_sink_truncates) {
    make_dir();
    char path[4200];
    snprintf(path, sizeof path, "%s/trunc.bin", g_dir);
    FILE *f = fopen(path, "wb");
    fputs("a longer previous content", f);
    fclose(f);
    mantra_sink *s;
    ck_assert_int_eq(mantra_sink_open_file(&s, path), 0);
    ck_assert_int_eq(mantra_sink_write(s, "new", 3), 0);
    ck_assert_int_eq(mantra_sink_close(s), 0);
    mantra_sink_free(s);
    size_t n;
    uint8_t *d = read_file(path, &n);
    ck_assert_uint_eq(n, 3);
    ck_assert_mem_eq(d, "new", 3);
    free(d);
}
END_TEST

static uint64_t allocated_bytes(const char *path, uint64_t *size) {
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    *size = (uint64_t)st.st_size;
    return (uint64_t)st.st_blocks * 512u;
}

/* A file sink allocates the file's blocks ahead of its writes (without changing the file's size)
 * and gives back what it did not write when it closes. */
START_TEST(file_sink_reserves_ahead_and_gives_back) {
    make_dir();
    char path[4200], probe[4200];
    snprintf(probe, sizeof probe, "%s/reserve-probe.bin", g_dir);
    int fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(fd, 0);
    int can = mantra_pal_file_reserve(fd, 0, 4096) == 0;
    close(fd);
    unlink(probe);
    if (!can)
        fprintf(stderr, "test_sink: this file system does not allocate ahead (fallocate): only the sizes are checked\n");
    snprintf(path, sizeof path, "%s/reserve.bin", g_dir);
    mantra_sink *s;
    ck_assert_int_eq(mantra_sink_open_file(&s, path), 0);
    static uint8_t chunk[64 * 1024];
    memset(chunk, 0x5a, sizeof chunk);
    uint64_t size, alloc;
    for (int i = 0; i < 48; i++) { /* 3 MB */
        ck_assert_int_eq(mantra_sink_write(s, chunk, sizeof chunk), 0);
        alloc = allocated_bytes(path, &size);
        ck_assert_uint_eq(size, (uint64_t)(i + 1) * sizeof chunk); /* the size is what was written */
        /* the first write allocates a MB past itself, the next 16 stay inside it (17 x 64 KB), the
         * 18th allocates past itself as much as the file holds (over a MB) */
        if (can)
            ck_assert_uint_ge(alloc, i == 0 || i == 17 ? size + (1u << 20) + (i == 17 ? 64u * 1024u : 0u) : size);
    }
    ck_assert_int_eq(mantra_sink_close(s), 0);
    ck_assert_uint_eq(mantra_sink_error_count(s), 0);
    mantra_sink_free(s);
    alloc = allocated_bytes(path, &size);
    ck_assert_uint_eq(size, 48u * sizeof chunk);
    ck_assert_uint_le(alloc, size + 64u * 1024u); /* what was allocated past the end is given back */
    unlink(path);
}
END_TEST

START_TEST(file_sink_open_failure) {
    mantra_sink *s;
    ck_assert_int_eq(mantra_sink_open_file(&s, "/nonexistent-dir-mantra/x.nettrace"), MANTRA_EIO);
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(mantra_sink_last_error(s),
                     "cannot create /nonexistent-dir-mantra/x.nettrace: No such file or directory");
    ck_assert_int_eq(mantra_sink_write(s, "x", 1), MANTRA_EIO);
    ck_assert_uint_eq(mantra_sink_error_count(s), 1);
    mantra_sink_free(s);
    ck_assert_int_eq(mantra_sink_open_file(&s, NULL), MANTRA_EINVAL);
    ck_assert_ptr_null(s);
}
END_TEST

START_TEST(dev_full_reports_enospc) {
    mantra_sink *s;
    ck_assert_int_eq(mantra_sink_open_file(&s, "/dev/full"), 0);
    ck_assert_int_eq(mantra_sink_write(s, "abc", 3), MANTRA_EIO);
    ck_assert_str_eq(mantra_sink_last_error(s), "write: No space left on device (after 0 bytes)");
    ck_assert_uint_eq(mantra_sink_error_count(s), 1);
    ck_assert_uint_eq(mantra_sink_bytes_written(s), 0);
    ck_assert_int_eq(mantra_sink_write(s, "abc", 3), MANTRA_EIO); /* sticky, not retried */
    ck_assert_uint_eq(mantra_sink_error_count(s), 1);
    mantra_sink_free(s);

    /* through the writer: creation fails on the Trace object, the error is kept and counted */
    ck_assert_int_eq(mantra_sink_open_file(&s, "/dev/full"), 0);
    mantra_nettrace_writer *w;
    ck_assert_int_eq(mantra_nettrace_writer_new(&w, s, NULL), MANTRA_EIO);
    ck_assert_ptr_nonnull(w);
    ck_assert_str_eq(mantra_nettrace_last_error(w), "output error: write: No space left on device (after 0 bytes)");
    mantra_nettrace_stats st;
    mantra_nettrace_get_stats(w, &st);
    ck_assert_uint_eq(st.io_errors, 1);
    ck_assert_int_eq(mantra_nettrace_finish(w), MANTRA_EIO);
    mantra_nettrace_writer_free(w);
    mantra_sink_free(s);
}
END_TEST

START_TEST(closed_pipe_reports_epipe) {
    signal(SIGPIPE, SIG_IGN);
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    close(p[0]);
    mantra_sink *s;
    ck_assert_int_eq(mantra_sink_open_fd(&s, p[1], 1), 0);
    mantra_nettrace_writer *w;
    ck_assert_int_eq(mantra_nettrace_writer_new(&w, s, NULL), MANTRA_EIO);
    ck_assert_str_eq(mantra_nettrace_last_error(w), "output error: write: Broken pipe (after 0 bytes)");
    ck_assert_uint_eq(mantra_sink_error_count(s), 1);
    mantra_nettrace_writer_free(w);
    mantra_sink_free(s); /* closes p[1] */
    ck_assert_int_eq(mantra_sink_open_fd(&s, -1, 0), MANTRA_EINVAL);
}
END_TEST

/* A deterministic trace of ~400 KB with stacks, several threads and sequence points. */
static void write_trace(mantra_sink *s) {
    mantra_nettrace_options o;
    mantra_nettrace_options_init(&o);
    o.sync_time_unix_ms = INT64_C(1700000000000);
    o.process_id = 1;
    o.processor_count = 2;
    o.pointer_size = 8;
    o.sequence_point_bytes = 100000;
    mantra_nettrace_writer *w;
    ck_assert_int_eq(mantra_nettrace_writer_new(&w, s, &o), 0);
    mantra_metadata_builder *b;
    ck_assert_int_eq(mantra_metadata_builder_new(&b), 0);
    ck_assert_int_eq(mantra_metadata_begin(b, 9, "Blob", 0, 0, 4, 0), 0);
    ck_assert_int_eq(mantra_metadata_array(b, "Data", MANTRA_TYPE_BYTE), 0);
    const uint8_t *blob;
    size_t bn;
    ck_assert_int_eq(mantra_metadata_finish(b, &blob, &bn), 0);
    mantra_nettrace_event_key k;
    ck_assert_int_eq(mantra_nettrace_add_event_raw(w, "Mantra-Test-Sink", blob, bn, &k), 0);
    uint8_t payload[202];
    uint64_t ips[4];
    for (uint32_t i = 0; i < 2000; i++) {
        payload[0] = 200;
        payload[1] = 0;
        for (int j = 2; j < 202; j++)
            payload[j] = (uint8_t)(i + (uint32_t)j);
        for (int j = 0; j < 4; j++)
            ips[j] = 0x400000u + (i % 7) * 16u + (uint64_t)j;
        mantra_nettrace_event ev = {.key = k, .timestamp = 1000u + i, .thread_id = 10 + i % 5, .stack = ips,
                                    .stack_frames = i % 3};
        ck_assert_int_eq(mantra_nettrace_write(w, &ev, payload, sizeof payload), 0);
    }
    ck_assert_int_eq(mantra_nettrace_finish(w), 0);
    mantra_nettrace_writer_free(w);
    mantra_metadata_builder_free(b);
}

typedef struct drain {
    int fd;
    uint8_t *data;
    size_t len, cap;
} drain;

static void *drain_main(void *arg) {
    drain *d = arg;
    for (;;) {
        if (d->len == d->cap) {
            d->cap = d->cap ? d->cap * 2 : 65536;
            d->data = realloc(d->data, d->cap);
        }
        size_t want = d->cap - d->len;
        if (want > 3000)
            want = 3000; /* small reads: the writer meets a full pipe */
        ssize_t n = read(d->fd, d->data + d->len, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        d->len += (size_t)n;
    }
    return NULL;
}

/* A non-blocking pipe whose reader thread reads 3000 bytes at a time: the sink on its write end
 * (*sink, which closes it) meets short writes and a full pipe (EAGAIN: poll). */
typedef struct slow_pipe {
    int fd[2];
    drain d;
    pthread_t th;
} slow_pipe;

static void slow_pipe_open(slow_pipe *p, mantra_sink **sink) {
    ck_assert_int_eq(pipe(p->fd), 0);
    ck_assert_int_eq(fcntl(p->fd[1], F_SETFL, O_NONBLOCK), 0);
    p->d = (drain){p->fd[0], NULL, 0, 0};
    ck_assert_int_eq(pthread_create(&p->th, NULL, drain_main, &p->d), 0);
    ck_assert_int_eq(mantra_sink_open_fd(sink, p->fd[1], 1), 0);
}

/* After the sink is freed (the write end closed): what the reader got, in p->d (free data). */
static void slow_pipe_join(slow_pipe *p) {
    pthread_join(p->th, NULL);
    close(p->fd[0]);
}

static int cb_write(void *ctx, const void *data, size_t size, char *err, size_t errlen) {
    (void)err;
    (void)errlen;
    drain *d = ctx;
    if (d->len + size > d->cap) {
        d->cap = (d->len + size) * 2;
        d->data = realloc(d->data, d->cap);
    }
    memcpy(d->data + d->len, data, size);
    d->len += size;
    return 0;
}

/* 300 parts of 0..2999 bytes (every 7th empty, one of those with NULL data) and one of 200000 (a
 * pipe's writev(2) stops inside it several times): 565 KB, more parts than one call takes. */
#define NPARTS 300u
static size_t make_parts(mantra_sink_part *parts, uint8_t *bytes) {
    size_t off = 0;
    for (uint32_t i = 0; i < NPARTS; i++) {
        size_t n = i == 150u ? 200000u : i % 7u == 0 ? 0 : (i * 37u) % 3000u;
        for (size_t j = 0; j < n; j++)
            bytes[off + j] = (uint8_t)(i * 13u + j);
        parts[i] = (mantra_sink_part){i == 14u ? NULL : bytes + off, n};
        off += n;
    }
    return off;
}

START_TEST(parts_write_as_one_write) {
    make_dir();
    static mantra_sink_part parts[NPARTS];
    static uint8_t bytes[NPARTS * 3000u + 200000u];
    size_t total = make_parts(parts, bytes);
    ck_assert_uint_eq(total, 564023);
    mantra_sink *s;
    /* memory */
    ck_assert_int_eq(mantra_sink_open_memory(&s, 0), 0);
    ck_assert_int_eq(mantra_sink_write(s, "<", 1), 0);
    ck_assert_int_eq(mantra_sink_write_parts(s, parts, NPARTS), 0);
    size_t n;
    const uint8_t *m = mantra_sink_memory(s, &n);
    ck_assert_uint_eq(n, total + 1);
    ck_assert_uint_eq(mantra_sink_bytes_written(s), total + 1);
    ck_assert_int_eq(memcmp(m + 1, bytes, total), 0);
    /* all or none: a memory sink that cannot grow enough takes none of the parts */
    mantra_sink_part huge[2] = {{"cd", 2}, {bytes, SIZE_MAX / 2 + 1}};
    ck_assert_int_eq(mantra_sink_write_parts(s, huge, 2), MANTRA_ENOMEM);
    ck_assert_uint_eq(mantra_sink_bytes_written(s), total + 1);
    ck_assert_int_eq(mantra_sink_write(s, "!", 1), 0); /* not sticky */
    m = mantra_sink_memory(s, &n);
    ck_assert_uint_eq(n, total + 2);
    ck_assert_uint_eq(m[total + 1], '!');
    mantra_sink_free(s);
    /* a fixed buffer: all of the parts or none */
    uint8_t *fixed = malloc(total);
    ck_assert_int_eq(mantra_sink_open_buffer(&s, fixed, total), 0);
    ck_assert_int_eq(mantra_sink_write(s, "x", 1), 0);
    ck_assert_int_eq(mantra_sink_write_parts(s, parts, NPARTS), MANTRA_ENOSPC);
    ck_assert_uint_eq(mantra_sink_bytes_written(s), 1);
    mantra_sink_free(s);
    ck_assert_int_eq(mantra_sink_open_buffer(&s, fixed, total), 0);
    ck_assert_int_eq(mantra_sink_write_parts(s, parts, NPARTS), 0);
    ck_assert_int_eq(memcmp(fixed, bytes, total), 0);
    mantra_sink_free(s);
    free(fixed);
    /* a file */
    char path[4200];
    snprintf(path, sizeof path, "%s/parts.bin", g_dir);
    ck_assert_int_eq(mantra_sink_open_file(&s, path), 0);
    ck_assert_int_eq(mantra_sink_write_parts(s, parts, NPARTS), 0);
    ck_assert_int_eq(mantra_sink_write_parts(s, parts, 3), 0); /* 0 + 37 + 74 bytes */
    ck_assert_uint_eq(mantra_sink_bytes_written(s), total + 111);
    ck_assert_int_eq(mantra_sink_close(s), 0);
    mantra_sink_free(s);
    uint8_t *f = read_file(path, &n);
    ck_assert_uint_eq(n, total + 111);
    ck_assert_int_eq(memcmp(f, bytes, total), 0);
    ck_assert_int_eq(memcmp(f + total, bytes, 111), 0);
    free(f);
    unlink(path);
    /* a slow pipe: writev(2) stops inside parts (the 200000-byte one several times), waits for
     * room, and the rest follows */
    slow_pipe sp;
    slow_pipe_open(&sp, &s);
    ck_assert_int_eq(mantra_sink_write_parts(s, parts, NPARTS), 0);
    ck_assert_uint_eq(mantra_sink_bytes_written(s), total);
    mantra_sink_free(s);
    slow_pipe_join(&sp);
    ck_assert_uint_eq(sp.d.len, total);
    ck_assert_int_eq(memcmp(sp.d.data, bytes, total), 0);
    free(sp.d.data);
    /* callbacks: one write per non-empty part */
    drain c = {-1, NULL, 0, 0};
    mantra_sink_callbacks cb = {cb_write, NULL, NULL};
    ck_assert_int_eq(mantra_sink_open_callbacks(&s, &cb, &c), 0);
    ck_assert_int_eq(mantra_sink_write_parts(s, parts, NPARTS), 0);
    ck_assert_uint_eq(c.len, total);
    ck_assert_int_eq(memcmp(c.data, bytes, total), 0);
    free(c.data);
    /* bad parts: refused before anything is written */
    mantra_sink_part bad[2] = {{"ab", 2}, {NULL, 3}};
    ck_assert_int_eq(mantra_sink_write_parts(s, bad, 2), MANTRA_EINVAL);
    ck_assert_str_eq(mantra_sink_last_error(s), "write of 3 bytes from NULL (part 1)");
    ck_assert_int_eq(mantra_sink_write_parts(s, NULL, 1), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_sink_write_parts(s, NULL, 0), 0);
    ck_assert_uint_eq(mantra_sink_bytes_written(s), total);
    mantra_sink_free(s);
}
END_TEST

START_TEST(all_sinks_write_identical_bytes) {
    make_dir();
    /* memory */
    mantra_sink *s;
    ck_assert_int_eq(mantra_sink_open_memory(&s, 0), 0);
    write_trace(s);
    size_t n;
    const uint8_t *mem = mantra_sink_memory(s, &n);
    ck_assert_uint_gt(n, 400000);
    ck_assert_uint_eq(mantra_sink_bytes_written(s), n);
    tw_trace t = tw_walk(mem, n, 0);
    ck_assert_ptr_null(t.error);
    ck_assert_uint_ge(tw_count(&t, "SPBlock"), 4);
    ck_assert_uint_ge(tw_count(&t, "EventBlock"), 4);
    free(t.blocks);

    /* fixed buffer */
    uint8_t *fixed = malloc(n);
    mantra_sink *sf;
    ck_assert_int_eq(mantra_sink_open_buffer(&sf, fixed, n), 0);
    write_trace(sf);
    ck_assert_uint_eq(mantra_sink_bytes_written(sf), n);
    ck_assert_mem_eq(fixed, mem, n);
    mantra_sink_free(sf);
    free(fixed);

    /* file */
    char path[4200];
    snprintf(path, sizeof path, "%s/identical.nettrace", g_dir);
    ck_assert_int_eq(mantra_sink_open_file(&sf, path), 0);
    write_trace(sf);
    ck_assert_int_eq(mantra_sink_close(sf), 0);
    mantra_sink_free(sf);
    size_t fn;
    uint8_t *fd_bytes = read_file(path, &fn);
    ck_assert_uint_eq(fn, n);
    ck_assert_mem_eq(fd_bytes, mem, n);
    free(fd_bytes);

    /* non-blocking pipe with a slow reader: short writes and EAGAIN */
    slow_pipe sp;
    slow_pipe_open(&sp, &sf);
    write_trace(sf);
    ck_assert_int_eq(mantra_sink_close(sf), 0);
    mantra_sink_free(sf);
    slow_pipe_join(&sp);
    ck_assert_uint_eq(sp.d.len, n);
    ck_assert_mem_eq(sp.d.data, mem, n);
    free(sp.d.data);

    /* callbacks */
    drain c = {-1, NULL, 0, 0};
    const mantra_sink_callbacks cb = {cb_write, NULL, NULL};
    ck_assert_int_eq(mantra_sink_open_callbacks(&sf, &cb, &c), 0);
    write_trace(sf);
    mantra_sink_free(sf);
    ck_assert_uint_eq(c.len, n);
    ck_assert_mem_eq(c.data, mem, n);
    free(c.data);
    mantra_sink_free(s);
}
END_TEST

/* A sink that fails from the k-th write on. */
typedef struct failing {
    int calls, fail_at;
    drain out;
} failing;

static int failing_write(void *ctx, const void *data, size_t size, char *err, size_t errlen) {
    failing *f = ctx;
    if (++f->calls >= f->fail_at) {
        snprintf(err, errlen, "disk on fire");
        return MANTRA_EIO;
    }
    return cb_write(&f->out, data, size, err, errlen);
}

static int failing_flush(void *ctx, char *err, size_t errlen) {
    (void)ctx;
    (void)err;
    (void)errlen;
    return 0;
}

/* 1024-byte blocks of 8 rows (100-byte payloads), 1197 of them per MiB of staging: the 28689th
 * event finishes the 3586th block, after which the third MiB is full and its write fails.
 * Written: Metadata, Stack and 2 x 1197 EventBlocks. */
#define STAGE_FAIL_EVENT 28689u
#define STAGE_FAIL_BLOCKS 3586u
#define STAGE_WRITTEN_OBJECTS (2u + 2u * 1197u)
START_TEST(writer_io_error_keeps_valid_prefix) {
    failing f = {0, 6, {-1, NULL, 0, 0}};
    const mantra_sink_callbacks cb = {failing_write, failing_flush, NULL};
    mantra_sink *s;
    ck_assert_int_eq(mantra_sink_open_callbacks(&s, &cb, &f), 0);
    mantra_nettrace_options o;
    mantra_nettrace_options_init(&o);
    o.block_bytes = 1024;
    mantra_nettrace_writer *w;
    ck_assert_int_eq(mantra_nettrace_writer_new(&w, s, &o), 0);
    mantra_metadata_builder *b;
    ck_assert_int_eq(mantra_metadata_builder_new(&b), 0);
    ck_assert_int_eq(mantra_metadata_begin(b, 1, "E", 0, 0, 4, 0), 0);
    const uint8_t *blob;
    size_t bn;
    ck_assert_int_eq(mantra_metadata_finish(b, &blob, &bn), 0);
    mantra_nettrace_event_key k;
    ck_assert_int_eq(mantra_nettrace_add_event_raw(w, "P", blob, bn, &k), 0);
    uint8_t payload[100] = {0};
    int rc = 0;
    uint32_t i;
    for (i = 0; i < 30000 && rc == 0; i++) {
        mantra_nettrace_event ev = {.key = k, .timestamp = i, .thread_id = 1};
        rc = mantra_nettrace_write(w, &ev, payload, sizeof payload);
    }
    /* writes: 1 Trace, 2 Metadata, 3 Stack, 4 and 5 a MiB of staged EventBlocks each
     * (NW_STAGE_BYTES), 6 the next MiB fails, at the event whose block no longer fits behind it */
    ck_assert_int_eq(rc, MANTRA_EIO);
    ck_assert_int_eq(f.calls, 6);
    ck_assert_uint_eq(i, STAGE_FAIL_EVENT);
    ck_assert_str_eq(mantra_nettrace_last_error(w), "output error: disk on fire");
    mantra_nettrace_stats st;
    mantra_nettrace_get_stats(w, &st);
    ck_assert_uint_eq(st.io_errors, 1);
    ck_assert_uint_eq(st.event_blocks, STAGE_FAIL_BLOCKS); /* staged ones included, written or not */
    ck_assert_uint_eq(st.bytes, f.out.len);
    ck_assert_uint_eq(mantra_sink_error_count(s), 1);
    /* sticky: nothing more reaches the sink */
    mantra_nettrace_event ev = {.key = k, .timestamp = 5000, .thread_id = 1};
    ck_assert_int_eq(mantra_nettrace_write(w, &ev, payload, 1), MANTRA_EIO);
    ck_assert_int_eq(mantra_nettrace_sequence_point(w), MANTRA_EIO);
    ck_assert_int_eq(mantra_nettrace_flush(w), MANTRA_EIO);
    ck_assert_int_eq(mantra_nettrace_finish(w), MANTRA_EIO);
    ck_assert_int_eq(f.calls, 6);
    /* what was written is a valid prefix made of whole objects */
    tw_trace t = tw_walk(f.out.data, f.out.len, 1);
    ck_assert_ptr_null(t.error);
    ck_assert(!t.end_tag);
    ck_assert_uint_eq(t.count, STAGE_WRITTEN_OBJECTS);
    ck_assert_uint_eq(t.blocks[t.count - 1].content_offset + t.blocks[t.count - 1].size + 1, f.out.len);
    free(t.blocks);
    free(f.out.data);
    mantra_nettrace_writer_free(w);
    mantra_sink_free(s);
    mantra_metadata_builder_free(b);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("sink");
    TCase *tc = tcase_create("sink");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, memory_sink_grows);
    tcase_add_test(tc, fixed_buffer_refuses_whole_writes);
    tcase_add_test(tc, file_sink_truncates);
    tcase_add_test(tc, file_sink_reserves_ahead_and_gives_back);
    tcase_add_test(tc, file_sink_open_failure);
    tcase_add_test(tc, dev_full_reports_enospc);
    tcase_add_test(tc, closed_pipe_reports_epipe);
    tcase_add_test(tc, all_sinks_write_identical_bytes);
    tcase_add_test(tc, parts_write_as_one_write);
    tcase_add_test(tc, writer_io_error_keeps_valid_prefix);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
