/* Names and descriptions of the status codes (mantra/status.h), one row per code. */
#include "mantra/status.h"

static const struct {
    const char *name;
    const char *text;
} STATUS[] = {
    /*  0 */ {"MANTRA_OK", "success"},
    /* -1 */ {"MANTRA_EINVAL", "invalid argument or call in the wrong state"},
    /* -2 */ {"MANTRA_ENOMEM", "out of memory"},
    /* -3 */ {"MANTRA_EIO", "I/O error"},
    /* -4 */ {"MANTRA_ENOSPC", "buffer or table full"},
    /* -5 */ {"MANTRA_ESTATE", "object closed, finished or failed earlier"},
    /* -6 */ {"MANTRA_ERANGE", "value too large for the format"},
    /* -7 */ {"MANTRA_EORDER", "events out of order"},
    /* -8 */ {"MANTRA_EFORMAT", "malformed input"},
    /* -9 */ {"MANTRA_ETRUNCATED", "input ends early"},
    /* -10 */ {"MANTRA_EUNSUPPORTED", "not supported"},
    /* -11 */ {"MANTRA_ENOENT", "not found"},
    /* -12 */ {"MANTRA_ETIMEDOUT", "timed out"},
    /* -13 */ {"MANTRA_EDATAINCOMPLETE", "data incomplete (not there at this point)"},
    /* -14 */ {"MANTRA_EFLAGS", "not enabled by the flags chosen at start"},
};
#define STATUS_COUNT (sizeof STATUS / sizeof STATUS[0])

/* The row of code, or -1 (no negation of INT_MIN). */
static int row(int code) { return code <= 0 && code > -(int)STATUS_COUNT ? -code : -1; }

const char *mantra_status_name(int code) { return row(code) >= 0 ? STATUS[row(code)].name : "?"; }
const char *mantra_strerror(int code) { return row(code) >= 0 ? STATUS[row(code)].text : "unknown status"; }
