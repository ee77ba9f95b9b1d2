/* Names and descriptions of the status codes (mantra/status.h). */
#include "mantra/status.h"

const char *mantra_status_name(int code) {
    switch (code) {
    case MANTRA_OK: return "MANTRA_OK";
    case MANTRA_EINVAL: return "MANTRA_EINVAL";
    case MANTRA_ENOMEM: return "MANTRA_ENOMEM";
    case MANTRA_EIO: return "MANTRA_EIO";
    case MANTRA_ENOSPC: return "MANTRA_ENOSPC";
    case MANTRA_ESTATE: return "MANTRA_ESTATE";
    case MANTRA_ERANGE: return "MANTRA_ERANGE";
    case MANTRA_EORDER: return "MANTRA_EORDER";
    case MANTRA_EFORMAT: return "MANTRA_EFORMAT";
    case MANTRA_ETRUNCATED: return "MANTRA_ETRUNCATED";
    case MANTRA_EUNSUPPORTED: return "MANTRA_EUNSUPPORTED";
    default: return "?";
    }
}

const char *mantra_strerror(int code) {
    switch (code) {
    case MANTRA_OK: return "success";
    case MANTRA_EINVAL: return "invalid argument or call in the wrong state";
    case MANTRA_ENOMEM: return "out of memory";
    case MANTRA_EIO: return "I/O error";
    case MANTRA_ENOSPC: return "buffer or table full";
    case MANTRA_ESTATE: return "object closed, finished or failed earlier";
    case MANTRA_ERANGE: return "value too large for the format";
    case MANTRA_EORDER: return "events out of order";
    case MANTRA_EFORMAT: return "malformed input";
    case MANTRA_ETRUNCATED: return "input ends early";
    case MANTRA_EUNSUPPORTED: return "not supported";
    default: return "unknown status";
    }
}
