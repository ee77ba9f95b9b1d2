/* Runs a tool without a shell and captures stdout, stderr and the exit status. */
#define _POSIX_C_SOURCE 200809L

#include "run_tool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct buffer {
    char *data;
    size_t len;
    size_t cap;
} buffer;

static int buffer_add(buffer *b, const char *src, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (b->len + n + 1 > cap)
            cap *= 2;
        char *data = realloc(b->data, cap);
        if (data == NULL)
            return -1;
        b->data = data;
        b->cap = cap;
    }
    memcpy(b->data + b->len, src, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

static char *buffer_take(buffer *b, size_t *len) {
    if (b->data == NULL && buffer_add(b, "", 0) != 0)
        return NULL;
    *len = b->len;
    return b->data;
}

static void set_failure(run_tool_result *r, const char *what, int err) {
    char text[256];
    buffer b = {0};
    snprintf(text, sizeof text, "run_tool: %s: %s\n", what, strerror(err));
    buffer_add(&b, text, strlen(text));
    r->err = buffer_take(&b, &r->err_len);
    r->status = -1;
}

/* In the child after fork(): only async-signal-safe calls until exec. */
static void child(const char *const argv[], const char *cwd, int out_fd, int err_fd, int report_fd) {
    int devnull = open("/dev/null", O_RDONLY);
    int err = 0;
    if (devnull < 0 || dup2(devnull, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
        dup2(err_fd, STDERR_FILENO) < 0)
        err = errno;
    else if (cwd != NULL && chdir(cwd) != 0)
        err = errno;
    if (err == 0) {
        if (strchr(argv[0], '/') != NULL)
            execv(argv[0], (char *const *)argv);
        else
            execvp(argv[0], (char *const *)argv);
        err = errno;
    }
    /* Tell the parent why exec failed; the pipe is close-on-exec, so success closes it empty. */
    ssize_t ignored = write(report_fd, &err, sizeof err);
    (void)ignored;
    _exit(127);
}

static int make_pipe(int fds[2]) {
    if (pipe(fds) != 0)
        return -1;
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    return 0;
}

int run_tool(const char *const argv[], const char *cwd, run_tool_result *r) {
    int out_pipe[2], err_pipe[2], report_pipe[2];
    memset(r, 0, sizeof *r);
    r->status = -1;
    if (make_pipe(out_pipe) != 0) {
        set_failure(r, "pipe", errno);
        return -1;
    }
    if (make_pipe(err_pipe) != 0) {
        set_failure(r, "pipe", errno);
        close(out_pipe[0]);
        close(out_pipe[1]);
        return -1;
    }
    if (make_pipe(report_pipe) != 0) {
        set_failure(r, "pipe", errno);
        close(out_pipe[0]);
        close(out_pipe[1]);
        close(err_pipe[0]);
        close(err_pipe[1]);
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int err = errno;
        for (int i = 0; i < 2; i++) {
            close(out_pipe[i]);
            close(err_pipe[i]);
            close(report_pipe[i]);
        }
        set_failure(r, "fork", err);
        return -1;
    }
    if (pid == 0)
        child(argv, cwd, out_pipe[1], err_pipe[1], report_pipe[1]);
    close(out_pipe[1]);
    close(err_pipe[1]);
    close(report_pipe[1]);

    buffer bufs[2] = {{0}, {0}};
    struct pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    int open_fds = 2;
    while (open_fds > 0) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || fds[i].revents == 0)
                continue;
            char chunk[8192];
            ssize_t n = read(fds[i].fd, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            } else if (buffer_add(&bufs[i], chunk, (size_t)n) != 0) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (fds[i].fd >= 0)
            close(fds[i].fd);

    int exec_err = 0;
    ssize_t got;
    do
        got = read(report_pipe[0], &exec_err, sizeof exec_err);
    while (got < 0 && errno == EINTR);
    close(report_pipe[0]);

    int wstatus = 0;
    while (waitpid(pid, &wstatus, 0) < 0) {
        if (errno != EINTR) {
            wstatus = -1;
            break;
        }
    }
    r->out = buffer_take(&bufs[0], &r->out_len);
    r->err = buffer_take(&bufs[1], &r->err_len);
    if (got == (ssize_t)sizeof exec_err) {
        free(r->err);
        char what[512];
        snprintf(what, sizeof what, "cannot run %s", argv[0]);
        set_failure(r, what, exec_err);
        return -1;
    }
    if (wstatus == -1)
        r->status = -1;
    else if (WIFEXITED(wstatus))
        r->status = WEXITSTATUS(wstatus);
    else if (WIFSIGNALED(wstatus))
        r->status = 128 + WTERMSIG(wstatus);
    return 0;
}

void run_tool_free(run_tool_result *r) {
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
    r->out_len = r->err_len = 0;
}

char *run_tool_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    buffer b = {0};
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (buffer_add(&b, chunk, n) != 0) {
            free(b.data);
            fclose(f);
            return NULL;
        }
    }
    int failed = ferror(f);
    fclose(f);
    if (failed) {
        free(b.data);
        return NULL;
    }
    size_t dummy;
    return buffer_take(&b, len ? len : &dummy);
}

const char *run_tool_env(const char *name, const char *fallback) {
    const char *value = getenv(name);
    return value != NULL && value[0] != '\0' ? value : fallback;
}

static int compare_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int has_suffix(const char *name, const char *suffix) {
    size_t n = strlen(name), s = strlen(suffix);
    return n > s && strcmp(name + n - s, suffix) == 0;
}

char **run_tool_list_dir(const char *dir, const char *const suffixes[], size_t *n) {
    DIR *d = opendir(dir);
    *n = 0;
    if (d == NULL)
        return NULL;
    size_t cap = 64, count = 0;
    char **names = malloc(cap * sizeof *names);
    struct dirent *entry;
    while (names != NULL && (entry = readdir(d)) != NULL) {
        int wanted = 0;
        for (size_t i = 0; suffixes[i] != NULL; i++)
            wanted |= has_suffix(entry->d_name, suffixes[i]);
        if (!wanted)
            continue;
        if (count == cap) {
            char **grown = realloc(names, 2 * cap * sizeof *names);
            if (grown == NULL) {
                run_tool_free_list(names, count);
                names = NULL;
                break;
            }
            names = grown;
            cap *= 2;
        }
        names[count] = strdup(entry->d_name);
        if (names[count] == NULL) {
            run_tool_free_list(names, count);
            names = NULL;
            break;
        }
        count++;
    }
    closedir(d);
    if (names == NULL)
        return NULL;
    qsort(names, count, sizeof *names, compare_names);
    *n = count;
    return names;
}

void run_tool_free_list(char **names, size_t n) {
    if (names == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

char *run_tool_path(const char *dir, const char *name) {
    size_t a = strlen(dir), b = strlen(name);
    char *path = malloc(a + b + 2);
    if (path == NULL)
        abort();
    memcpy(path, dir, a);
    path[a] = '/';
    memcpy(path + a + 1, name, b + 1);
    return path;
}
