/* Startup tracing (mantra_init, mantra/session.h): spawns startup_host with MANTRA_* variables
 * set per case and reads the trace it leaves. Each case runs in its own emptied folder
 * $MANTRA_BINARY_DIR/startup/<case>; the host runs with that folder as working directory and its
 * stdout/stderr go to files there. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "mantra/reader.h"
#include "mantra/session.h"

#ifndef STARTUP_HOST
#error "STARTUP_HOST (path of the startup_host executable) must be defined"
#endif

extern char **environ;

static char g_root[512];

/* ---- folders and files ---- */

static const char *case_dir(const char *name) {
    static char dir[640];
    snprintf(dir, sizeof dir, "%s/%s", g_root, name);
    if (mkdir(dir, 0777) != 0)
        ck_assert_msg(errno == EEXIST, "mkdir %s: %s", dir, strerror(errno));
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        ck_assert_msg(unlink(p) == 0, "unlink %s: %s", p, strerror(errno));
    }
    closedir(d);
    return dir;
}

/* Names in dir other than the host's stdout.txt/stderr.txt, joined with '|' in sorted order. */
static void other_files(const char *dir, char *out, size_t size) {
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);
    ck_assert_int_ge(n, 0);
    out[0] = 0;
    for (int i = 0; i < n; i++) {
        const char *s = names[i]->d_name;
        if (strcmp(s, ".") && strcmp(s, "..") && strcmp(s, "stdout.txt") && strcmp(s, "stderr.txt")) {
            if (out[0])
                strncat(out, "|", size - strlen(out) - 1);
            strncat(out, s, size - strlen(out) - 1);
        }
        free(names[i]);
    }
    free(names);
}

static void read_text(const char *path, char *out, size_t size) {
    out[0] = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    size_t n = fread(out, 1, size - 1, f);
    out[n] = 0;
    fclose(f);
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* ---- spawning the host ---- */

typedef struct host_run {
    pid_t pid;
    int status; /* exit status; 128 + signal when killed */
    char out[512];
    char err[1024];
} host_run;

/* Runs startup_host MODE N SLEEP_MS in dir with the caller's environment minus every
 * MANTRA_EnableEventPipe / MANTRA_EventPipe* variable, plus vars (NULL-terminated "K=V"). */
static void run_host(const char *dir, const char *const *vars, const char *mode, unsigned long n,
                     unsigned long sleep_ms, host_run *r) {
    size_t nenv = 0, nvars = 0;
    while (environ[nenv])
        nenv++;
    while (vars && vars[nvars])
        nvars++;
    char **envp = calloc(nenv + nvars + 1, sizeof *envp);
    ck_assert_ptr_nonnull(envp);
    size_t k = 0;
    for (size_t i = 0; i < nenv; i++)
        if (strncmp(environ[i], "MANTRA_EnableEventPipe=", 23) != 0 && strncmp(environ[i], "MANTRA_EventPipe", 16) != 0)
            envp[k++] = environ[i];
    for (size_t i = 0; i < nvars; i++)
        envp[k++] = (char *)vars[i];
    envp[k] = NULL;
    char nbuf[32], sbuf[32], outp[700], errp[700];
    snprintf(nbuf, sizeof nbuf, "%lu", n);
    snprintf(sbuf, sizeof sbuf, "%lu", sleep_ms);
    snprintf(outp, sizeof outp, "%s/stdout.txt", dir);
    snprintf(errp, sizeof errp, "%s/stderr.txt", dir);
    char *argv[] = {(char *)STARTUP_HOST, (char *)mode, nbuf, sbuf, NULL};
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (o < 0 || e < 0 || chdir(dir) != 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(126);
        execve(STARTUP_HOST, argv, envp);
        _exit(127);
    }
    free(envp);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        ck_assert_int_eq(errno, EINTR);
    r->pid = pid;
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    read_text(outp, r->out, sizeof r->out);
    read_text(errp, r->err, sizeof r->err);
}

/* ---- reading the trace ---- */

typedef struct readback {
    int complete;
    uint32_t process_id;
    uint64_t ticks, process_info, thread_samples, method_loads, r2r_starts, rundown, other, dropped;
    uint64_t bad_ticks; /* Tick events whose payload is not (Thread 7, Index = next expected) */
    uint64_t last_index;
} readback;

static uint64_t le(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static void read_trace(const char *path, readback *rb) {
    memset(rb, 0, sizeof *rb);
    mantra_reader *r = mantra_reader_new(NULL);
    ck_assert_ptr_nonnull(r);
    ck_assert_msg(mantra_reader_open_file(r, path) == 0, "%s: %s", path, mantra_reader_last_error(r));
    rb->process_id = mantra_reader_info(r)->process_id;
    const mantra_trace_event *ev;
    int rc;
    int64_t next_index = 0;
    while ((rc = mantra_reader_next(r, &ev)) == 1) {
        const char *prov = ev->metadata->provider;
        uint32_t id = ev->metadata->event_id;
        if (strcmp(prov, "Mantra-Demo") == 0 && id == 1) {
            rb->ticks++;
            /* indices only increase (drops leave gaps); Thread is always 7 */
            if (ev->payload_size != 12 || le(ev->payload, 4) != 7 || (int64_t)le(ev->payload + 4, 8) < next_index)
                rb->bad_ticks++;
            else {
                rb->last_index = le(ev->payload + 4, 8);
                next_index = (int64_t)rb->last_index + 1;
            }
        } else if (strcmp(prov, "Microsoft-DotNETCore-EventPipe") == 0 && id == 1)
            rb->process_info++;
        else if (strcmp(prov, "Microsoft-DotNETCore-SampleProfiler") == 0 && id == 0)
            rb->thread_samples++;
        else if (strcmp(prov, "Microsoft-Windows-DotNETRuntime") == 0 && id == 141)
            rb->method_loads++;
        else if (strcmp(prov, "Microsoft-Windows-DotNETRuntime") == 0 && id == 160)
            rb->r2r_starts++;
        else if (strcmp(prov, MANTRA_RUNDOWN_PROVIDER) == 0)
            rb->rundown++; /* none expected (the host registers no rundown callback); not asserted */
        else
            rb->other++;
    }
    ck_assert_msg(rc == 0, "%s: %s", path, mantra_reader_last_error(r));
    rb->complete = mantra_reader_complete(r);
    rb->dropped = mantra_reader_get_stats(r)->dropped;
    mantra_reader_free(r);
}

static const char *pid_path(const char *dir, const char *pattern, pid_t pid, char *out, size_t size) {
    /* pattern: a file name with %1$d-style pid slots, given here as up to two %d */
    char name[256];
    snprintf(name, sizeof name, pattern, (int)pid, (int)pid);
    snprintf(out, size, "%s/%s", dir, name);
    return out;
}

/* ---- cases ---- */

/* Returning from main: the atexit handler ends the trace. */
START_TEST(atexit_ends_trace) {
    const char *dir = case_dir("atexit");
    char path_var[800], path[800], want_out[128];
    snprintf(path_var, sizeof path_var, "MANTRA_EventPipeOutputPath=%s/t-{pid}.nettrace", dir);
    const char *vars[] = {"MANTRA_EnableEventPipe=1", "MANTRA_EventPipeConfig=Mantra-Demo:0x1:5", path_var, NULL};
    host_run h;
    run_host(dir, vars, "return", 1000, 0, &h);
    ck_assert_msg(h.status == 0, "status %d, stderr: %s", h.status, h.err);
    ck_assert_str_eq(h.err, "");
    snprintf(want_out, sizeof want_out, "session yes\nok 1000 dropped 0 disabled 0\n");
    ck_assert_str_eq(h.out, want_out);
    char files[512], want_files[64];
    other_files(dir, files, sizeof files);
    snprintf(want_files, sizeof want_files, "t-%d.nettrace", (int)h.pid);
    ck_assert_str_eq(files, want_files);
    readback rb;
    read_trace(pid_path(dir, "t-%d.nettrace", h.pid, path, sizeof path), &rb);
    ck_assert_int_eq(rb.complete, 1);
    ck_assert_uint_eq(rb.process_id, (uint32_t)h.pid);
    ck_assert_uint_eq(rb.ticks, 1000);
    ck_assert_uint_eq(rb.bad_ticks, 0);
    ck_assert_uint_eq(rb.last_index, 999);
    ck_assert_uint_eq(rb.process_info, 1);
    ck_assert_uint_eq(rb.thread_samples + rb.method_loads + rb.r2r_starts + rb.other, 0);
    ck_assert_uint_eq(rb.dropped, 0);
}
END_TEST

/* mantra_shutdown() by hand, then _exit (no atexit handler runs); {pid} twice in the path. */
START_TEST(explicit_shutdown_then_exit) {
    const char *dir = case_dir("shutdown");
    char path_var[800], path[800];
    snprintf(path_var, sizeof path_var, "MANTRA_EventPipeOutputPath=%s/{pid}-x-{pid}.nettrace", dir);
    const char *vars[] = {"MANTRA_EnableEventPipe=1", "MANTRA_EventPipeConfig=Mantra-Demo:0x1:5", path_var, NULL};
    host_run h;
    run_host(dir, vars, "shutdown", 777, 0, &h);
    ck_assert_msg(h.status == 0, "status %d, stderr: %s", h.status, h.err);
    ck_assert_str_eq(h.err, "");
    ck_assert_str_eq(h.out, "session yes\nok 777 dropped 0 disabled 0\n");
    char files[512], want_files[64];
    other_files(dir, files, sizeof files);
    snprintf(want_files, sizeof want_files, "%d-x-%d.nettrace", (int)h.pid, (int)h.pid);
    ck_assert_str_eq(files, want_files);
    readback rb;
    read_trace(pid_path(dir, "%d-x-%d.nettrace", h.pid, path, sizeof path), &rb);
    ck_assert_int_eq(rb.complete, 1);
    ck_assert_uint_eq(rb.ticks, 777);
    ck_assert_uint_eq(rb.bad_ticks, 0);
    ck_assert_uint_eq(rb.last_index, 776);
    ck_assert_uint_eq(rb.process_info, 1);
    ck_assert_uint_eq(rb.thread_samples + rb.method_loads + rb.r2r_starts + rb.other, 0);
    ck_assert_uint_eq(rb.dropped, 0);
}
END_TEST

/* Only MANTRA_EnableEventPipe=1: trace.nettrace in the working directory, the .NET default
 * providers: DotNETRuntime 0x4c14fccbd:5 (MethodLoad, keywords 0x30, in; R2RGetEntryPointStart,
 * keyword 0x2000000000, out), SampleProfiler (ThreadSample in), Mantra-Demo out. */
START_TEST(defaults_path_and_providers) {
    const char *dir = case_dir("defaults");
    const char *vars[] = {"MANTRA_EnableEventPipe=1", NULL};
    host_run h;
    run_host(dir, vars, "return", 10, 0, &h);
    ck_assert_msg(h.status == 0, "status %d, stderr: %s", h.status, h.err);
    ck_assert_str_eq(h.err, "");
    ck_assert_str_eq(h.out, "session yes\nok 0 dropped 0 disabled 10\n");
    char files[512], path[800];
    other_files(dir, files, sizeof files);
    ck_assert_str_eq(files, "trace.nettrace");
    snprintf(path, sizeof path, "%s/trace.nettrace", dir);
    readback rb;
    read_trace(path, &rb);
    ck_assert_int_eq(rb.complete, 1);
    ck_assert_uint_eq(rb.ticks, 0);
    ck_assert_uint_eq(rb.thread_samples, 1);
    ck_assert_uint_eq(rb.method_loads, 1);
    ck_assert_uint_eq(rb.r2r_starts, 0);
    ck_assert_uint_eq(rb.process_info, 1);
    ck_assert_uint_eq(rb.other, 0);

    /* empty values count as unset */
    dir = case_dir("defaults-empty");
    const char *empty[] = {"MANTRA_EnableEventPipe=1", "MANTRA_EventPipeConfig=", "MANTRA_EventPipeOutputPath=",
                           "MANTRA_EventPipeCircularMB=", NULL};
    run_host(dir, empty, "return", 10, 0, &h);
    ck_assert_msg(h.status == 0, "status %d, stderr: %s", h.status, h.err);
    ck_assert_str_eq(h.out, "session yes\nok 0 dropped 0 disabled 10\n");
    other_files(dir, files, sizeof files);
    ck_assert_str_eq(files, "trace.nettrace");
    snprintf(path, sizeof path, "%s/trace.nettrace", dir);
    read_trace(path, &rb);
    ck_assert_int_eq(rb.complete, 1);
    ck_assert_uint_eq(rb.thread_samples + rb.method_loads, 2);
    ck_assert_uint_eq(rb.process_info, 1);
}
END_TEST

/* A burst far above 1 MB: with MANTRA_EventPipeCircularMB=0 (so 1 MB) events are dropped; with the
 * default cap (256 MB) the same burst loses nothing. Every write the host saw succeed is in the
 * trace. The host sleeps 500 ms before exit so that the drain has emptied the buffers and the
 * ProcessInfo of the stop finds room. Whether a 1 MB cap drops depends on the drain falling behind
 * the writer, which it does not always do since it gives buffers back as it writes them and no
 * longer waits for a busy writer (runtime/src/session/drain.c): 4 runs of 56 kept up on this
 * 2-vCPU guest under load. So the drop case runs the host up to BURST_TRIES times, every run
 * checked exactly (ok + dropped, the trace's ticks, the reader's dropped count), until one drops. */
#define BURST 300000ul
#define BURST_TRIES 6
static unsigned long burst_run(const char *dir, const char *circular) {
    char path_var[800], path[800];
    snprintf(path_var, sizeof path_var, "MANTRA_EventPipeOutputPath=%s/burst.nettrace", dir);
    const char *vars[] = {"MANTRA_EnableEventPipe=1", "MANTRA_EventPipeConfig=Mantra-Demo:0x1:5", path_var, circular,
                          NULL};
    host_run h;
    run_host(dir, vars, "return", BURST, 500, &h);
    ck_assert_msg(h.status == 0, "status %d, stderr: %s", h.status, h.err);
    unsigned long ok = 0, dropped = 0, disabled = 0;
    ck_assert_msg(sscanf(h.out, "session yes\nok %lu dropped %lu disabled %lu", &ok, &dropped, &disabled) == 3, "%s",
                  h.out);
    ck_assert_uint_eq(ok + dropped, BURST);
    ck_assert_uint_eq(disabled, 0);
    snprintf(path, sizeof path, "%s/burst.nettrace", dir);
    readback rb;
    read_trace(path, &rb);
    ck_assert_int_eq(rb.complete, 1);
    ck_assert_uint_eq(rb.ticks, ok);
    ck_assert_uint_eq(rb.bad_ticks, 0);
    ck_assert_uint_eq(rb.process_info, 1);
    /* The reader counts drops from sequence gaps and sequence points (the final one carries the
     * drops after the last stored event): exactly the host's (the ProcessInfo, written by the same
     * thread at exit, found room). */
    ck_assert_uint_eq(rb.dropped, dropped);
    return dropped;
}

static void burst_case(const char *name, const char *circular, int want_drops) {
    const char *dir = case_dir(name);
    unsigned long dropped = burst_run(dir, circular);
    for (int tries = 1; want_drops && dropped == 0 && tries < BURST_TRIES; tries++)
        dropped = burst_run(dir, circular);
    if (want_drops)
        ck_assert_uint_gt(dropped, 0);
    else
        ck_assert_uint_eq(dropped, 0);
}

START_TEST(circular_mb_zero_is_one_mb) { burst_case("circular-0", "MANTRA_EventPipeCircularMB=0", 1); }
END_TEST

START_TEST(circular_mb_unset_keeps_default) { burst_case("circular-unset", NULL, 0); }
END_TEST

START_TEST(circular_mb_hex_accepted) {
    const char *dir = case_dir("circular-hex");
    const char *vars[] = {"MANTRA_EnableEventPipe=1", "MANTRA_EventPipeConfig=Mantra-Demo:0x1:5",
                          "MANTRA_EventPipeCircularMB=0x20", NULL};
    host_run h;
    run_host(dir, vars, "return", 5, 0, &h);
    ck_assert_msg(h.status == 0, "status %d, stderr: %s", h.status, h.err);
    ck_assert_str_eq(h.out, "session yes\nok 5 dropped 0 disabled 0\n");
    char path[800];
    snprintf(path, sizeof path, "%s/trace.nettrace", dir);
    readback rb;
    read_trace(path, &rb);
    ck_assert_int_eq(rb.complete, 1);
    ck_assert_uint_eq(rb.ticks, 5);
}
END_TEST

/* Bad values: exit status 2, the exact error on stderr, and the file that the path names is left
 * as it was (bad input loses nothing). */
/* mantra_output_path_expand: every {pid}, every {n} unless n is 0, nothing else; too small a buffer. */
START_TEST(output_path_expand) {
    char out[128], want[128];
    int pid = (int)getpid();
    int k = snprintf(want, sizeof want, "pgo-%d-7-%d{x}.nettrace", pid, pid);
    ck_assert_int_eq(mantra_output_path_expand("pgo-{pid}-{n}-{pid}{x}.nettrace", 7, out, sizeof out), k);
    ck_assert_str_eq(out, want);
    k = snprintf(want, sizeof want, "t-%d-{n}.nettrace", pid);
    ck_assert_int_eq(mantra_output_path_expand("t-{pid}-{n}.nettrace", 0, out, sizeof out), k);
    ck_assert_str_eq(out, want);
    ck_assert_int_eq(mantra_output_path_expand("{n}{n}", 12, out, sizeof out), 4);
    ck_assert_str_eq(out, "1212");
    ck_assert_int_eq(mantra_output_path_expand("{pid}", 0, out, 2), MANTRA_ERANGE);
    ck_assert_str_eq(out, "");
    ck_assert_int_eq(mantra_output_path_expand(NULL, 0, out, sizeof out), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_output_path_expand("x", 0, out, 0), MANTRA_EINVAL);
}
END_TEST

static void expect_refused(const char *dir, const char *const *vars, const char *want_err) {
    char path[800], files[512], kept[64];
    snprintf(path, sizeof path, "%s/keep.nettrace", dir);
    write_text(path, "keep\n");
    host_run h;
    run_host(dir, vars, "return", 5, 0, &h);
    ck_assert_msg(h.status == 2, "status %d for %s", h.status, want_err);
    ck_assert_str_eq(h.err, want_err);
    ck_assert_str_eq(h.out, "");
    read_text(path, kept, sizeof kept);
    ck_assert_str_eq(kept, "keep\n");
    other_files(dir, files, sizeof files);
    ck_assert_str_eq(files, "keep.nettrace");
}

START_TEST(bad_circular_mb) {
    static const struct {
        const char *value, *why;
    } rows[] = {
        {"abc", "is not a number"},  {"12abc", "is not a number"},  {"-1", "is not a number"},
        {" 1", "is not a number"},   {"1.5", "is not a number"},    {"0x", "is not a number"},
        {"+4", "is not a number"},   {"0x1g", "is not a number"},
        {"4294967296", "is out of range (at most 4294967295)"},
        {"0x100000000", "is out of range (at most 4294967295)"},
        {"99999999999999999999999", "is out of range (at most 4294967295)"},
    };
    const char *dir = case_dir("bad-circular");
    char path_var[800];
    snprintf(path_var, sizeof path_var, "MANTRA_EventPipeOutputPath=%s/keep.nettrace", dir);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char var[128], want[256];
        snprintf(var, sizeof var, "MANTRA_EventPipeCircularMB=%s", rows[i].value);
        snprintf(want, sizeof want, "MANTRA_EventPipeCircularMB: \"%s\" %s\n", rows[i].value, rows[i].why);
        const char *vars[] = {"MANTRA_EnableEventPipe=1", "MANTRA_EventPipeConfig=Mantra-Demo:0x1:5", path_var, var,
                              NULL};
        expect_refused(dir, vars, want);
    }
}
END_TEST

START_TEST(bad_config) {
    static const char *const specs[] = {"Mantra-Demo:0xZZ", "A,,B", "Mantra-Demo:0x1:Loud", ",", "A:0x11111111111111111",
                                        "Mantra-Demo:0x1:300", "Mantra-Demo,"};
    const char *dir = case_dir("bad-config");
    char path_var[800];
    snprintf(path_var, sizeof path_var, "MANTRA_EventPipeOutputPath=%s/keep.nettrace", dir);
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        /* the expected text: the parser's own message, prefixed with the variable */
        mantra_provider_spec parsed[8];
        size_t n, col;
        ck_assert_int_eq(mantra_provider_spec_parse(specs[i], parsed, 8, &n, &col), MANTRA_EINVAL);
        char var[128], want[512];
        snprintf(want, sizeof want, "MANTRA_EventPipeConfig: %s\n", mantra_session_last_error());
        ck_assert_msg(strncmp(want, "MANTRA_EventPipeConfig: providers:", 34) == 0, "%s", want);
        snprintf(var, sizeof var, "MANTRA_EventPipeConfig=%s", specs[i]);
        const char *vars[] = {"MANTRA_EnableEventPipe=1", var, path_var, NULL};
        expect_refused(dir, vars, want);
    }
}
END_TEST

START_TEST(bad_output_path) {
    const char *dir = case_dir("bad-path");
    char path_var[800], prefix[900];
    snprintf(path_var, sizeof path_var, "MANTRA_EventPipeOutputPath=%s/missing/{pid}.nettrace", dir);
    const char *vars[] = {"MANTRA_EnableEventPipe=1", "MANTRA_EventPipeConfig=Mantra-Demo:0x1:5", path_var, NULL};
    host_run h;
    run_host(dir, vars, "return", 5, 0, &h);
    ck_assert_int_eq(h.status, 2);
    ck_assert_str_eq(h.out, "");
    /* the rest is the file layer's text; it names the path with the pid put in */
    snprintf(prefix, sizeof prefix, "MANTRA_EventPipeOutputPath: ");
    ck_assert_msg(strncmp(h.err, prefix, strlen(prefix)) == 0, "%s", h.err);
    char want_path[800];
    snprintf(want_path, sizeof want_path, "%s/missing/%d.nettrace", dir, (int)h.pid);
    ck_assert_msg(strstr(h.err, want_path) != NULL, "%s", h.err);
}
END_TEST

/* Only exactly "1" starts a session; nothing is created otherwise and mantra_init returns 0. */
START_TEST(enable_values) {
    static const char *const values[] = {NULL, "0", "", "2", "true", " 1", "01", "1 "};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        const char *dir = case_dir("enable-values");
        char enable[64], path_var[800], files[512];
        snprintf(enable, sizeof enable, "MANTRA_EnableEventPipe=%s", values[i] ? values[i] : "");
        snprintf(path_var, sizeof path_var, "MANTRA_EventPipeOutputPath=%s/never-{pid}.nettrace", dir);
        const char *vars[] = {path_var, "MANTRA_EventPipeConfig=Mantra-Demo:0x1:5", values[i] ? enable : NULL, NULL};
        host_run h;
        run_host(dir, vars, "return", 5, 0, &h);
        ck_assert_msg(h.status == 0, "value %zu: status %d, stderr: %s", i, h.status, h.err);
        ck_assert_str_eq(h.err, "");
        ck_assert_str_eq(h.out, "session no\nok 0 dropped 0 disabled 5\n");
        other_files(dir, files, sizeof files);
        ck_assert_msg(files[0] == 0, "value %zu: files %s", i, files);
    }
}
END_TEST

/* Four threads call mantra_init at once: one session, one ProcessInfo. */
START_TEST(threads_start_one_session) {
    const char *dir = case_dir("threads");
    const char *vars[] = {"MANTRA_EnableEventPipe=1", "MANTRA_EventPipeConfig=Mantra-Demo:0x1:5", NULL};
    for (int round = 0; round < 5; round++) {
        host_run h;
        run_host(dir, vars, "threads", 500, 0, &h);
        ck_assert_msg(h.status == 0, "status %d, stderr: %s", h.status, h.err);
        ck_assert_str_eq(h.err, "");
        ck_assert_str_eq(h.out, "session yes\nok 500 dropped 0 disabled 0\n");
        char path[800];
        snprintf(path, sizeof path, "%s/trace.nettrace", dir);
        readback rb;
        read_trace(path, &rb);
        ck_assert_int_eq(rb.complete, 1);
        ck_assert_uint_eq(rb.ticks, 500);
        ck_assert_uint_eq(rb.process_info, 1);
    }
}
END_TEST

/* A failed mantra_init starts nothing; after the variable is fixed, the next call starts. */
START_TEST(retry_after_error) {
    const char *dir = case_dir("retry");
    const char *vars[] = {"MANTRA_EnableEventPipe=1", "MANTRA_EventPipeConfig=Mantra-Demo:0x1:5",
                          "MANTRA_EventPipeCircularMB=lots", NULL};
    host_run h;
    run_host(dir, vars, "retry", 42, 0, &h);
    ck_assert_msg(h.status == 0, "status %d, stderr: %s", h.status, h.err);
    ck_assert_str_eq(h.err, "MANTRA_EventPipeCircularMB: \"lots\" is not a number\n");
    ck_assert_str_eq(h.out, "session yes\nok 42 dropped 0 disabled 0\n");
    char path[800];
    snprintf(path, sizeof path, "%s/trace.nettrace", dir);
    readback rb;
    read_trace(path, &rb);
    ck_assert_int_eq(rb.complete, 1);
    ck_assert_uint_eq(rb.ticks, 42);
    ck_assert_uint_eq(rb.process_info, 1);
}
END_TEST

int main(void) {
    const char *bin = getenv("MANTRA_BINARY_DIR");
    snprintf(g_root, sizeof g_root, "%s/startup", bin ? bin : ".");
    mkdir(g_root, 0777);
    Suite *s = suite_create("startup");
    TCase *tc = tcase_create("startup");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, atexit_ends_trace);
    tcase_add_test(tc, explicit_shutdown_then_exit);
    tcase_add_test(tc, defaults_path_and_providers);
    tcase_add_test(tc, circular_mb_zero_is_one_mb);
    tcase_add_test(tc, circular_mb_unset_keeps_default);
    tcase_add_test(tc, circular_mb_hex_accepted);
    tcase_add_test(tc, bad_circular_mb);
    tcase_add_test(tc, bad_config);
    tcase_add_test(tc, bad_output_path);
    tcase_add_test(tc, enable_values);
    tcase_add_test(tc, threads_start_one_session);
    tcase_add_test(tc, retry_after_error);
    tcase_add_test(tc, output_path_expand);
    suite_add_tcase(s, tc);
    return run_suite(s, CK_NOFORK);
}
