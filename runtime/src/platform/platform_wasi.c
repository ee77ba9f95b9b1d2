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
