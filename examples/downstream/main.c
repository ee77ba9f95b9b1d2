/* main.c - a downstream program using mantra through code generated from app.yaml.
 *
 * Registers the generated provider and an in-process listener, writes events with the
 * generated writers, decodes every payload the listener receives with the generated readers
 * and checks the values. Exit status 0 when everything round-tripped, 1 otherwise.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mantra/decode.h"
#include "mantra/event.h"

#include "app_readers.h"
#include "app_registry.h"
#include "app_writers.h"

#define URL_ASCII "http://x"
#define URL_UNICODE "http://example.test/caf\u00e9?q=\u20ac"

struct expectations {
    int starts_seen;
    int stops_seen;
    int failures;
};

static void fail(struct expectations *ex, const char *what) {
    fprintf(stderr, "downstream_app: MISMATCH: %s\n", what);
    ex->failures++;
}

static void on_event(void *ctx, const mantra_event_desc *desc, const uint8_t *payload, size_t size) {
    struct expectations *ex = ctx;
    char url[256];

    if (desc->id == 1) {
        mantra_App_RequestStart_fields f;
        if (mantra_App_RequestStart_decode(payload, size, 8, &f) != 0) {
            fail(ex, "RequestStart payload does not decode");
            return;
        }
        mantra_str16_to_utf8(f.Url, url, sizeof url);
        printf("  %s/v%u  Url=\"%s\" Port=%u  (%zu bytes)\n", desc->name, (unsigned)desc->version, url,
               (unsigned)f.Port, size);
        const char *want = ex->starts_seen == 0 ? URL_ASCII : URL_UNICODE;
        unsigned want_port = ex->starts_seen == 0 ? 8080u : 443u;
        if (!mantra_str16_equals_utf8(f.Url, want) || strcmp(url, want) != 0)
            fail(ex, "RequestStart.Url");
        if (f.Port != want_port)
            fail(ex, "RequestStart.Port");
        ex->starts_seen++;
    } else if (desc->id == 2) {
        mantra_App_RequestStop_fields f;
        if (mantra_App_RequestStop_decode(payload, size, 8, &f) != 0) {
            fail(ex, "RequestStop payload does not decode");
            return;
        }
        printf("  %s/v%u  Status=%" PRIu32 " Bytes=%" PRIu64 "  (%zu bytes)\n", desc->name, (unsigned)desc->version,
               f.Status, f.Bytes, size);
        if (f.Status != 200u)
            fail(ex, "RequestStop.Status");
        if (f.Bytes != UINT64_C(12345678901))
            fail(ex, "RequestStop.Bytes");
        ex->stops_seen++;
    } else {
        fail(ex, "an event that app.yaml does not declare");
    }
}

int main(void) {
    struct expectations ex = {0, 0, 0};

    if (mantra_register_provider(&mantra_App_provider) != 0) {
        fprintf(stderr, "downstream_app: mantra_register_provider failed\n");
        return 1;
    }
    mantra_set_listener(on_event, &ex);

    printf("downstream_app: writing Example-App events\n");
    int written = 0;
    if (MANTRA_App_RequestStart_enabled()) {
        if (mantra_App_RequestStart_emit(URL_ASCII, 8080) == MANTRA_WRITE_OK)
            written++;
        if (mantra_App_RequestStart_write(URL_UNICODE, 443) == MANTRA_WRITE_OK)
            written++;
    }
    if (MANTRA_App_RequestStop_enabled()) {
        if (mantra_App_RequestStop_emit(200, UINT64_C(12345678901)) == MANTRA_WRITE_OK)
            written++;
    }
    mantra_set_listener(NULL, NULL);

    if (written != 3)
        fail(&ex, "the writers did not report 3 events written (is the listener enabling them?)");
    if (ex.starts_seen != 2)
        fail(&ex, "the listener did not see 2 RequestStart events");
    if (ex.stops_seen != 1)
        fail(&ex, "the listener did not see 1 RequestStop event");

    if (ex.failures != 0) {
        fprintf(stderr, "downstream_app: FAILED (%d mismatches)\n", ex.failures);
        return 1;
    }
    printf("downstream_app: OK (3 events written, decoded and checked)\n");
    return 0;
}
