/* mantra/status.h - the status codes of every libmantra API.
 *
 * Functions that can fail return 0 (MANTRA_OK), a non-negative count where they say so, or one of
 * the negative codes below. Objects keep a human-readable text of their last failure, read with
 * `mantra_<object>_last_error()`; mantra_strerror() gives a fixed description of a code.
 */
#ifndef MANTRA_STATUS_H
#define MANTRA_STATUS_H

/* Every public header wraps its declarations in MANTRA_BEGIN_DECLS ... MANTRA_END_DECLS: C linkage
 * for C++, and default visibility, so that libmantra (compiled with -fvisibility=hidden) exports
 * exactly the functions the public headers declare. */
#if defined(__GNUC__) || defined(__clang__)
#define MANTRA_VISIBILITY_PUSH_ _Pragma("GCC visibility push(default)")
#define MANTRA_VISIBILITY_POP_ _Pragma("GCC visibility pop")
#else
#define MANTRA_VISIBILITY_PUSH_
#define MANTRA_VISIBILITY_POP_
#endif
#ifdef __cplusplus
#define MANTRA_BEGIN_DECLS extern "C" { MANTRA_VISIBILITY_PUSH_
#define MANTRA_END_DECLS MANTRA_VISIBILITY_POP_ }
#else
#define MANTRA_BEGIN_DECLS MANTRA_VISIBILITY_PUSH_
#define MANTRA_END_DECLS MANTRA_VISIBILITY_POP_
#endif

MANTRA_BEGIN_DECLS

enum mantra_status {
    MANTRA_OK = 0,
    MANTRA_EINVAL = -1,       /* bad argument (NULL, out of range, unknown id), or call in the wrong state */
    MANTRA_ENOMEM = -2,       /* allocation failed */
    MANTRA_EIO = -3,          /* the operating system reported an I/O error (open, read, write) */
    MANTRA_ENOSPC = -4,       /* a fixed-size buffer or table is full */
    MANTRA_ESTATE = -5,       /* the object is closed, finished or failed earlier */
    MANTRA_ERANGE = -6,       /* a value is too large for the format (payload, block, count) */
    MANTRA_EORDER = -7,       /* events handed in an order the chosen mode does not allow */
    MANTRA_EFORMAT = -8,      /* the bytes break the format (corrupt, or not a trace) */
    MANTRA_ETRUNCATED = -9,   /* the input ends before the end-of-stream marker */
    MANTRA_EUNSUPPORTED = -10, /* not available in this build, or a format version not read (NetPerf V3) */
    MANTRA_ENOENT = -11,       /* no such process, file or endpoint */
    MANTRA_ETIMEDOUT = -12,    /* nothing came within the time allowed */
    /* the data is not there at this point: a profiler's Enter of a resumption has no arguments, a
     * Leave at a suspension no return value (mirrors CoreCLR's CORPROF_E_DATAINCOMPLETE,
     * 0x80131351, mantra/profiler.h) */
    MANTRA_EDATAINCOMPLETE = -13,
    /* asked for what the flags chosen at start did not enable (mirrors CORPROF_E_INCONSISTENT_WITH_FLAGS,
     * 0x80131374: arguments without MANTRA_PROF_ENABLE_ARGS, ...) */
    MANTRA_EFLAGS = -14
};

/* The constant's name ("MANTRA_EIO"); "MANTRA_OK" for 0; "?" for anything else. */
const char *mantra_status_name(int code);
/* A short description ("I/O error"); "unknown status" for anything else. */
const char *mantra_strerror(int code);

MANTRA_END_DECLS

#endif /* MANTRA_STATUS_H */
