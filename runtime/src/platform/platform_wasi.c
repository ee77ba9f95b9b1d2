/* WASI (wasm32-wasi, preview 1) implementation of the platform layer (platform-internal.h) for
 * the threadless build: one thread, so mutexes and condition variables have nothing to guard and
 * thread creation is refused; clocks through clock_gettime (WASI clock_time_get); the command line
 * through args_get. Built instead of platform_posix.c when CMAKE_SYSTEM_NAME is WASI
 * (cmake/wasm32-wasi.cmake); files and descriptors stay in platform_io_posix.c, which wasi-libc
 * serves. Facts: the WASI preview 1 interface (WebAssembly/WASI, legacy/preview1/witx/
 * wasi_snapshot_preview1.witx: clock_time_get, args_sizes_get, args_get). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#ifndef MANTRA_THREADLESS
#error "the WASI platform layer is single-threaded: build with MANTRA_THREADLESS=1"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wasi/api.h>

#include "mantra/status.h"
#include "platform-internal.h"

int mantra_pal_mutex_init(mantra_pal_mutex *m) {
    memset(m, 0, sizeof *m);
    return MANTRA_OK;
}
void mantra_pal_mutex_destroy(mantra_pal_mutex *m) { (void)m; }
void mantra_pal_mutex_lock(mantra_pal_mutex *m) { (void)m; }
void mantra_pal_mutex_unlock(mantra_pal_mutex *m) { (void)m; }

int mantra_pal_cond_init(mantra_pal_cond *c) {
    memset(c, 0, sizeof *c);
    return MANTRA_OK;
}
void mantra_pal_cond_destroy(mantra_pal_cond *c) { (void)c; }
void mantra_pal_cond_signal(mantra_pal_cond *c) { (void)c; }
void mantra_pal_cond_broadcast(mantra_pal_cond *c) { (void)c; }
/* Nobody else can signal: return at once (callers loop on their own condition). */
void mantra_pal_cond_timedwait(mantra_pal_cond *c, mantra_pal_mutex *m, uint32_t timeout_ms) {
    (void)c;
    (void)m;
    (void)timeout_ms;
}

int mantra_pal_thread_start(mantra_pal_thread *t, mantra_pal_thread_fn fn, void *arg) {
    (void)t;
    (void)fn;
    (void)arg;
    return MANTRA_EUNSUPPORTED;
}
void mantra_pal_thread_join(mantra_pal_thread *t) { (void)t; }

/* Linear memory is already committed when it grows: zeroed heap memory is all there is. */
void *mantra_pal_alloc_buffer(size_t size) { return calloc(1, size); }
/* A heap block cannot be freed in pieces: buffers are allocated one by one. */
void *mantra_pal_reserve_region(size_t size) {
    (void)size;
    return NULL;
}
void mantra_pal_populate(void *p, size_t size) {
    (void)p;
    (void)size;
}
void mantra_pal_free_buffer(void *p, size_t size) {
    (void)size;
    free(p);
}

/* No file mappings under WASI: the reader reads its input with mantra_pal_read. */
const void *mantra_pal_map_file(int fd, size_t size) {
    (void)fd;
    (void)size;
    return NULL;
}
uint32_t mantra_pal_elf_machine(void) {
    return 0; /* EM_NONE: no perf under WASI */
}
const void *mantra_pal_map_exec_marker(int fd) {
    (void)fd;
    return NULL;
}
const void *mantra_pal_map_file_at(int fd, size_t size, const void *hint) {
    (void)fd;
    (void)size;
    (void)hint;
    return NULL;
}
void mantra_pal_map_done(const void *p, size_t size) {
    (void)p;
    (void)size;
}
void mantra_pal_map_prefetch(const void *p, size_t size) {
    (void)p;
    (void)size;
}
void mantra_pal_unmap_file(const void *p, size_t size) {
    (void)p;
    (void)size;
}
size_t mantra_pal_page_size(void) { return 4096; }

/* The one thread is the process: its exit is the process's exit, where nothing runs per thread
 * (as for the main thread under POSIX). */
int mantra_pal_on_thread_exit(void (*fn)(void *), void *value) {
    (void)fn;
    (void)value;
    return MANTRA_OK;
}
void mantra_pal_yield(void) {}
uint64_t mantra_pal_monotonic_ns(void) { return mantra_pal_now_ns(); }
int mantra_pal_tsc_invariant(void) { return 0; }
void mantra_pal_kernel_clocksource(char *out, size_t size) {
    if (size)
        out[0] = 0;
}
int mantra_pal_single_threaded(void) { return 1; }
uint32_t mantra_pal_thread_cpus(uint32_t *cpus, uint32_t max) {
    (void)cpus, (void)max;
    return 0;
}
int mantra_pal_thread_pin(const uint32_t *cpus, uint32_t n) {
    (void)cpus, (void)n;
    return -1;
}
/* Threadless: no other thread to fence against; the callers keep their plain ordering. */
int mantra_pal_heavy_fence_init(void) { return 0; }
int mantra_pal_heavy_fence(void) { return 0; }

uint64_t mantra_pal_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
const char *mantra_pal_clock_name(void) { return "monotonic"; }
int64_t mantra_pal_unix_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t mantra_pal_thread_id(void) { return 1; }
uint32_t mantra_pal_cpu_count(void) { return 1; }
/* WASI has no process ids; traces say 1. */
uint32_t mantra_pal_pid(void) { return 1; }

void mantra_pal_command_line(char *out, size_t size) {
    if (size == 0)
        return;
    out[0] = 0;
    __wasi_size_t argc = 0, bytes = 0;
    if (__wasi_args_sizes_get(&argc, &bytes) != 0 || argc == 0)
        return;
    char **argv = malloc(argc * sizeof *argv);
    char *buf = malloc(bytes);
    if (argv != NULL && buf != NULL && __wasi_args_get((uint8_t **)argv, (uint8_t *)buf) == 0) {
        size_t n = 0;
        for (__wasi_size_t i = 0; i < argc && n + 1 < size; i++) {
            int w = snprintf(out + n, size - n, i ? " %s" : "%s", argv[i]);
            if (w < 0)
                break;
            n += (size_t)w < size - n ? (size_t)w : size - n - 1;
        }
    }
    free(argv);
    free(buf);
}

void mantra_pal_os_info(char *out, size_t size) {
    if (size > 0)
        snprintf(out, size, "WASI preview1");
}
const char *mantra_pal_arch(void) { return "wasm32"; }

const char *mantra_pal_getenv(const char *name) { return getenv(name); }

/* ---- sockets: WASI preview 1 has no socket creation, bind or listen (wasi_snapshot_preview1.witx
 * has only sock_accept/recv/send/shutdown on descriptors the host preopens), so the diagnostics
 * server has no transport here. */
int mantra_pal_sockets_available(void) { return 0; }
static int no_sockets(char *err, size_t errlen) {
    if (err && errlen)
        snprintf(err, errlen, "sockets are not available under WASI preview 1");
    return MANTRA_EUNSUPPORTED;
}
int mantra_pal_unix_listen(const char *path, char *err, size_t errlen) {
    (void)path;
    return no_sockets(err, errlen);
}
int mantra_pal_tcp_listen(const char *host, const char *port, char *err, size_t errlen) {
    (void)host;
    (void)port;
    return no_sockets(err, errlen);
}
int mantra_pal_unix_connect(const char *path, uint32_t timeout_ms, char *err, size_t errlen) {
    (void)path;
    (void)timeout_ms;
    return no_sockets(err, errlen);
}
int mantra_pal_tcp_connect(const char *host, const char *port, uint32_t timeout_ms, char *err, size_t errlen) {
    (void)host;
    (void)port;
    (void)timeout_ms;
    return no_sockets(err, errlen);
}
int mantra_pal_accept(int listen_fd, char *err, size_t errlen) {
    (void)listen_fd;
    return no_sockets(err, errlen);
}
int mantra_pal_peer_trusted(int fd) {
    (void)fd;
    return 0;
}
int64_t mantra_pal_recv(int fd, void *buf, size_t size, char *err, size_t errlen) {
    (void)fd;
    (void)buf;
    (void)size;
    return no_sockets(err, errlen);
}
int mantra_pal_send_all(int fd, const void *data, size_t size, uint32_t timeout_ms, uint64_t *done, char *err,
                        size_t errlen) {
    (void)fd;
    (void)data;
    (void)size;
    (void)timeout_ms;
    (void)done;
    return no_sockets(err, errlen);
}
int mantra_pal_poll(mantra_pal_pollfd *fds, size_t n, uint32_t timeout_ms) {
    (void)fds;
    (void)n;
    (void)timeout_ms;
    return MANTRA_EUNSUPPORTED;
}
int mantra_pal_wake_open(int fds[2]) {
    fds[0] = fds[1] = -1;
    return MANTRA_EUNSUPPORTED;
}
void mantra_pal_wake(int fd) { (void)fd; }
void mantra_pal_wake_clear(int fd) { (void)fd; }
void mantra_pal_socket_shutdown(int fd) { (void)fd; }
int mantra_pal_unlink(const char *path) {
    (void)path;
    return MANTRA_EUNSUPPORTED;
}
int mantra_pal_list_dir(const char *dir, int (*fn)(void *ctx, const char *name), void *ctx) {
    (void)dir;
    (void)fn;
    (void)ctx;
    return MANTRA_EUNSUPPORTED;
}
int64_t mantra_pal_file_mtime_ns(const char *path) {
    (void)path;
    return MANTRA_EUNSUPPORTED;
}
int mantra_pal_process_alive(uint64_t pid) {
    (void)pid;
    return 0;
}
int mantra_pal_file_mode(const char *path) {
    (void)path;
    return MANTRA_EUNSUPPORTED;
}
uint64_t mantra_pal_start_key(void) { return 0; }
void mantra_pal_random(void *out, size_t size) {
    if (__wasi_random_get((uint8_t *)out, size) != 0)
        memset(out, 0x5a, size);
}
const char *mantra_pal_os_name(void) { return "WASI"; }
extern char **environ;
char **mantra_pal_environ(void) { return environ; }
