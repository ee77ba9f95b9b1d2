/* Reassembling JitInstrumentationData chunks per method by dotnet-pgo's rules (mantra/pgo.h).
 * Facts: dotnet/runtime src/coreclr/tools/dotnet-pgo/Program.cs (AddToInstrumentationData): per
 * method {Done, chunks, LastChunk = -1}; index = MethodFlags & ~0x80000000; an index that is not
 * LastChunk + 1, or any chunk once Done, removes the method's entry (all its data) and drops the
 * chunk; otherwise the chunk is appended and Done set by the final flag. A later chunk 0 starts a
 * fresh entry. */
#include <stdlib.h>
#include <string.h>

#include "common/grow-internal.h"
#include "common/hashmap-internal.h"
#include "pgo-internal.h"

typedef struct entry {
    uint64_t key;
    uint8_t *bytes;
    size_t size, cap;
    uint64_t chunks;   /* chunks appended */
    int done;
    int live;          /* 0 once discarded (the slot is not reused) */
} entry;

struct mantra_pgo_reassembler {
    entry *entries; /* every entry ever started, in start order */
    size_t count, cap;
    cm_map by_key;  /* key -> index + 1 of the live entry */
    size_t *complete; /* after finish: indexes of complete entries in order of completion */
    size_t *order;    /* entry indexes in order of completion (may name discarded ones) */
    size_t order_count, order_cap;
    size_t complete_count;
    int finished;
    mantra_pgo_reassembly_stats stats;
};

mantra_pgo_reassembler *mantra_pgo_reassembler_new(void) { return calloc(1, sizeof(mantra_pgo_reassembler)); }

void mantra_pgo_reassembler_free(mantra_pgo_reassembler *r) {
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->count; i++)
        free(r->entries[i].bytes);
    free(r->entries);
    free(r->complete);
    free(r->order);
    cm_map_free(&r->by_key);
    free(r);
}

static void discard(mantra_pgo_reassembler *r, entry *e) {
    r->stats.chunks_dropped += e->chunks + 1; /* what it held, and the offending chunk */
    free(e->bytes);
    e->bytes = NULL;
    e->size = e->cap = 0;
    e->live = 0;
    cm_map_del(&r->by_key, e->key);
}

int mantra_pgo_reassembler_add(mantra_pgo_reassembler *r, uint64_t key, uint32_t method_flags, const uint8_t *data,
                               size_t size) {
    if (r == NULL || (data == NULL && size > 0))
        return MANTRA_EINVAL;
    if (r->finished)
        return MANTRA_ESTATE;
    r->stats.chunks++;
    uint32_t index = method_flags & ~MANTRA_PGO_CHUNK_FINAL;
    uint64_t *slot = cm_map_get(&r->by_key, key);
    entry *e = slot != NULL ? &r->entries[*slot - 1] : NULL;
    if (e != NULL && (e->done || index != e->chunks)) {
        if (e->done)
            r->stats.discard_after_final++;
        else
            r->stats.discard_out_of_order++;
        discard(r, e);
        return 2;
    }
    if (e == NULL) {
        if (index != 0) { /* LastChunk is -1 for a new entry: only chunk 0 is in order */
            r->stats.discard_out_of_order++;
            r->stats.chunks_dropped++;
            return 2;
        }
        if (cm_grow((void **)&r->entries, &r->cap, r->count + 1, sizeof *r->entries, 64) != 0)
            return MANTRA_ENOMEM;
        if (cm_map_put(&r->by_key, key, r->count + 1) != 0)
            return MANTRA_ENOMEM;
        e = &r->entries[r->count++];
        memset(e, 0, sizeof *e);
        e->key = key;
        e->live = 1;
    }
    if (size > 0) {
        if (cm_grow((void **)&e->bytes, &e->cap, e->size + size, 1, 256) != 0)
            return MANTRA_ENOMEM;
        memcpy(e->bytes + e->size, data, size);
        e->size += size;
    }
    e->chunks++;
    if (method_flags & MANTRA_PGO_CHUNK_FINAL) {
        if (cm_grow((void **)&r->order, &r->order_cap, r->order_count + 1, sizeof *r->order, 64) != 0)
            return MANTRA_ENOMEM;
        e->done = 1;
        r->order[r->order_count++] = (size_t)(e - r->entries);
        return 1;
    }
    return 0;
}

size_t mantra_pgo_reassembler_finish(mantra_pgo_reassembler *r) {
    if (r == NULL)
        return 0;
    if (r->finished)
        return r->complete_count;
    r->finished = 1;
    for (size_t i = 0; i < r->count; i++)
        if (r->entries[i].live && !r->entries[i].done)
            r->stats.incomplete++;
    r->complete = malloc((r->order_count > 0 ? r->order_count : 1) * sizeof *r->complete);
    if (r->complete == NULL)
        return 0;
    for (size_t k = 0; k < r->order_count; k++)
        if (r->entries[r->order[k]].live)
            r->complete[r->complete_count++] = r->order[k];
    r->stats.complete = r->complete_count;
    return r->complete_count;
}

int mantra_pgo_reassembler_get(const mantra_pgo_reassembler *r, size_t i, uint64_t *key, const uint8_t **data,
                               size_t *size) {
    if (r == NULL)
        return MANTRA_EINVAL;
    if (!r->finished)
        return MANTRA_ESTATE;
    if (i >= r->complete_count)
        return MANTRA_EINVAL;
    const entry *e = &r->entries[r->complete[i]];
    if (key != NULL)
        *key = e->key;
    if (data != NULL)
        *data = e->bytes;
    if (size != NULL)
        *size = e->size;
    return MANTRA_OK;
}

void mantra_pgo_reassembler_stats(const mantra_pgo_reassembler *r, mantra_pgo_reassembly_stats *out) {
    if (r == NULL) {
        memset(out, 0, sizeof *out);
        return;
    }
    *out = r->stats;
}
