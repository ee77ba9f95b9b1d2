/* image_perfmap.c - perf map and jitdump files for native profilers (perf, samply): a precompiled
 * method's code ranges, written at its first call, one entry per part, the cold part named
 * "Namespace.Name[cold]".
 *
 * MANTRA_PerfMapEnabled, with the .NET runtime's values (DOTNET_PerfMapEnabled, PR #82142): 0 off,
 * 1 both files, 2 jitdump only, 3 perf map only. MANTRA_PerfMapJitDumpPath: the folder of both
 * files (default /tmp, where perf looks for perf-PID.map).
 *  - perf-PID.map (linux tools/perf/Documentation/jit-interface.txt): one line per range,
 *    "START SIZE name", START and SIZE hex without 0x (the .NET runtime writes a 0x, which the
 *    format does not have, and leaves precompiled methods out: neither is copied here).
 *  - jit-PID.dump (tools/perf/Documentation/jitdump-specification.txt): a 40-byte header (magic
 *    0x4A695444, version 1, header size, ELF machine, pad, pid, timestamp, flags 0), then one
 *    JIT_CODE_LOAD record (id 0) per range: record header (id, total size, timestamp), pid, tid,
 *    vma, code address, code size, code index, the NUL-terminated name, the code bytes. Timestamps
 *    are CLOCK_MONOTONIC nanoseconds, as perf's -k mono expects. The file's first page is mapped
 *    executable, the marker `perf inject --jit` finds in the recording.
 * Each entry is written with one write call, unbuffered: a process that dies loses nothing written. */
#include <stdio.h>
#include <stdlib.h>

#include "images/image-format.h"
#include "platform/platform-internal.h"

#define JITDUMP_MAGIC 0x4A695444u
#define JITDUMP_VERSION 1u
#define JITDUMP_HEADER_SIZE 40u
#define JIT_CODE_LOAD 0u

static atomic_flag g_lock = ATOMIC_FLAG_INIT;
static int g_mode = -1; /* g_lock: -1 not read yet; else MANTRA_PerfMapEnabled */
static int g_map_fd = -1, g_dump_fd = -1;
static uint64_t g_code_index;
static const void *g_marker;

static void lock(void) {
    while (atomic_flag_test_and_set_explicit(&g_lock, memory_order_acquire))
        ;
}
static void unlock(void) {
    atomic_flag_clear_explicit(&g_lock, memory_order_release);
}

/* Opens the files the mode asks for (g_lock held). */
static void open_files(void) {
    g_mode = (int)mantra_pal_getenv_u32("MANTRA_PerfMapEnabled", 3, 0); /* unset, invalid or over 3: off */
    if (g_mode == 0)
        return;
    const char *dir = mantra_pal_getenv_set("MANTRA_PerfMapJitDumpPath");
    if (dir == NULL)
        dir = "/tmp";
    char path[1024], err[128];
    uint32_t pid = mantra_pal_pid();
    if (g_mode == 1 || g_mode == 3) {
        snprintf(path, sizeof path, "%s/perf-%u.map", dir, (unsigned)pid);
        g_map_fd = mantra_pal_file_create(path, err, sizeof err);
    }
    if (g_mode == 1 || g_mode == 2) {
        snprintf(path, sizeof path, "%s/jit-%u.dump", dir, (unsigned)pid);
        g_dump_fd = mantra_pal_file_create(path, err, sizeof err);
        if (g_dump_fd >= 0) {
            uint8_t h[JITDUMP_HEADER_SIZE] = {0};
            cm_store_u32(h, JITDUMP_MAGIC);
            cm_store_u32(h + 4, JITDUMP_VERSION);
            cm_store_u32(h + 8, JITDUMP_HEADER_SIZE);
            cm_store_u32(h + 12, mantra_pal_elf_machine());
            cm_store_u32(h + 20, pid);
            cm_store_u64(h + 24, mantra_pal_monotonic_ns());
            uint64_t done = 0;
            if (mantra_pal_write_all(g_dump_fd, h, sizeof h, &done, err, sizeof err) != 0) {
                (void)mantra_pal_close(g_dump_fd, NULL, 0);
                g_dump_fd = -1;
            } else {
                g_marker = mantra_pal_map_exec_marker(g_dump_fd);
            }
        }
    }
}

static void perf_map_line(uint64_t start, uint32_t size, const char *ns, const char *name, const char *suffix) {
    char line[1024];
    int n = snprintf(line, sizeof line, "%llx %x %s%s%s%s\n", (unsigned long long)start, (unsigned)size, ns,
                     ns[0] ? "." : "", name, suffix);
    if (n > 0 && (size_t)n >= sizeof line) { /* a name longer than a line: cut, ending the line */
        n = (int)sizeof line - 1;
        line[n - 1] = '\n';
    }
    uint64_t done = 0;
    if (n > 0)
        (void)mantra_pal_write_all(g_map_fd, line, (size_t)n, &done, NULL, 0);
}

static void jitdump_load(uint64_t start, uint32_t size, const char *ns, const char *name, const char *suffix) {
    char label[1024];
    int n = snprintf(label, sizeof label, "%s%s%s%s", ns, ns[0] ? "." : "", name, suffix);
    size_t nlen = n < 0 ? 0 : (size_t)n < sizeof label ? (size_t)n : sizeof label - 1;
    uint8_t r[16 + 40];
    uint32_t total = (uint32_t)(sizeof r + nlen + 1 + size);
    uint64_t now = mantra_pal_monotonic_ns();
    cm_store_u32(r, JIT_CODE_LOAD);
    cm_store_u32(r + 4, total);
    cm_store_u64(r + 8, now);
    cm_store_u32(r + 16, mantra_pal_pid());
    cm_store_u32(r + 20, (uint32_t)mantra_pal_thread_id());
    cm_store_u64(r + 24, start); /* vma */
    cm_store_u64(r + 32, start); /* code address */
    cm_store_u64(r + 40, size);
    cm_store_u64(r + 48, g_code_index++);
    mantra_pal_part parts[3] = {{r, sizeof r}, {label, nlen + 1}, {(const void *)(uintptr_t)start, size}};
    label[nlen] = '\0';
    uint64_t done = 0;
    (void)mantra_pal_writev_all(g_dump_fd, parts, 3, &done, NULL, 0);
}

void im_perf_method(const mantra_image *im, size_t method) {
    mantra_image_method_info mi;
    if (mantra_image_method(im, method, &mi) != 0)
        return;
    lock();
    if (g_mode < 0)
        open_files();
    if (g_map_fd >= 0 || g_dump_fd >= 0) {
        uint64_t hot = mi.hot_start, cold = mi.cold_start;
        for (int part = 0; part < 2; part++) {
            uint32_t size = part ? mi.cold_size : mi.hot_size;
            if (size == 0)
                continue;
            const char *suffix = part ? "[cold]" : "";
            if (g_map_fd >= 0)
                perf_map_line(part ? cold : hot, size, mi.id.namespace_name, mi.id.name, suffix);
            if (g_dump_fd >= 0)
                jitdump_load(part ? cold : hot, size, mi.id.namespace_name, mi.id.name, suffix);
        }
    }
    unlock();
}
