/* platform-internal.h - the small platform layer of libmantra (DESIGN.md "Platform-specific
 * code ... sits behind one small layer"), in the spirit of EventPipe's ep-rt-* files: threads,
 * mutex and condition variable, the monotonic clock in nanoseconds, the OS thread id, the CPU
 * count, the process id, a few process facts and file descriptors (platform_io_posix.c). Only the *_posix.c files include OS headers; a
 * threadless build or a non-POSIX port replaces that one file. Private: never leaves src/. */
#ifndef MANTRA_PLATFORM_INTERNAL_H
#define MANTRA_PLATFORM_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Opaque storage big enough for the host's objects (checked in platform_posix.c). */
typedef struct mantra_pal_mutex {
    _Alignas(16) unsigned char opaque[64];
} mantra_pal_mutex;
typedef struct mantra_pal_cond {
    _Alignas(16) unsigned char opaque[64];
} mantra_pal_cond;
typedef struct mantra_pal_thread {
    _Alignas(16) unsigned char opaque[16];
} mantra_pal_thread;

typedef void (*mantra_pal_thread_fn)(void *arg);

/* 0 or a negative MANTRA_E* code. */
int mantra_pal_mutex_init(mantra_pal_mutex *m);
void mantra_pal_mutex_destroy(mantra_pal_mutex *m);
void mantra_pal_mutex_lock(mantra_pal_mutex *m);
void mantra_pal_mutex_unlock(mantra_pal_mutex *m);

int mantra_pal_cond_init(mantra_pal_cond *c);
void mantra_pal_cond_destroy(mantra_pal_cond *c);
void mantra_pal_cond_signal(mantra_pal_cond *c);
void mantra_pal_cond_broadcast(mantra_pal_cond *c);
/* Waits (m held) until signalled or timeout_ms elapsed (spurious wake-ups possible). */
void mantra_pal_cond_timedwait(mantra_pal_cond *c, mantra_pal_mutex *m, uint32_t timeout_ms);

/* Starts fn(arg) on a new thread. 0 or a negative MANTRA_E* code. */
int mantra_pal_thread_start(mantra_pal_thread *t, mantra_pal_thread_fn fn, void *arg);
void mantra_pal_thread_join(mantra_pal_thread *t);
/* Memory for session buffers, mapped and populated at once (size is kept by the caller). */
void *mantra_pal_alloc_buffer(size_t size);
void mantra_pal_free_buffer(void *p, size_t size);
/* Memory for several session buffers cut from one mapping (huge pages where the host has them),
 * reserved but not populated: the caller populates each piece with mantra_pal_populate before it
 * uses it. Each piece, starting on a page boundary, is freed on its own with mantra_pal_free_buffer.
 * NULL when the platform cannot (the caller allocates buffer by buffer). */
void *mantra_pal_reserve_region(size_t size);
/* Maps the pages of [p, p + size) of a reserved region now (a write per page: the first one
 * faults each huge page in), so that no write into them faults later. */
void mantra_pal_populate(void *p, size_t size);

/* The asymmetric fence (Linux membarrier(2), MEMBARRIER_CMD_PRIVATE_EXPEDITED): a thread that
 * writes often pairs a plain store with a compiler barrier, and a thread that reads rarely calls
 * mantra_pal_heavy_fence(), which runs a full memory barrier on every thread of the process that is
 * running at that moment (a thread that is not running passed one at its context switch).
 * mantra_pal_heavy_fence_init registers the process for it (once; later calls just answer): 1 when
 * the host has it, else 0 (older kernels, seccomp filters, non-Linux hosts, WASI), and then the
 * callers keep their sequentially consistent stores. mantra_pal_heavy_fence: 1 when done, 0 when
 * not available (the caller fences itself). */
int mantra_pal_heavy_fence_init(void);
int mantra_pal_heavy_fence(void);
/* Calls fn(value) when the calling thread exits (one function for the process; the value is per
 * thread). 0 or MANTRA_ENOMEM. */
int mantra_pal_on_thread_exit(void (*fn)(void *), void *value);
/* Lets other threads run (spin-wait loops). */
void mantra_pal_yield(void);
/* The CPUs the calling thread may run on (Linux sched_getaffinity): their numbers in cpus (at most
 * max of them, ascending) and how many; 0 where the host cannot say (WASI, other hosts). */
uint32_t mantra_pal_thread_cpus(uint32_t *cpus, uint32_t max);
/* Lets the calling thread run on cpus[0..n) only (sched_setaffinity). 0, or -1 where the host
 * cannot (then nothing changed). */
int mantra_pal_thread_pin(const uint32_t *cpus, uint32_t n);

/* Monotonic clock, nanoseconds: the trace clock, 1e9 ticks per second. CLOCK_MONOTONIC, or the
 * invariant TSC scaled to nanoseconds where the kernel's clocksource is the TSC or MANTRA_CLOCK=tsc
 * (MANTRA_CLOCK=monotonic forces CLOCK_MONOTONIC). */
uint64_t mantra_pal_now_ns(void);
/* CLOCK_MONOTONIC in nanoseconds, whatever the trace clock is (mantra/clock.h's costs). */
uint64_t mantra_pal_monotonic_ns(void);
/* 1 where the CPU's TSC is invariant (x86-64 Linux: constant_tsc and nonstop_tsc in
 * /proc/cpuinfo), else 0. */
int mantra_pal_tsc_invariant(void);
/* The kernel's current clocksource ("" where it does not say). */
void mantra_pal_kernel_clocksource(char *out, size_t size);
/* 1 when the process has one thread (Linux: /proc/self/stat), else 0 (or unknown). */
int mantra_pal_single_threaded(void);
/* Field `field` (3 or more, as proc(5) numbers them) of /proc/self/stat as a number; 0 where
 * there is none (not Linux). */
uint64_t mantra_pal_proc_stat_field(int field);
/* The same, inline for the write path: the TSC scaled in place once the clock is chosen, else a
 * call. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
extern struct mantra_pal_tsc {
    /* 0 undecided, 1 monotonic, 2 tsc (ordered reads: RDTSCP), 3 tsc-unordered (RDTSC),
     * 4 tsc (ordered reads: LFENCE then RDTSC, on a CPU without RDTSCP) */
    _Atomic int mode;
    uint64_t tsc_base, ns_base, mult;
} mantra__pal_tsc;
/* The TSC. Ordered (modes 2 and 4) after every earlier load, as Linux's rdtsc_ordered reads it
 * (arch/x86/include/asm/msr.h: RDTSCP where the CPU has it, else LFENCE then RDTSC; the Intel SDM's
 * RDTSC and RDTSCP entries: RDTSCP waits until all previous instructions have executed and
 * previous loads are globally visible). A plain RDTSC (mode 3, MANTRA_CLOCK=tsc-unordered) may run
 * before the load that told this thread another thread had written its event, and stamp the later
 * event earlier (tests/threads/test_interleaved_runs: two writers in lockstep came out of order in
 * 13 of 30 runs with the plain read; clock_gettime, which orders its read, in none). */
static inline uint64_t mantra__pal_rdtsc(int mode) {
    if (mode == 2) {
        unsigned aux;
        return __builtin_ia32_rdtscp(&aux);
    }
    if (mode == 4)
        __builtin_ia32_lfence();
    return __builtin_ia32_rdtsc();
}
/* The ordered read this CPU has: mode 2 (RDTSCP) or 4 (LFENCE then RDTSC); the clock and
 * mantra_clock_describe both read the TSC so. */
int mantra_pal_tsc_ordered_mode(void);
/* The TSC scaled to nanoseconds (valid once mode is 2, 3 or 4). */
static inline uint64_t mantra__pal_tsc_ns(int mode) {
    __extension__ typedef unsigned __int128 mantra_u128;
    return mantra__pal_tsc.ns_base +
           (uint64_t)(((mantra_u128)(mantra__pal_rdtsc(mode) - mantra__pal_tsc.tsc_base) * mantra__pal_tsc.mult) >> 32);
}
static inline uint64_t mantra_pal_now_ns_fast(void) {
    int mode = atomic_load_explicit(&mantra__pal_tsc.mode, memory_order_acquire);
    if (mode >= 2)
        return mantra__pal_tsc_ns(mode);
    return mantra_pal_now_ns();
}
#else
#define mantra_pal_now_ns_fast() mantra_pal_now_ns()
#endif
/* "tsc" or "monotonic": the clock mantra_pal_now_ns uses. */
const char *mantra_pal_clock_name(void);
#define MANTRA_PAL_TICKS_PER_SECOND UINT64_C(1000000000)
/* UTC wall clock, milliseconds since 1970. */
int64_t mantra_pal_unix_ms(void);

/* The calling thread's OS id (Linux: gettid), cached per thread. */
uint64_t mantra_pal_thread_id(void);
uint32_t mantra_pal_cpu_count(void);
uint32_t mantra_pal_pid(void);

/* Process facts for ProcessInfo: the command line (arguments joined by spaces), the OS name and
 * release, the architecture ("x64", "arm64", ...). Each writes a NUL-terminated UTF-8 string
 * into out (truncated to size - 1 bytes). */
void mantra_pal_command_line(char *out, size_t size);
void mantra_pal_os_info(char *out, size_t size);
const char *mantra_pal_arch(void);
/* The host's ELF e_machine (EM_X86_64 62, EM_AARCH64 183, EM_386 3, EM_ARM 40, EM_RISCV 243;
 * 0 elsewhere), for jitdump headers. */
uint32_t mantra_pal_elf_machine(void);
/* Maps the first page of fd read and execute, as the marker perf's `perf inject --jit` looks for in
 * a recording (tools/perf/Documentation/jitdump-specification.txt): the address, or NULL where the
 * host cannot (WASI). Unmap with mantra_pal_unmap_file(p, mantra_pal_page_size()). */
const void *mantra_pal_map_exec_marker(int fd);
/* The value of environment variable name, or NULL when unset (the pointer is the host's). */
const char *mantra_pal_getenv(const char *name);

/* ---- environment values (env_values.c, one file for every port) -------------------------- */
/* The value of name, or NULL when unset or empty. */
const char *mantra_pal_getenv_set(const char *name);
/* s as an unsigned number: one or more digits of base (10, or 16 with a-f and A-F) and nothing
 * else: no sign, blank, 0x prefix or suffix; leading zeros are fine. 0 and the value in *out when it
 * is at most max; MANTRA_EINVAL when s is NULL, empty or has any other character (also after
 * more digits than fit); else MANTRA_ERANGE when it is a number over max (however many digits).
 * *out is set on success only. */
int mantra_pal_parse_uint(const char *s, unsigned base, uint64_t max, uint64_t *out);
/* Environment variable name as a decimal number (mantra_pal_parse_uint) in [0, max]; fallback when
 * unset, empty, not such a number or over max. */
uint32_t mantra_pal_getenv_u32(const char *name, uint32_t max, uint32_t fallback);

/* ---- files and descriptors ----------------------------------------------------------------
 * Descriptors are the host's (POSIX and WASI both have them). Every function that can fail
 * returns a negative MANTRA_E* code and writes the host's reason (NUL-terminated, at most errlen
 * bytes) into err. */

/* Creates or truncates path for writing (close-on-exec). A descriptor >= 0, or MANTRA_EIO. */
int mantra_pal_file_create(const char *path, char *err, size_t errlen);
/* Opens path for reading. A descriptor >= 0, or MANTRA_EIO. */
int mantra_pal_file_open_read(const char *path, char *err, size_t errlen);
/* Writes size bytes: retries on EINTR, waits for the descriptor on EAGAIN, continues after short
 * writes. *done counts the bytes the host accepted, also when it fails. 0 or MANTRA_EIO. */
int mantra_pal_write_all(int fd, const void *data, size_t size, uint64_t *done, char *err, size_t errlen);
/* One piece of a gathered write (mantra_pal_writev_all). */
typedef struct mantra_pal_part {
    const void *data;
    size_t size;
} mantra_pal_part;
/* Writes the parts in order as mantra_pal_write_all would their concatenation, in writev(2) calls:
 * the same retries, waits and counting. 0 or MANTRA_EIO. */
int mantra_pal_writev_all(int fd, const mantra_pal_part *parts, size_t count, uint64_t *done, char *err,
                          size_t errlen);
/* Reads up to size bytes (retries on EINTR): the count (0 at the end of the input) or MANTRA_EIO
 * (also when a non-blocking descriptor has nothing now). */
int64_t mantra_pal_read(int fd, void *buf, size_t size, char *err, size_t errlen);
/* The same, but a non-blocking descriptor (a diagnostics session's socket) is waited for. */
int64_t mantra_pal_read_wait(int fd, void *buf, size_t size, char *err, size_t errlen);
/* Closes fd. 0 or MANTRA_EIO (EINTR counts as closed). */
int mantra_pal_close(int fd, char *err, size_t errlen);
/* 1 and the size in *size when fd is a regular file; else 0. */
int mantra_pal_file_size(int fd, uint64_t *size);
/* Allocates the file's blocks for bytes [off, off + len) without changing its size (Linux
 * fallocate(2), FALLOC_FL_KEEP_SIZE), so that writes into them do not reserve blocks page by page.
 * 0, or -1 where the host or the file cannot (then the writes allocate as they go). */
int mantra_pal_file_reserve(int fd, uint64_t off, uint64_t len);
/* Sets the file's size to size (blocks reserved beyond it are freed). 0 or MANTRA_EIO. */
int mantra_pal_file_trim(int fd, uint64_t size, char *err, size_t errlen);
/* Maps size bytes of fd (a regular file whose offset is 0) read-only, for reading front to back: the
 * address, or NULL when the host cannot or the offset is not 0 (then read with mantra_pal_read;
 * always NULL under WASI). The descriptor's offset is left alone. */
const void *mantra_pal_map_file(int fd, size_t size);
/* Maps all size bytes of fd read-only for random access (precompiled images: executed in place),
 * at hint when that range is free (hint NULL: anywhere; a busy hint: elsewhere). NULL when the host
 * cannot map (always under WASI: read the file instead). Unmap with mantra_pal_unmap_file. */
const void *mantra_pal_map_file_at(int fd, size_t size, const void *hint);
/* Tells the host that bytes p[0..size) of a mapping will not be read again (their pages may leave
 * the process's resident memory; reading them again still works). p is page-aligned. */
void mantra_pal_map_done(const void *p, size_t size);
/* Tells the host that bytes p[0..size) of a mapping will be read soon: their pages are mapped in
 * now, in one call where the host can (fewer page faults). p is page-aligned. */
void mantra_pal_map_prefetch(const void *p, size_t size);
/* Unmaps what mantra_pal_map_file returned. */
void mantra_pal_unmap_file(const void *p, size_t size);
/* The host's page size (4096 under WASI). */
size_t mantra_pal_page_size(void);

/* ---- sockets (platform_socket_posix.c; stubs answering MANTRA_EUNSUPPORTED in platform_wasi.c) ----
 * What the diagnostics server (src/diag) needs, after the .NET runtime's socket PAL (dotnet/runtime,
 * src/native/eventpipe/ds-ipc-pal-socket.c): stream sockets, Unix or TCP, every descriptor
 * non-blocking and close-on-exec. Functions that can fail return a negative MANTRA_E* code and write
 * the host's reason into err (at most errlen bytes); MANTRA_PAL_WOULDBLOCK means "try again after
 * poll". */
#define MANTRA_PAL_WOULDBLOCK (-100)
#define MANTRA_PAL_POLLIN 1
#define MANTRA_PAL_POLLOUT 2
#define MANTRA_PAL_POLLHUP 4 /* hang-up or error */
typedef struct mantra_pal_pollfd {
    int fd;
    short events;  /* MANTRA_PAL_POLLIN | MANTRA_PAL_POLLOUT */
    short revents; /* set by mantra_pal_poll */
} mantra_pal_pollfd;

/* 1 when this host has sockets, else 0 (WASI preview 1). */
int mantra_pal_sockets_available(void);
/* A listening Unix socket at path (mode 0600 before bind, backlog 255): a descriptor, or MANTRA_EIO
 * (MANTRA_ERANGE when path does not fit sun_path). An existing file at path is not replaced. */
int mantra_pal_unix_listen(const char *path, char *err, size_t errlen);
/* A listening TCP socket on host:port (numeric IPv4/IPv6 or a name; SO_REUSEADDR). */
int mantra_pal_tcp_listen(const char *host, const char *port, char *err, size_t errlen);
/* Connects to a Unix socket path or TCP host:port within timeout_ms: a descriptor or a code. */
int mantra_pal_unix_connect(const char *path, uint32_t timeout_ms, char *err, size_t errlen);
int mantra_pal_tcp_connect(const char *host, const char *port, uint32_t timeout_ms, char *err, size_t errlen);
/* Accepts one connection: a descriptor, MANTRA_PAL_WOULDBLOCK when none is pending, or MANTRA_EIO. */
int mantra_pal_accept(int listen_fd, char *err, size_t errlen);
/* 1 when the peer of a Unix socket runs as this process's effective user or as root (SO_PEERCRED,
 * getpeereid), 0 when not; 1 for TCP sockets and where the OS cannot tell. */
int mantra_pal_peer_trusted(int fd);
/* Reads up to size bytes without waiting: the count, 0 at the end of the stream,
 * MANTRA_PAL_WOULDBLOCK, or MANTRA_EIO. */
int64_t mantra_pal_recv(int fd, void *buf, size_t size, char *err, size_t errlen);
/* Sends size bytes (MSG_NOSIGNAL: a gone peer is MANTRA_EIO, never SIGPIPE), waiting up to
 * timeout_ms for the socket to accept more whenever it is full. *done counts the bytes sent.
 * 0, MANTRA_EIO, or MANTRA_ESTATE when the peer took nothing for timeout_ms. */
int mantra_pal_send_all(int fd, const void *data, size_t size, uint32_t timeout_ms, uint64_t *done, char *err,
                        size_t errlen);
/* Waits up to timeout_ms (0: not at all) for the descriptors: the number ready, or MANTRA_EIO. */
int mantra_pal_poll(mantra_pal_pollfd *fds, size_t n, uint32_t timeout_ms);
/* A wake-up for a thread that waits in mantra_pal_poll: fds[0] to poll for MANTRA_PAL_POLLIN,
 * fds[1] for mantra_pal_wake from another thread (a pipe, both ends non-blocking and close-on-exec).
 * 0, or MANTRA_EIO (MANTRA_EUNSUPPORTED without sockets). */
int mantra_pal_wake_open(int fds[2]);
/* Makes fds[0] readable (one byte; a full pipe is readable already). */
void mantra_pal_wake(int fd);
/* Reads whatever mantra_pal_wake wrote, so that the next poll waits again. */
void mantra_pal_wake_clear(int fd);
/* shutdown(SHUT_RDWR): the peer sees the end of the stream; the descriptor stays open. */
void mantra_pal_socket_shutdown(int fd);
/* Removes a file (the socket path); 0 or MANTRA_EIO. */
int mantra_pal_unlink(const char *path);
/* The permission bits of path (stat), or MANTRA_EIO. */
int mantra_pal_file_mode(const char *path);

/* Calls fn(ctx, name) for each entry of the directory dir but "." and "..", until fn returns non-zero
 * (that value is returned). 0, or MANTRA_EIO when dir cannot be read. */
int mantra_pal_list_dir(const char *dir, int (*fn)(void *ctx, const char *name), void *ctx);
/* The last modification time of path in nanoseconds since the epoch, or MANTRA_EIO. */
int64_t mantra_pal_file_mtime_ns(const char *path);
/* 1 when a process pid runs (a signal 0 reaches it, or only permission is missing), else 0. */
int mantra_pal_process_alive(uint64_t pid);

/* ---- process facts for the diagnostics server ---- */
/* The temporary directory: $TMPDIR, or "/tmp" when unset or empty (no trailing slash added;
 * env_values.c). */
const char *mantra_pal_tmpdir(void);
/* The process start time key of the diagnostics socket name (Linux: field 22 of /proc/self/stat,
 * jiffies since boot; 0 when unknown). */
uint64_t mantra_pal_start_key(void);
/* size random bytes (getrandom, /dev/urandom; the clock mixed in when neither answers). */
void mantra_pal_random(void *out, size_t size);
/* "Linux", "macOS", "WASI", ... as the .NET runtime names the OS (ep-event-source.c). */
const char *mantra_pal_os_name(void);
/* The process environment, NAME=VALUE strings ending in NULL. */
char **mantra_pal_environ(void);

#endif /* MANTRA_PLATFORM_INTERNAL_H */
