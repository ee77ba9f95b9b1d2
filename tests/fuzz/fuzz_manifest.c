/* Fuzz target: the run-time manifest loader (memory input) and the manifest-driven payload decoder.
 * Input: YAML manifest text, optionally followed by a NUL byte and a payload. When the manifest loads,
 * the payload (or, without one, the input itself) is decoded with every template of every provider, with
 * 4- and 8-byte pointers, by a visitor that reads every value it is shown. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mantra/manifest.h"

static int touch(void *ctx, const mantra_value *v) {
    size_t *sum = ctx;
    char buf[64];
    *sum += (unsigned char)v->name[0] + (unsigned char)v->manifest_field->name[0] + v->type + v->depth +
            v->offset + v->size + v->count + (size_t)v->index;
    if (v->map_text != NULL)
        *sum += strlen(v->map_text);
    if (v->type == MANTRA_TYPE_STRING) {
        mantra_str16 s = {v->data, v->count};
        *sum += mantra_str16_to_utf8(s, buf, sizeof buf);
    } else if (v->size > 0 && v->data != NULL) {
        *sum += v->data[v->size - 1];
    }
    *sum += (size_t)v->u;
    return 0;
}

static const mantra_field_visitor touch_all = {touch, touch, touch, touch, touch};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *nul = memchr(data, 0, size);
    size_t text_size = nul != NULL ? (size_t)(nul - data) : size;
    const uint8_t *payload = nul != NULL ? nul + 1 : data;
    size_t payload_size = nul != NULL ? size - text_size - 1 : size;

    mantra_manifest_error *err = NULL;
    mantra_manifest *m = mantra_manifest_load_memory(data, text_size, "fuzz.yaml", &err);
    if (m == NULL) {
        char buf[256];
        if (err != NULL) {
            (void)mantra_manifest_error_format(err, buf, sizeof buf);
            (void)mantra_manifest_error_note(err);
        }
        mantra_manifest_error_free(err);
        return 0;
    }
    size_t sum = 0;
    for (uint32_t i = 0; i < mantra_manifest_provider_count(m); i++) {
        const mantra_manifest_provider *p = mantra_manifest_provider_at(m, i);
        if (mantra_manifest_find_provider(m, p->name) == NULL || mantra_manifest_find_provider_by_guid(m, &p->guid) == NULL)
            abort();
        for (uint32_t j = 0; j < p->event_count; j++)
            if (mantra_manifest_find_event(p, p->events[j].id, p->events[j].version) != &p->events[j])
                abort();
        for (uint32_t t = 0; t < p->template_count; t++) {
            mantra_manifest_decode_info info;
            (void)mantra_manifest_decode(&p->templates[t], payload, payload_size, 8, &touch_all, &sum, &info);
            (void)mantra_manifest_decode(&p->templates[t], payload, payload_size, 4, &touch_all, &sum, NULL);
        }
        for (uint32_t k = 0; k < p->map_count; k++) {
            char buf[32];
            (void)mantra_manifest_map_format(&p->maps[k], sum, buf, sizeof buf);
        }
    }
    mantra_manifest_free(m);
    sink = sum;
    return 0;
}
