/* Payload size and serialisation (mantra_payload_size, mantra_payload_serialize; mantra/event.h):
 * how a generated writer's list of data descriptors becomes the bytes of an event payload (scalars
 * and blobs as given, UTF-8 arguments checked and converted to NUL-terminated UTF-16LE). A leaf:
 * it calls only the common UTF helpers. */
#include <string.h>

#include "common/utf-internal.h"
#include "mantra/event.h"

int64_t mantra_payload_size(const mantra_data *data, uint32_t count) {
    uint64_t total = 0;
    for (uint32_t i = 0; i < count; i++) {
        const mantra_data *d = &data[i];
        uint64_t n;
        switch (d->kind) {
        case MANTRA_DATA_BYTES:
            n = d->size;
            break;
        case MANTRA_DATA_UTF8_AS_UTF16Z: {
            size_t bytes;
            size_t units = d->ptr ? cm_utf8_utf16_units(d->ptr, &bytes) : 0;
            if (units == SIZE_MAX)
                return MANTRA_WRITE_BAD_STRING;
            n = ((uint64_t)units + 1) * 2;
            break;
        }
        case MANTRA_DATA_UTF16Z: {
            const uint16_t *s = d->ptr;
            uint64_t units = 0;
            if (s)
                while (s[units] != 0 && units <= MANTRA_MAX_PAYLOAD)
                    units++;
            n = (units + 1) * 2;
            break;
        }
        case MANTRA_DATA_UTF8Z: {
            size_t bytes = 0;
            if (d->ptr && cm_utf8_utf16_units(d->ptr, &bytes) == SIZE_MAX)
                return MANTRA_WRITE_BAD_STRING;
            n = (uint64_t)bytes + 1;
            break;
        }
        default:
            return MANTRA_WRITE_BAD_STRING;
        }
        if (n > MANTRA_MAX_PAYLOAD)
            return MANTRA_WRITE_TOO_LARGE;
        total += n;
        if (total > MANTRA_MAX_PAYLOAD)
            return MANTRA_WRITE_TOO_LARGE;
    }
    return (int64_t)total;
}

int64_t mantra_payload_serialize(const mantra_data *data, uint32_t count, uint8_t *out, size_t out_size) {
    int64_t need = mantra_payload_size(data, count);
    if (need < 0)
        return need;
    if ((uint64_t)need > out_size)
        return MANTRA_WRITE_TOO_LARGE;
    size_t o = 0;
    for (uint32_t i = 0; i < count; i++) {
        const mantra_data *d = &data[i];
        switch (d->kind) {
        case MANTRA_DATA_BYTES:
            if (d->ptr)
                memcpy(out + o, d->ptr, (size_t)d->size);
            else
                memset(out + o, 0, (size_t)d->size);
            o += (size_t)d->size;
            break;
        case MANTRA_DATA_UTF8_AS_UTF16Z:
            if (d->ptr)
                o += cm_utf8_to_utf16le(d->ptr, strlen(d->ptr), out + o);
            out[o++] = 0;
            out[o++] = 0;
            break;
        case MANTRA_DATA_UTF16Z: {
            const uint16_t *s = d->ptr;
            for (size_t k = 0; s && s[k] != 0; k++) {
                out[o++] = (uint8_t)s[k];
                out[o++] = (uint8_t)(s[k] >> 8);
            }
            out[o++] = 0;
            out[o++] = 0;
            break;
        }
        default: { /* MANTRA_DATA_UTF8Z */
            size_t n = d->ptr ? strlen(d->ptr) : 0;
            if (n)
                memcpy(out + o, d->ptr, n);
            o += n;
            out[o++] = 0;
            break;
        }
        }
    }
    return (int64_t)o;
}
