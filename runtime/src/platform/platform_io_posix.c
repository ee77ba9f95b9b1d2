/* Files and descriptors for the POSIX hosts (platform-internal.h): what the sinks and the reader's
 * input use, so that neither includes an OS header. */
#if defined(__linux__)
#define _GNU_SOURCE /* fallocate(2) */
#endif
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
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

/* The parts in writev(2) calls of at most PARTS_PER_CALL (IOV_MAX may be as small as 16), each
 * continued after a short write from where the host stopped. */
#if defined(IOV_MAX) && IOV_MAX >= 64
#define PARTS_PER_CALL 64u
#else
#define PARTS_PER_CALL 16u
#endif
#define CALL_BYTES ((size_t)1 << 30)
int mantra_pal_writev_all(int fd, const mantra_pal_part *parts, size_t count, uint64_t *done, char *err,
                          size_t errlen) {
    struct iovec iov[PARTS_PER_CALL];
    size_t next = 0, skip = 0; /* the first part not in iov yet; bytes of it written already */
    while (next < count) {
        int n = 0;
        size_t bytes = 0; /* at most CALL_BYTES a call: more than SSIZE_MAX is EINVAL */
        for (size_t i = next; i < count && n < (int)PARTS_PER_CALL && bytes < CALL_BYTES; i++) {
            size_t off = i == next ? skip : 0;
            if (parts[i].size > off) {
                size_t len = parts[i].size - off;
                if (len > CALL_BYTES - bytes)
                    len = CALL_BYTES - bytes;
                iov[n].iov_base = (void *)((const unsigned char *)parts[i].data + off);
                iov[n].iov_len = len;
                bytes += len;
                n++;
            }
        }
        if (n == 0)
            break; /* only empty parts left */
        ssize_t k = writev(fd, iov, n);
        if (k < 0) {
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
        if (k == 0) {
            if (err && errlen)
                snprintf(err, errlen, "write: no progress (after %llu bytes)", (unsigned long long)(done ? *done : 0));
            return MANTRA_EIO;
        }
        if (done)
            *done += (uint64_t)k;
        for (size_t left = (size_t)k; next < count;) { /* past the parts the host took */
            size_t rest = parts[next].size - skip;
            if (left < rest) {
                skip += left;
                break;
            }
            left -= rest;
            next++;
            skip = 0;
        }
    }
    return MANTRA_OK;
}

int mantra_pal_write_all(int fd, const void *data, size_t size, uint64_t *done, char *err, size_t errlen) {
    mantra_pal_part part = {data, size};
    return mantra_pal_writev_all(fd, &part, 1, done, err, errlen);
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

int64_t mantra_pal_read_wait(int fd, void *buf, size_t size, char *err, size_t errlen) {
    for (;;) {
        ssize_t k = read(fd, buf, size);
        if (k >= 0)
            return (int64_t)k;
        if (errno == EAGAIN || errno == EWOULDBLOCK) { /* a non-blocking descriptor: wait for data */
            struct pollfd p = {fd, POLLIN, 0};
            if (poll(&p, 1, -1) < 0 && errno != EINTR)
                return io_fail(MANTRA_EIO, err, errlen, "", errno);
            continue;
        }
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
