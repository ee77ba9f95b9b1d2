/* POSIX implementation of the platform layer (platform-internal.h). */
#define _GNU_SOURCE /* syscall(SYS_gettid) */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif
#if defined(__linux__)
#include <sys/syscall.h>
#if defined(SYS_membarrier) && defined(__has_include)
#if __has_include(<linux/membarrier.h>)
#include <linux/membarrier.h>
#define HAVE_MEMBARRIER 1
#endif
#endif
#endif

#include "mantra/status.h"
#include "platform-internal.h"

_Static_assert(sizeof(pthread_mutex_t) <= sizeof(mantra_pal_mutex), "mutex storage");
_Static_assert(sizeof(pthread_cond_t) <= sizeof(mantra_pal_cond), "cond storage");
_Static_assert(sizeof(pthread_t) + sizeof(void *) <= sizeof(mantra_pal_thread), "thread storage");

#define MTX(m) ((pthread_mutex_t *)(void *)(m)->opaque)
#define CND(c) ((pthread_cond_t *)(void *)(c)->opaque)

int mantra_pal_mutex_init(mantra_pal_mutex *m) {
    return pthread_mutex_init(MTX(m), NULL) == 0 ? MANTRA_OK : MANTRA_ENOMEM;
}
void mantra_pal_mutex_destroy(mantra_pal_mutex *m) { pthread_mutex_destroy(MTX(m)); }
void mantra_pal_mutex_lock(mantra_pal_mutex *m) { pthread_mutex_lock(MTX(m)); }
void mantra_pal_mutex_unlock(mantra_pal_mutex *m) { pthread_mutex_unlock(MTX(m)); }

int mantra_pal_cond_init(mantra_pal_cond *c) {
    pthread_condattr_t a;
    if (pthread_condattr_init(&a) != 0)
        return MANTRA_ENOMEM;
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(CND(c), &a);
    pthread_condattr_destroy(&a);
    return rc == 0 ? MANTRA_OK : MANTRA_ENOMEM;
}
void mantra_pal_cond_destroy(mantra_pal_cond *c) { pthread_cond_destroy(CND(c)); }
void mantra_pal_cond_signal(mantra_pal_cond *c) { pthread_cond_signal(CND(c)); }
void mantra_pal_cond_broadcast(mantra_pal_cond *c) { pthread_cond_broadcast(CND(c)); }
void mantra_pal_cond_timedwait(mantra_pal_cond *c, mantra_pal_mutex *m, uint32_t timeout_ms) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)timeout_ms * 1000000u;
    ts.tv_sec += (time_t)(ns / 1000000000u);
    ts.tv_nsec = (long)(ns % 1000000000u);
    pthread_cond_timedwait(CND(c), MTX(m), &ts);
}

struct start_arg {
    mantra_pal_thread_fn fn;
    void *arg;
};
typedef struct {
    pthread_t th;
} thread_rep;

static void *trampoline(void *p) {
    struct start_arg a = *(struct start_arg *)p;
    free(p);
    a.fn(a.arg);
    return NULL;
}

int mantra_pal_thread_start(mantra_pal_thread *t, mantra_pal_thread_fn fn, void *arg) {
    struct start_arg *a = malloc(sizeof *a);
    if (!a)
        return MANTRA_ENOMEM;
    a->fn = fn;
    a->arg = arg;
    thread_rep *r = (thread_rep *)(void *)t->opaque;
    if (pthread_create(&r->th, NULL, trampoline, a) != 0) {
        free(a);
        return MANTRA_ENOMEM;
    }
    return MANTRA_OK;
}
void mantra_pal_thread_join(mantra_pal_thread *t) { pthread_join(((thread_rep *)(void *)t->opaque)->th, NULL); }

/* Session buffers: anonymous mappings populated up front (MAP_POPULATE), so that the writer does
 * not take a page fault every 4 KB of a fresh buffer (about 13 us each on a paravirtual guest,
 * measured by bench/session_write.c "p_fault"); the kernel maps the whole buffer in one call. */
void *mantra_pal_alloc_buffer(size_t size) {
#if defined(MAP_POPULATE)
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
#else
    return malloc(size);
#endif
}
/* Several session buffers in one mapping (platform-internal.h): 2 MB-aligned and advised for
 * transparent huge pages (madvise(2) MADV_HUGEPAGE; the kernel's default "madvise" mode gives them
 * only to regions that ask), populated piece by piece by the caller (mantra_pal_populate). One 2 MB
 * page fault instead of 512 small ones: on this paravirtual guest a fresh 4 KB page costs more than
 * the 85 events that fill it (bench/session_write.c floor_alloc against floor_thp). The pieces are
 * unmapped one by one (munmap(2) splits a mapping, and a huge page, at any page boundary). */
#define REGION_ALIGN ((size_t)2u << 20)
void *mantra_pal_reserve_region(size_t size) {
#if defined(MAP_POPULATE) && defined(MADV_HUGEPAGE)
    size_t page = mantra_pal_page_size();
    size = (size + page - 1) / page * page;
    if (size == 0 || size > SIZE_MAX - REGION_ALIGN)
        return NULL;
    uint8_t *raw = mmap(NULL, size + REGION_ALIGN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    uint8_t *p = (uint8_t *)(((uintptr_t)raw + REGION_ALIGN - 1) & ~(uintptr_t)(REGION_ALIGN - 1));
    if (p > raw)
        munmap(raw, (size_t)(p - raw));
    if (raw + size + REGION_ALIGN > p + size)
        munmap(p + size, (size_t)(raw + size + REGION_ALIGN - (p + size)));
    (void)madvise(p, size, MADV_HUGEPAGE); /* advice: without it, small pages */
    return p;
#else
    (void)size;
    return NULL;
#endif
}

/* A write per page (one fault per huge page, the other writes hit it). Not
 * madvise(MADV_POPULATE_WRITE): it holds the process's mmap lock while it populates, and the
 * drain thread populates while the program starts its threads (each needs the lock to map its
 * stack): `mantra emit` with one event took 4.5-27 ms to write it, against 0.5-0.9 ms with faults,
 * which the kernel handles under the mapping's own lock (per-VMA locks, Linux 6.4). */
void mantra_pal_populate(void *p, size_t size) {
#if defined(MAP_POPULATE)
    size_t page = mantra_pal_page_size();
    for (size_t off = 0; off < size; off += page)
        ((volatile uint8_t *)p)[off] = 0;
#else
    (void)p;
    (void)size;
#endif
}

/* Read-only file mappings for the reader's input (platform-internal.h). MADV_SEQUENTIAL asks for
 * read-ahead; MADV_DONTNEED on a read-only private file mapping drops pages from the process (they
 * stay in the page cache and come back on the next access), so resident memory does not grow with
 * the file. */
const void *mantra_pal_map_file(int fd, size_t size) {
    if (size == 0 || lseek(fd, 0, SEEK_CUR) != 0)
        return NULL;
    void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED)
        return NULL;
#if defined(MADV_SEQUENTIAL)
    madvise(p, size, MADV_SEQUENTIAL);
#endif
    return p;
}
const void *mantra_pal_map_file_at(int fd, size_t size, const void *hint) {
    if (size == 0)
        return NULL;
    int flags = MAP_PRIVATE;
#if defined(MAP_FIXED_NOREPLACE)
    if (hint != NULL)
        flags |= MAP_FIXED_NOREPLACE; /* Linux 4.17: the hint or failure, never a replaced mapping */
#endif
    void *p = mmap((void *)(uintptr_t)hint, size, PROT_READ, flags, fd, 0);
    if (p == MAP_FAILED && hint != NULL) /* busy (or an older kernel refusing the flag): anywhere */
        p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    return p == MAP_FAILED ? NULL : p;
}
void mantra_pal_map_done(const void *p, size_t size) {
#if defined(MADV_DONTNEED)
    if (size)
        madvise((void *)(uintptr_t)p, size, MADV_DONTNEED);
#else
    (void)p;
    (void)size;
#endif
}
/* MADV_POPULATE_READ (Linux 5.14) fills the page tables of a range in one call: without it every
 * 4 KB page of the mapping costs a page fault on first access (several microseconds each on a
 * paravirtual guest, more than copying the page with read()). Older kernels: read-ahead only. */
#if defined(__linux__) && !defined(MADV_POPULATE_READ)
#define MADV_POPULATE_READ 22
#endif
void mantra_pal_map_prefetch(const void *p, size_t size) {
    if (size == 0)
        return;
#if defined(MADV_POPULATE_READ)
    if (madvise((void *)(uintptr_t)p, size, MADV_POPULATE_READ) == 0)
        return;
#endif
#if defined(MADV_WILLNEED)
    madvise((void *)(uintptr_t)p, size, MADV_WILLNEED);
#endif
}
void mantra_pal_unmap_file(const void *p, size_t size) {
    if (p)
        munmap((void *)(uintptr_t)p, size);
}
size_t mantra_pal_page_size(void) {
    long s = sysconf(_SC_PAGESIZE);
    return s > 0 ? (size_t)s : 4096;
}

void mantra_pal_free_buffer(void *p, size_t size) {
    if (!p)
        return;
#if defined(MAP_POPULATE)
    munmap(p, size);
#else
    (void)size;
    free(p);
#endif
}

/* membarrier(2): registration once per process (MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED must
 * precede MEMBARRIER_CMD_PRIVATE_EXPEDITED, which then sends an IPI to every CPU running a thread
 * of this process; a few microseconds on this guest, for the drain and the stop only). */
static _Atomic int g_heavy_fence; /* 0 unknown, 1 registered, -1 unavailable */
int mantra_pal_heavy_fence_init(void) {
    int v = atomic_load_explicit(&g_heavy_fence, memory_order_acquire);
    if (v != 0)
        return v > 0;
#if defined(HAVE_MEMBARRIER)
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0);
    v = cmds >= 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
                syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0) == 0
            ? 1
            : -1;
#else
    v = -1;
#endif
    atomic_store_explicit(&g_heavy_fence, v, memory_order_release);
    return v > 0;
}
int mantra_pal_heavy_fence(void) {
#if defined(HAVE_MEMBARRIER)
    if (atomic_load_explicit(&g_heavy_fence, memory_order_acquire) > 0 &&
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0) == 0)
        return 1;
#endif
    return 0;
}

/* One process-wide key whose destructor calls the registered function with the thread's value. */
static pthread_key_t g_exit_key;
static pthread_once_t g_exit_once = PTHREAD_ONCE_INIT;
static void (*_Atomic g_exit_fn)(void *);
static int g_exit_ok;
static void exit_dtor(void *v) {
    void (*fn)(void *) = atomic_load(&g_exit_fn);
    if (v && fn)
        fn(v);
}
static void exit_key_init(void) { g_exit_ok = pthread_key_create(&g_exit_key, exit_dtor) == 0; }
int mantra_pal_on_thread_exit(void (*fn)(void *), void *value) {
    pthread_once(&g_exit_once, exit_key_init);
    if (!g_exit_ok)
        return MANTRA_ENOMEM;
    atomic_store(&g_exit_fn, fn);
    return pthread_setspecific(g_exit_key, value) == 0 ? MANTRA_OK : MANTRA_ENOMEM;
}
void mantra_pal_yield(void) { sched_yield(); }

static uint64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The trace clock: CLOCK_MONOTONIC in nanoseconds, or - where the kernel itself keeps time with
 * the TSC, or MANTRA_CLOCK=tsc asks for it - the invariant TSC (ordered reads; without the order
 * under MANTRA_CLOCK=tsc-unordered: platform-internal.h) scaled to nanoseconds against
 * CLOCK_MONOTONIC (1 ms calibration at first use: clock_init). Reading the TSC costs ~11 ns where a vDSO
 * clock_gettime on a paravirtual clock costs ~30 (bench/session_write.c "parts"). Both are
 * monotonic nanoseconds, so the trace header (1e9 ticks per second) holds either way. */
enum { CLOCK_UNDECIDED = 0, CLOCK_MONO = 1, CLOCK_TSC = 2, CLOCK_TSC_UNORDERED = 3, CLOCK_TSC_LFENCE = 4 };
static pthread_once_t g_clock_once = PTHREAD_ONCE_INIT;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__extension__ typedef unsigned __int128 u128; /* calibration */
/* ns = ns_base + ((tsc - tsc_base) * mult >> 32); written once before mode is published */
struct mantra_pal_tsc mantra__pal_tsc;
#define g_clock mantra__pal_tsc.mode
#define g_tsc_base mantra__pal_tsc.tsc_base
#define g_ns_base mantra__pal_tsc.ns_base
#define g_tsc_mult mantra__pal_tsc.mult

/* 1 when a line of the file holds every word of words[] (NULL-terminated); one pass. */
static int file_has(const char *path, const char *const *words) {
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[4096];
    int all = 0;
    while (!all && fgets(line, sizeof line, f)) {
        all = 1;
        for (const char *const *w = words; *w && all; w++)
            all = strstr(line, *w) != NULL;
    }
    fclose(f);
    return all;
}

/* One (CLOCK_MONOTONIC, TSC) pair: the TSC read between two clock reads, paired with the clock
 * halfway between them; of CAL_TRIES tries, the one with the narrowest bracket (a try that an
 * interrupt or a preemption hit is wide). Returns the bracket in ns. */
#define CAL_TRIES 16
static int g_cal_mode = CLOCK_TSC; /* the ordered read (clock_init) */
static uint64_t clock_pair(uint64_t *ns, uint64_t *tsc) {
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < CAL_TRIES; i++) {
        uint64_t a = monotonic_ns(), c = mantra__pal_rdtsc(g_cal_mode), b = monotonic_ns();
        if (b - a < best) {
            best = b - a;
            *ns = a + (b - a) / 2;
            *tsc = c;
        }
    }
    return best;
}

/* The calibration: two bracketed pairs at least CAL_NS apart, and at least 2000 times the wider
 * bracket (where clock_gettime is a system call, brackets of microseconds), at most CAL_MAX_NS.
 * Each pair is off by at most half its bracket, so the rate is within 1000 ppm at the very worst
 * and within some 60 ppm where the vDSO reads the clock; on this kvm-clock guest, whose
 * CLOCK_MONOTONIC is itself computed from the TSC, test_clock measures 0.0-0.5 ppm over 200 ms.
 * The single unbracketed pairs 5 ms apart used before cost 5 ms at every process start and were
 * off by whatever an interrupt at either end cost. */
#define CAL_NS 1000000u       /* 1 ms */
#define CAL_MAX_NS 20000000u  /* 20 ms */
static int calibrate(void) {
    uint64_t t0 = 0, c0 = 0, t1 = 0, c1 = 0;
    uint64_t w0 = clock_pair(&t0, &c0), w1 = 0, span = CAL_NS > 2000u * w0 ? CAL_NS : 2000u * w0;
    do {
        while (monotonic_ns() - t0 < span && monotonic_ns() - t0 < CAL_MAX_NS)
            ;
        w1 = clock_pair(&t1, &c1);
        if (2000u * w1 > span)
            span = 2000u * w1;
    } while (t1 - t0 < span && t1 - t0 < CAL_MAX_NS);
    if (c1 <= c0 || t1 <= t0)
        return 0;
    g_tsc_mult = (uint64_t)(((u128)(t1 - t0) << 32) / (c1 - c0));
    g_tsc_base = c1;
    g_ns_base = t1;
    return 1;
}

/* The ordered read this CPU has (platform-internal.h): RDTSCP (CPUID 0x80000001, EDX bit 27) or
 * LFENCE then RDTSC. */
int mantra_pal_tsc_ordered_mode(void) {
    unsigned a, b, c, d;
    return __get_cpuid(0x80000001u, &a, &b, &c, &d) && (d & (1u << 27)) ? CLOCK_TSC : CLOCK_TSC_LFENCE;
}

static void clock_init(void) {
    const char *want = mantra_pal_getenv_set("MANTRA_CLOCK");
    char cs[32];
    int tsc_ok = mantra_pal_tsc_invariant();
    int use = 0, mode = mantra_pal_tsc_ordered_mode();
    g_cal_mode = mode;
    if (want && (strcmp(want, "tsc") == 0 || strcmp(want, "tsc-unordered") == 0)) {
        use = tsc_ok;
        if (strcmp(want, "tsc-unordered") == 0)
            mode = CLOCK_TSC_UNORDERED;
    } else if (!want || strcmp(want, "auto") == 0) {
        mantra_pal_kernel_clocksource(cs, sizeof cs);
        use = tsc_ok && strcmp(cs, "tsc") == 0;
    }
    if (use && calibrate()) {
        atomic_store(&g_clock, mode);
        return;
    }
    atomic_store(&g_clock, CLOCK_MONO);
}

uint64_t mantra_pal_now_ns(void) {
    int c = atomic_load_explicit(&g_clock, memory_order_acquire);
    if (c == CLOCK_UNDECIDED) {
        pthread_once(&g_clock_once, clock_init);
        c = atomic_load(&g_clock);
    }
    return c >= CLOCK_TSC ? mantra__pal_tsc_ns(c) : monotonic_ns();
}
#else
static _Atomic int g_clock = CLOCK_UNDECIDED;
static void clock_init(void) { atomic_store(&g_clock, CLOCK_MONO); }
uint64_t mantra_pal_now_ns(void) { return monotonic_ns(); }
#endif

const char *mantra_pal_clock_name(void) {
    if (atomic_load(&g_clock) == CLOCK_UNDECIDED)
        pthread_once(&g_clock_once, clock_init);
    int c = atomic_load(&g_clock);
    return c == CLOCK_TSC_UNORDERED ? "tsc-unordered" : c >= CLOCK_TSC ? "tsc" : "monotonic";
}
int64_t mantra_pal_unix_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t mantra_pal_thread_id(void) {
    static _Thread_local uint64_t tid;
    if (tid == 0) {
#if defined(__linux__)
        tid = (uint64_t)syscall(SYS_gettid);
#else
        static _Atomic uint64_t next = 1;
        tid = next++;
#endif
    }
    return tid;
}

uint64_t mantra_pal_monotonic_ns(void) { return monotonic_ns(); }

int mantra_pal_tsc_invariant(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    static const char *const invariant[] = {" constant_tsc", " nonstop_tsc", NULL};
    return file_has("/proc/cpuinfo", invariant); /* both on the flags line */
#else
    return 0;
#endif
}

void mantra_pal_kernel_clocksource(char *out, size_t size) {
    out[0] = 0;
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (!f)
        return;
    if (!fgets(out, (int)size, f))
        out[0] = 0;
    out[strcspn(out, "\n")] = 0;
    fclose(f);
}

uint64_t mantra_pal_proc_stat_field(int field) {
#if defined(__linux__)
    /* "pid (comm) state ...": comm may hold spaces and parentheses, so the fields are counted from
     * the last ')' (as dotnet/runtime's aot_ipc_get_process_id_disambiguation_key reads starttime,
     * src/coreclr/nativeaot/Runtime/eventpipe/ds-rt-aot.cpp) */
    char buf[1024];
    FILE *f = field >= 3 ? fopen("/proc/self/stat", "r") : NULL;
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    for (int at = 2; at < field && p; at++) /* p: the space before field at + 1 */
        p = strchr(p + 1, ' ');
    return p ? strtoull(p + 1, NULL, 10) : 0;
#else
    (void)field;
    return 0;
#endif
}

int mantra_pal_single_threaded(void) { return mantra_pal_proc_stat_field(20) == 1; /* num_threads */ }

uint32_t mantra_pal_thread_cpus(uint32_t *cpus, uint32_t max) {
#if defined(__linux__) && defined(CPU_ISSET)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 0;
    uint32_t n = 0;
    for (uint32_t c = 0; c < CPU_SETSIZE && n < max; c++)
        if (CPU_ISSET(c, &set))
            cpus[n++] = c;
    return n;
#else
    (void)cpus, (void)max;
    return 0;
#endif
}

int mantra_pal_thread_pin(const uint32_t *cpus, uint32_t n) {
#if defined(__linux__) && defined(CPU_ISSET)
    cpu_set_t set;
    CPU_ZERO(&set);
    for (uint32_t i = 0; i < n; i++)
        if (cpus[i] < CPU_SETSIZE)
            CPU_SET(cpus[i], &set);
    return n > 0 && sched_setaffinity(0, sizeof set, &set) == 0 ? 0 : -1;
#else
    (void)cpus, (void)n;
    return -1;
#endif
}

uint32_t mantra_pal_cpu_count(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (uint32_t)n : 1u;
}
uint32_t mantra_pal_pid(void) { return (uint32_t)getpid(); }

void mantra_pal_command_line(char *out, size_t size) {
    if (size == 0)
        return;
    out[0] = 0;
    FILE *f = fopen("/proc/self/cmdline", "rb");
    if (!f)
        return;
    size_t n = fread(out, 1, size - 1, f);
    fclose(f);
    while (n > 0 && out[n - 1] == 0)
        n--;
    for (size_t i = 0; i < n; i++)
        if (out[i] == 0)
            out[i] = ' ';
    out[n] = 0;
}

void mantra_pal_os_info(char *out, size_t size) {
    struct utsname u;
    if (size == 0)
        return;
    if (uname(&u) != 0) {
        snprintf(out, size, "unknown");
        return;
    }
    snprintf(out, size, "%s %s", u.sysname, u.release);
}

uint32_t mantra_pal_elf_machine(void) {
#if defined(__x86_64__)
    return 62;
#elif defined(__aarch64__)
    return 183;
#elif defined(__i386__)
    return 3;
#elif defined(__arm__)
    return 40;
#elif defined(__riscv)
    return 243;
#else
    return 0;
#endif
}

const void *mantra_pal_map_exec_marker(int fd) {
    void *p = mmap(NULL, mantra_pal_page_size(), PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
    return p == MAP_FAILED ? NULL : p;
}

const char *mantra_pal_arch(void) {
#if defined(__x86_64__)
    return "x64";
#elif defined(__aarch64__)
    return "arm64";
#elif defined(__i386__)
    return "x86";
#elif defined(__arm__)
    return "arm";
#else
    return "unknown";
#endif
}

const char *mantra_pal_getenv(const char *name) {
    return getenv(name);
}
