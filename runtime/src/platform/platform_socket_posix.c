/* Sockets and process facts of the diagnostics server for POSIX hosts (platform-internal.h,
 * "sockets"). After the .NET runtime's socket PAL (dotnet/runtime,
 * src/native/eventpipe/ds-ipc-pal-socket.c): SOCK_STREAM, close-on-exec, fchmod(0600) before bind
 * on Linux, listen backlog 255, accept4 with SOCK_CLOEXEC. Unlike it, every descriptor here is
 * non-blocking and sends pass MSG_NOSIGNAL, so a gone peer never raises SIGPIPE in the host.
 * Excluded from the WASI build (CMakeLists.txt), where platform_wasi.c answers
 * MANTRA_EUNSUPPORTED. */
#define _GNU_SOURCE /* accept4, SOCK_CLOEXEC, SO_PEERCRED, struct ucred, environ */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/random.h>
#endif

#include "mantra/status.h"
#include "platform-internal.h"

extern char **environ;

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0 /* macOS: SO_NOSIGPIPE is set on the socket instead */
#endif

static int sock_fail(int code, char *err, size_t errlen, const char *what, int e) {
    if (err && errlen)
        snprintf(err, errlen, "%s: %s", what, strerror(e));
    return code;
}

static int set_flags(int fd) {
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0)
        return -1;
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0)
        return -1;
#if defined(SO_NOSIGPIPE)
    int one = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
#endif
    return 0;
}

static int new_socket(int family, char *err, size_t errlen) {
    int fd = socket(family, SOCK_STREAM, 0);
    if (fd < 0)
        return sock_fail(MANTRA_EIO, err, errlen, "socket", errno);
    if (set_flags(fd) != 0) {
        int e = errno;
        close(fd);
        return sock_fail(MANTRA_EIO, err, errlen, "fcntl", e);
    }
    return fd;
}

int mantra_pal_sockets_available(void) { return 1; }

static int unix_addr(struct sockaddr_un *a, const char *path, char *err, size_t errlen) {
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof a->sun_path) {
        if (err && errlen)
            snprintf(err, errlen, "socket path of %zu bytes does not fit (at most %zu)", n, sizeof a->sun_path - 1);
        return MANTRA_ERANGE;
    }
    memcpy(a->sun_path, path, n + 1);
    return 0;
}

int mantra_pal_unix_listen(const char *path, char *err, size_t errlen) {
    struct sockaddr_un a;
    int rc = unix_addr(&a, path, err, errlen);
    if (rc)
        return rc;
    int fd = new_socket(AF_UNIX, err, errlen);
    if (fd < 0)
        return fd;
    /* Only this user may connect: 0600 on the socket before bind (Linux takes the socket's mode
     * for the file), and a umask around bind for the systems that do not. */
    (void)fchmod(fd, S_IRUSR | S_IWUSR);
    mode_t old = umask(077);
    int b = bind(fd, (struct sockaddr *)&a, sizeof a);
    int e = errno;
    umask(old);
    if (b != 0) {
        close(fd);
        return sock_fail(MANTRA_EIO, err, errlen, path, e);
    }
    if (listen(fd, 255) != 0) {
        e = errno;
        close(fd);
        unlink(path);
        return sock_fail(MANTRA_EIO, err, errlen, "listen", e);
    }
    return fd;
}

static int resolve(const char *host, const char *port, int passive, struct addrinfo **out, char *err, size_t errlen) {
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = passive ? AI_PASSIVE : 0;
    int g = getaddrinfo(host && host[0] ? host : NULL, port, &hints, out);
    if (g != 0) {
        if (err && errlen)
            snprintf(err, errlen, "%s:%s: %s", host ? host : "", port, gai_strerror(g));
        return MANTRA_EIO;
    }
    return 0;
}

int mantra_pal_tcp_listen(const char *host, const char *port, char *err, size_t errlen) {
    struct addrinfo *ai;
    int rc = resolve(host, port, 1, &ai, err, errlen);
    if (rc)
        return rc;
    int fd = MANTRA_EIO, e = 0;
    for (struct addrinfo *p = ai; p; p = p->ai_next) {
        fd = new_socket(p->ai_family, err, errlen);
        if (fd < 0)
            continue;
        int one = 1;
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, p->ai_addr, p->ai_addrlen) == 0 && listen(fd, 255) == 0)
            break;
        e = errno;
        close(fd);
        fd = sock_fail(MANTRA_EIO, err, errlen, "bind", e);
    }
    freeaddrinfo(ai);
    return fd;
}

/* Waits for a non-blocking connect to finish. */
static int finish_connect(int fd, int started, uint32_t timeout_ms, char *err, size_t errlen) {
    if (started == 0)
        return fd;
    if (errno != EINPROGRESS && errno != EAGAIN) {
        int e = errno;
        close(fd);
        return sock_fail(MANTRA_EIO, err, errlen, "connect", e);
    }
    struct pollfd p = {.fd = fd, .events = POLLOUT, .revents = 0};
    int n = poll(&p, 1, (int)timeout_ms);
    int soerr = 0;
    socklen_t len = sizeof soerr;
    if (n <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0 || soerr != 0) {
        close(fd);
        return sock_fail(MANTRA_EIO, err, errlen, "connect", n <= 0 ? ETIMEDOUT : soerr);
    }
    return fd;
}

int mantra_pal_unix_connect(const char *path, uint32_t timeout_ms, char *err, size_t errlen) {
    struct sockaddr_un a;
    int rc = unix_addr(&a, path, err, errlen);
    if (rc)
        return rc;
    int fd = new_socket(AF_UNIX, err, errlen);
    if (fd < 0)
        return fd;
    return finish_connect(fd, connect(fd, (struct sockaddr *)&a, sizeof a), timeout_ms, err, errlen);
}

int mantra_pal_tcp_connect(const char *host, const char *port, uint32_t timeout_ms, char *err, size_t errlen) {
    struct addrinfo *ai;
    int rc = resolve(host, port, 0, &ai, err, errlen);
    if (rc)
        return rc;
    int fd = MANTRA_EIO;
    for (struct addrinfo *p = ai; p; p = p->ai_next) {
        fd = new_socket(p->ai_family, err, errlen);
        if (fd < 0)
            continue;
        fd = finish_connect(fd, connect(fd, p->ai_addr, p->ai_addrlen), timeout_ms, err, errlen);
        if (fd >= 0)
            break;
    }
    freeaddrinfo(ai);
    return fd;
}

int mantra_pal_accept(int listen_fd, char *err, size_t errlen) {
    for (;;) {
        int fd = accept(listen_fd, NULL, NULL);
        if (fd >= 0) {
            if (set_flags(fd) != 0) {
                int e = errno;
                close(fd);
                return sock_fail(MANTRA_EIO, err, errlen, "fcntl", e);
            }
            return fd;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNABORTED)
            return MANTRA_PAL_WOULDBLOCK;
        return sock_fail(MANTRA_EIO, err, errlen, "accept", errno);
    }
}

int mantra_pal_peer_trusted(int fd) {
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0 || ss.ss_family != AF_UNIX)
        return 1;
#if defined(SO_PEERCRED)
    struct ucred cr;
    socklen_t len = sizeof cr;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0)
        return 0;
    return cr.uid == geteuid() || cr.uid == 0;
#elif defined(__APPLE__) || defined(__FreeBSD__) || defined(__NetBSD__) || defined(__OpenBSD__)
    uid_t uid;
    gid_t gid;
    if (getpeereid(fd, &uid, &gid) != 0)
        return 0;
    return uid == geteuid() || uid == 0;
#else
    return 1; /* the socket file's mode 0600 is the only guard */
#endif
}

int64_t mantra_pal_recv(int fd, void *buf, size_t size, char *err, size_t errlen) {
    for (;;) {
        ssize_t n = recv(fd, buf, size, 0);
        if (n >= 0)
            return (int64_t)n;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return MANTRA_PAL_WOULDBLOCK;
        return sock_fail(MANTRA_EIO, err, errlen, "recv", errno);
    }
}

int mantra_pal_send_all(int fd, const void *data, size_t size, uint32_t timeout_ms, uint64_t *done, char *err,
                        size_t errlen) {
    const unsigned char *p = data;
    while (size > 0) {
        ssize_t n = send(fd, p, size, MSG_NOSIGNAL);
        if (n > 0) {
            p += n;
            size -= (size_t)n;
            if (done)
                *done += (uint64_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return sock_fail(MANTRA_EIO, err, errlen, "send", errno);
        struct pollfd pfd = {.fd = fd, .events = POLLOUT, .revents = 0};
        int r = poll(&pfd, 1, (int)timeout_ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return sock_fail(MANTRA_EIO, err, errlen, "poll", errno);
        if (r == 0) {
            if (err && errlen)
                snprintf(err, errlen, "send: the peer took nothing for %u ms", (unsigned)timeout_ms);
            return MANTRA_ESTATE;
        }
    }
    return MANTRA_OK;
}

int mantra_pal_wake_open(int fds[2]) {
    int p[2];
    if (pipe(p) != 0)
        return MANTRA_EIO;
    if (set_flags(p[0]) != 0 || set_flags(p[1]) != 0) {
        close(p[0]);
        close(p[1]);
        return MANTRA_EIO;
    }
    fds[0] = p[0];
    fds[1] = p[1];
    return MANTRA_OK;
}

void mantra_pal_wake(int fd) {
    const uint8_t b = 1;
    ssize_t r;
    do
        r = write(fd, &b, 1);
    while (r < 0 && errno == EINTR); /* EAGAIN: full, so readable already */
}

void mantra_pal_wake_clear(int fd) {
    uint8_t b[64];
    while (mantra_pal_read(fd, b, sizeof b, NULL, 0) > 0) /* until EAGAIN: empty */
        ;
}

int mantra_pal_poll(mantra_pal_pollfd *fds, size_t n, uint32_t timeout_ms) {
    struct pollfd local[64];
    struct pollfd *p = n <= 64 ? local : malloc(n * sizeof *p);
    if (!p)
        return MANTRA_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        p[i].fd = fds[i].fd;
        p[i].events = (short)(((fds[i].events & MANTRA_PAL_POLLIN) ? POLLIN : 0) |
                              ((fds[i].events & MANTRA_PAL_POLLOUT) ? POLLOUT : 0));
        p[i].revents = 0;
    }
    int r;
    do
        r = poll(p, (nfds_t)n, (int)timeout_ms);
    while (r < 0 && errno == EINTR);
    for (size_t i = 0; i < n; i++)
        fds[i].revents = (short)(((p[i].revents & POLLIN) ? MANTRA_PAL_POLLIN : 0) |
                                 ((p[i].revents & POLLOUT) ? MANTRA_PAL_POLLOUT : 0) |
                                 ((p[i].revents & (POLLHUP | POLLERR | POLLNVAL)) ? MANTRA_PAL_POLLHUP : 0));
    if (p != local)
        free(p);
    return r < 0 ? MANTRA_EIO : r;
}

void mantra_pal_socket_shutdown(int fd) { (void)shutdown(fd, SHUT_RDWR); }

int mantra_pal_unlink(const char *path) { return unlink(path) == 0 ? MANTRA_OK : MANTRA_EIO; }

int mantra_pal_list_dir(const char *dir, int (*fn)(void *ctx, const char *name), void *ctx) {
    DIR *d = opendir(dir);
    if (!d)
        return MANTRA_EIO;
    int rc = 0;
    struct dirent *e;
    while (!rc && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            rc = fn(ctx, e->d_name);
    closedir(d);
    return rc;
}

int64_t mantra_pal_file_mtime_ns(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0)
        return MANTRA_EIO;
    return (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
}

int mantra_pal_process_alive(uint64_t pid) {
    if (pid == 0 || pid > (uint64_t)INT32_MAX)
        return 0;
    return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

int mantra_pal_file_mode(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0)
        return MANTRA_EIO;
    return (int)(st.st_mode & 07777);
}

uint64_t mantra_pal_start_key(void) {
    return mantra_pal_proc_stat_field(22); /* starttime */
}

void mantra_pal_random(void *out, size_t size) {
    unsigned char *o = out;
    size_t got = 0;
#if defined(__linux__)
    while (got < size) {
        ssize_t n = getrandom(o + got, size - got, 0);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
#endif
    if (got < size) {
        FILE *f = fopen("/dev/urandom", "rb");
        if (f) {
            got += fread(o + got, 1, size - got, f);
            fclose(f);
        }
    }
    uint64_t x = mantra_pal_now_ns() ^ ((uint64_t)getpid() << 32);
    for (; got < size; got++) { /* splitmix64 of the clock: unique enough for a cookie */
        x += 0x9e3779b97f4a7c15u;
        uint64_t z = x;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
        o[got] = (unsigned char)(z ^ (z >> 31));
    }
}

const char *mantra_pal_os_name(void) {
#if defined(__linux__)
    return "Linux";
#elif defined(__APPLE__)
    return "macOS";
#elif defined(__FreeBSD__)
    return "FreeBSD";
#elif defined(__NetBSD__)
    return "NetBSD";
#else
    return "Unix";
#endif
}

char **mantra_pal_environ(void) { return environ; }
