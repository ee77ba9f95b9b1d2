/* A file session's metadata ids: its writers put an event's id into the rows they encode (dispatch.c),
 * so the session numbers its events itself, 1..MID_MAX in order of first use, and the drain defines
 * each id in every file before the rows that use it (MetadataBlock rows, as the nettrace writer's
 * first use of a definition writes them). Lookups are lock-free (an open-addressing table that only
 * grows: a slot's desc is published after its id); numbering takes the session lock. An event that
 * gets no id (MID_MAX taken, or a definition the nettrace writer would refuse: nw_event_fits) keeps a
 * slot that says so, while the table has room (MID_ENTRIES_MAX), so that its writes do not take the
 * lock again. */
#include <stdlib.h>

#include "format/nettrace-internal.h"
#include "session-internal.h"

int ss_ids_init(session *s) {
    s->mid_slots = calloc(MID_SLOTS, sizeof *s->mid_slots);
    s->mid_defs = calloc(MID_MAX + 1u, sizeof *s->mid_defs);
    s->mid_keys = calloc(MID_MAX + 1u, sizeof *s->mid_keys);
    if (!s->mid_slots || !s->mid_defs || !s->mid_keys) {
        ss_ids_free(s);
        return MANTRA_ENOMEM;
    }
    s->rows = 1;
    return MANTRA_OK;
}

void ss_ids_free(session *s) {
    free(s->mid_slots);
    free(s->mid_defs);
    free(s->mid_keys);
    s->mid_slots = NULL;
    s->mid_defs = NULL;
    s->mid_keys = NULL;
    s->rows = 0;
}

uint32_t ss_id_of(session *s, const mantra_event_desc *desc, const mantra_provider_desc *provider) {
    uint32_t id = ss_id_lookup(s, desc);
    if (id)
        return id == MID_NONE ? 0u : id;
    mantra_pal_mutex_lock(&s->lock);
    uint32_t i = ss_id_slot(desc);
    for (;;) {
        const mantra_event_desc *d = atomic_load_explicit(&s->mid_slots[i].desc, memory_order_relaxed);
        if (d == desc) {
            id = s->mid_slots[i].mid; /* numbered by another thread meanwhile */
            break;
        }
        if (d == NULL) {
            if (s->mid_entries >= MID_ENTRIES_MAX) {
                id = MID_NONE; /* not kept: the lookups stay short */
                break;
            }
            uint32_t n = atomic_load_explicit(&s->nmids, memory_order_relaxed);
            id = n < MID_MAX && nw_event_fits(provider, desc) ? n + 1u : MID_NONE;
            if (id != MID_NONE) {
                /* the id is counted before a writer can find it (its slot), so a drain that sees
                 * a row with it defines it (ss_ids_define) */
                s->mid_defs[id].desc = desc;
                s->mid_defs[id].provider = provider;
                atomic_store_explicit(&s->nmids, id, memory_order_release);
            }
            s->mid_slots[i].mid = id;
            atomic_store_explicit(&s->mid_slots[i].desc, desc, memory_order_release);
            s->mid_entries++;
            break;
        }
        i = (i + 1u) & (MID_SLOTS - 1u);
    }
    mantra_pal_mutex_unlock(&s->lock);
    return id == MID_NONE ? 0u : id;
}

int ss_ids_define(session *s) {
    uint32_t n = atomic_load_explicit(&s->nmids, memory_order_acquire);
    while (s->file_mids < n) {
        uint32_t id = s->file_mids + 1u;
        const mid_def *d = &s->mid_defs[id];
        mantra_nettrace_event_key key;
        int rc = mantra_nettrace_add_event(s->w, d->provider, d->desc, &key);
        if (!rc)
            rc = nw_define_id(s->w, key, id);
        if (rc)
            return rc;
        s->mid_keys[id] = key;
        s->file_mids = id;
    }
    return MANTRA_OK;
}
