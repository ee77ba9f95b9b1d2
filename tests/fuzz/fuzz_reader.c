/* libFuzzer target: the nettrace reader (V4/V5 and V6 parsing, metadata parsing, field decoding)
 * in file order and in sorted (TraceEvent-order) mode, and in file order with the built-in runtime
 * providers attached (manifest/clr/ runtime.yaml and eventpipe.yaml, the manifest path: names, templates, payload checks).
 * Invariants checked: no crash, no leak, no undefined behaviour; errors carry an "offset N: " text;
 * events only point inside what they say; an event's decode_status agrees with a decode of it;
 * mantra_decode_event (through the metadata's decoding plan) shows the same values and returns the
 * same result as mantra_decode_payload walking the same fields; a manifest event's decode_status (the
 * reader's length plan of the template) equals mantra_manifest_decode's result. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mantra/manifest.h"
#include "mantra/reader.h"

#ifndef MANTRA_FUZZ_CLR_DIR
#define MANTRA_FUZZ_CLR_DIR "manifest/clr"
#endif

/* The built-in runtime providers, loaded once (NULL entries without libyaml), never freed. */
static mantra_manifest *clr[2];

static void load_clr(void) {
    static int done;
    if (done)
        return;
    done = 1;
    clr[0] = mantra_manifest_load_file(MANTRA_FUZZ_CLR_DIR "/runtime.yaml", NULL);
    clr[1] = mantra_manifest_load_file(MANTRA_FUZZ_CLR_DIR "/eventpipe.yaml", NULL);
}

static int touch(void *ctx, const mantra_value *v) {
    uint64_t *h = ctx;
    *h = *h * 31 + v->u + (uint64_t)v->i + v->count;
    for (size_t i = 0; i < v->size && i < 64; i++)
        *h += v->data[i];
    return 0;
}

static int touch_array(void *ctx, const mantra_value *v) {
    touch(ctx, v);
    return (v->count & 1) ? 1 : 0; /* skip the elements of odd-sized arrays: both paths run */
}

static const mantra_field_visitor visitor = {touch, touch, touch, touch_array, touch};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    load_clr();
    for (unsigned mode = 0; mode < 3; mode++) {
        mantra_reader_options o = {mode == 1 ? MANTRA_READER_SORTED : 0, 1u << 20};
        mantra_reader *r = mantra_reader_new(&o);
        if (r == NULL)
            return 0;
        for (size_t i = 0; mode == 2 && i < 2; i++)
            if (clr[i])
                mantra_reader_add_manifest(r, clr[i]);
        int rc = mantra_reader_open_memory(r, data, size);
        uint64_t h = 0;
        if (rc == 0) {
            const mantra_trace_event *ev;
            while ((rc = mantra_reader_next(r, &ev)) > 0) {
                for (size_t i = 0; i < ev->payload_size; i++)
                    h += ev->payload[i];
                for (size_t i = 0; i < ev->stack_count; i++)
                    h += mantra_trace_event_ip(ev, i);
                if (ev->metadata->provider[0] == '\0' && ev->metadata->name[0] == '\0')
                    h++;
                uint64_t hp = 0, hw = 0;
                int rp = mantra_decode_event(ev, &visitor, &hp);
                h += hp;
                /* the decoding plan (field_plan.c) and the walking decoder agree, value for value */
                if (!ev->metadata->fields_from_manifest) {
                    int rw = mantra_decode_payload(ev->metadata->fields, ev->metadata->field_count, ev->payload,
                                                   ev->payload_size, ev->pointer_size, &visitor, &hw);
                    if (rp != rw || hp != hw)
                        abort();
                }
                /* described events: a payload that decodes whole has status OK, and the reverse */
                int described = ev->metadata->field_count != 0 || ev->metadata->fields_from_manifest;
                if (described && (rp == 0) != (ev->decode_status == 0))
                    abort();
                /* a manifest event's status (the template's length plan, manifest_check.c) is the
                 * manifest decoder's, code for code */
                if (ev->metadata->fields_from_manifest &&
                    ev->decode_status != mantra_manifest_decode(ev->metadata->manifest_event->tpl, ev->payload,
                                                                ev->payload_size,
                                                                ev->pointer_size ? ev->pointer_size : 8, NULL, NULL,
                                                                NULL))
                    abort();
                if (ev->metadata->name == NULL)
                    abort();
            }
        }
        const char *err = mantra_reader_last_error(r);
        if (rc < 0 && rc != MANTRA_ENOMEM && strncmp(err, "offset ", 7) != 0)
            abort();
        if (rc == 0 && !mantra_reader_complete(r))
            abort();
        (void)h;
        mantra_reader_free(r);
    }
    return 0;
}
