/* mantra/status.h - the status codes of every libmantra API.
 *
 * Functions that can fail return 0 (MANTRA_OK), a non-negative count where they say so, or one of
 * the negative codes below. Objects keep a human-readable text of their last failure, read with
 * `mantra_<object>_last_error()`; mantra_strerror() gives a fixed description of a code.
 */
#ifndef MANTRA_STATUS_H
#define MANTRA_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/* The public API exported by libmantra (everything else has hidden visibility). */
#if defined(_WIN32)
#define MANTRA_API
#elif defined(__GNUC__) || defined(__clang__)
#define MANTRA_API __attribute__((visibility("default")))
#else
#define MANTRA_API
#endif

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
    MANTRA_EUNSUPPORTED = -10 /* not available in this build, or a format version not read (NetPerf V3) */
};

/* The constant's name ("MANTRA_EIO"); "MANTRA_OK" for 0; "?" for anything else. */
MANTRA_API const char *mantra_status_name(int code);
/* A short description ("I/O error"); "unknown status" for anything else. */
MANTRA_API const char *mantra_strerror(int code);

#ifdef __cplusplus
}
#endif

#endif /* MANTRA_STATUS_H */
