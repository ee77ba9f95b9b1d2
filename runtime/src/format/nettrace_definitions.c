/* nettrace_definitions.c - the nettrace writer's event definitions: a key per event description
 * (or raw metadata blob) and its metadata record, int32 MetadataId + UTF-16 provider name + NUL +
 * the V5 metadata blob from EventId on. The metadata id is assigned when an event first uses the
 * definition (nettrace_event_rows.c).
 *
 * Sources: dotnet/runtime, src/native/eventpipe/ep-config.c (ep_config_build_event_metadata_event:
 * the record layout) and ep-event.c (the minimal metadata of an event without a generated blob);
 * microsoft/perfview, src/TraceEvent/EventPipe/EventPipeMetadata.cs (ReadV5OrLower: what TraceEvent
 * reads). */
#include <stdlib.h>
#include <string.h>

#include "common/utf-internal.h"
#include "format/nettrace-internal.h"

/* Bytes of a metadata record: int32 MetadataId, UTF-16 provider name + NUL, then the blob from
 * EventId on; SIZE_MAX when the name is not UTF-8. *bytes: the name's UTF-8 bytes. */
static size_t record_size(const char *provider, size_t blob_size, size_t *bytes) {
    size_t units = cm_utf8_utf16_units(provider, bytes);
    return units == SIZE_MAX ? SIZE_MAX : 4 + (units + 1) * 2 + blob_size;
}

/* The minimal metadata of an event without a generated blob (mantra_nettrace_add_event): EventId,
 * an empty name, Keywords, Version, Level, FieldCount 0. */
#define MINIMAL_METADATA 26u

int nw_event_fits(const mantra_provider_desc *provider, const mantra_event_desc *desc) {
    size_t bytes;
    if (!provider || !provider->name || !desc || (!desc->metadata && desc->metadata_size))
        return 0;
    size_t size = record_size(provider->name, desc->metadata_size ? desc->metadata_size : MINIMAL_METADATA, &bytes);
    return size != SIZE_MAX && size <= MANTRA_MAX_PAYLOAD;
}

static int add_def(mantra_nettrace_writer *w, const mantra_event_desc *desc, const char *provider,
                   const void *blob, size_t blob_size, mantra_nettrace_event_key *key) {
    size_t bytes;
    size_t size = record_size(provider, blob_size, &bytes);
    if (size == SIZE_MAX)
        return nw_fail(w, MANTRA_EINVAL, "provider name is not valid UTF-8");
    if (size > MANTRA_MAX_PAYLOAD)
        return nw_fail(w, MANTRA_ERANGE, "metadata record of %zu bytes is over %u", size, MANTRA_MAX_PAYLOAD);
    if (cm_grow((void **)&w->defs, &w->def_cap, (size_t)w->def_count + 1, sizeof *w->defs, 16) != MANTRA_OK)
        return nw_fail(w, MANTRA_ENOMEM, "out of memory for event definitions");
    uint8_t *rec = malloc(size);
    if (!rec)
        return nw_fail(w, MANTRA_ENOMEM, "out of memory for a metadata record");
    cm_store_u32(rec, 0);
    size_t n = cm_utf8_to_utf16le(provider, bytes, rec + 4);
    rec[4 + n] = 0;
    rec[5 + n] = 0;
    if (blob_size)
        memcpy(rec + 6 + n, blob, blob_size);
    nw_event_def *d = &w->defs[w->def_count++];
    d->desc = desc;
    d->record = rec;
    d->record_size = size;
    d->metadata_id = 0;
    *key = w->def_count;
    return MANTRA_OK;
}

int mantra_nettrace_add_event_raw(mantra_nettrace_writer *w, const char *provider_name, const void *metadata,
                                  size_t metadata_size, mantra_nettrace_event_key *key) {
    if (!w || !key)
        return MANTRA_EINVAL;
    *key = 0;
    int rc = nw_check_usable(w);
    if (rc != MANTRA_OK)
        return rc;
    if (!provider_name || (!metadata && metadata_size))
        return nw_fail(w, MANTRA_EINVAL, "add_event_raw: NULL provider name or metadata");
    /* TraceEvent reads EventId, EventName, Keywords, Version and Level at least: 22 bytes minimum. */
    if (metadata_size < 22)
        return nw_fail(w, MANTRA_EINVAL, "metadata blob of %zu bytes is shorter than EventId..Level", metadata_size);
    return add_def(w, NULL, provider_name, metadata, metadata_size, key);
}

int mantra_nettrace_add_event(mantra_nettrace_writer *w, const mantra_provider_desc *provider,
                              const mantra_event_desc *desc, mantra_nettrace_event_key *key) {
    if (!w || !key)
        return MANTRA_EINVAL;
    *key = 0;
    int rc = nw_check_usable(w);
    if (rc != MANTRA_OK)
        return rc;
    if (!provider || !provider->name || !desc || (!desc->metadata && desc->metadata_size))
        return nw_fail(w, MANTRA_EINVAL, "add_event: NULL provider, name, desc or metadata");
    uint64_t h = nw_mix64((uint64_t)(uintptr_t)desc);
    if (w->desc_slots) {
        uint32_t mask = w->desc_slot_count - 1;
        for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
            uint32_t k = w->desc_slots[i];
            if (k == 0)
                break;
            if (w->defs[k - 1].desc == desc) {
                *key = k;
                return MANTRA_OK;
            }
        }
    }
    /* grow the pointer table at load 1/2 */
    if ((w->def_count + 1) * 2 > w->desc_slot_count) {
        uint32_t count = w->desc_slot_count ? w->desc_slot_count * 2 : 64;
        uint32_t *slots = calloc(count, sizeof *slots);
        if (!slots)
            return nw_fail(w, MANTRA_ENOMEM, "out of memory for the event table");
        for (uint32_t j = 0; j < w->def_count; j++) {
            if (!w->defs[j].desc)
                continue;
            uint32_t i = (uint32_t)nw_mix64((uint64_t)(uintptr_t)w->defs[j].desc) & (count - 1);
            while (slots[i])
                i = (i + 1) & (count - 1);
            slots[i] = j + 1;
        }
        free(w->desc_slots);
        w->desc_slots = slots;
        w->desc_slot_count = count;
    }
    const uint8_t *blob = desc->metadata;
    uint8_t minimal[MINIMAL_METADATA];
    size_t blob_size = desc->metadata_size;
    if (blob_size == 0) {
        /* No generated blob: minimal metadata like the runtime's (ep-event.c): id, "", keywords,
         * version, level, FieldCount 0. */
        uint8_t *p = minimal;
        p = cm_store_u32(p, desc->id);
        p = cm_store_u16(p, 0);
        p = cm_store_u64(p, desc->keywords);
        p = cm_store_u32(p, desc->version);
        p = cm_store_u32(p, desc->level);
        p = cm_store_u32(p, 0);
        blob = minimal;
        blob_size = (size_t)(p - minimal);
    }
    rc = add_def(w, desc, provider->name, blob, blob_size, key);
    if (rc != MANTRA_OK)
        return rc;
    uint32_t mask = w->desc_slot_count - 1;
    uint32_t i = (uint32_t)h & mask;
    while (w->desc_slots[i])
        i = (i + 1) & mask;
    w->desc_slots[i] = *key;
    return MANTRA_OK;
}

uint32_t mantra_nettrace_metadata_id(const mantra_nettrace_writer *w, mantra_nettrace_event_key key) {
    if (!w || key == 0 || key > w->def_count)
        return 0;
    return w->defs[key - 1].metadata_id;
}
