/* Files and descriptors for the POSIX hosts (platform-internal.h): what the sinks and the reader's
 * input use, so that neither includes an OS header. */
#if defined(__linux__)
#define _GNU_SOURCE /* fallocate(2) */
#endif
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mantra/status.h"
#include "platform-internal.h"

#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

static int io_fail(int code, char *err, size_t errlen, const char *what, int e) {
    if (err && errlen)
        snprintf(err, errlen, "%s%s", what, strerror(e));
    return code;
}

static int open_retry(const char *path, int flags) {
    int fd;
    do
        fd = open(path, flags, 0666);
    while (fd < 0 && errno == EINTR);
    return fd;
}

int mantra_pal_file_create(const char *path, char *err, size_t errlen) {
    int fd = open_retry(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC);
    return fd >= 0 ? fd : io_fail(MANTRA_EIO, err, errlen, "", errno);
}

int mantra_pal_file_open_read(const char *path, char *err, size_t errlen) {
    int fd = open_retry(path, O_RDONLY | O_CLOEXEC);
    return fd >= 0 ? fd : io_fail(MANTRA_EIO, err, errlen, "", errno);
}

int mantra_pal_write_all(int fd, const void *data, size_t size, uint64_t *done, char *err, size_t errlen) {
    const unsigned char *p = data;
    while (size > 0) {
        ssize_t n = write(fd, p, size);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                struct pollfd pfd = {.fd = fd, .events = POLLOUT, .revents = 0};
                if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
                    return io_fail(MANTRA_EIO, err, errlen, "poll: ", errno);
                continue;
            }
            int e = errno;
            if (err && errlen)
                snprintf(err, errlen, "write: %s (after %llu bytes)", strerror(e),
                         (unsigned long long)(done ? *done : 0));
            return MANTRA_EIO;
        }
        if (n == 0) {
            if (err && errlen)
                snprintf(err, errlen, "write: no progress (after %llu bytes)", (unsigned long long)(done ? *done : 0));
            return MANTRA_EIO;
        }
        p += n;
        size -= (size_t)n;
        if (done)
            *done += (uint64_t)n;
    }
    return MANTRA_OK;
}

int64_t mantra_pal_read(int fd, void *buf, size_t size, char *err, size_t errlen) {
    for (;;) {
        ssize_t k = read(fd, buf, size);
        if (k >= 0)
            return (int64_t)k;
        if (errno != EINTR)
            return io_fail(MANTRA_EIO, err, errlen, "", errno);
    }
}

int mantra_pal_close(int fd, char *err, size_t errlen) {
    if (close(fd) != 0 && errno != EINTR)
        return io_fail(MANTRA_EIO, err, errlen, "", errno);
    return MANTRA_OK;
}

int mantra_pal_file_reserve(int fd, uint64_t off, uint64_t len) {
#if defined(__linux__) && defined(FALLOC_FL_KEEP_SIZE)
    return fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len) == 0 ? 0 : -1;
#else
    (void)fd, (void)off, (void)len;
    return -1; /* the writes allocate as they go (WASI, other hosts) */
#endif
}

int mantra_pal_file_trim(int fd, uint64_t size, char *err, size_t errlen) {
    if (ftruncate(fd, (off_t)size) != 0)
        return io_fail(MANTRA_EIO, err, errlen, "", errno);
    return MANTRA_OK;
}

int mantra_pal_file_size(int fd, uint64_t *size) {
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        *size = (uint64_t)st.st_size;
        return 1;
    }
    return 0;
}
