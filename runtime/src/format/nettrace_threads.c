/* nettrace_threads.c - the nettrace writer's thread table: every capture thread in order of first
 * appearance with its last sequence number and timestamp (what each SPBlock lists), and the
 * accounting of events dropped after a thread's last written one. The per-event lookup is
 * nw_find_thread() in nettrace-internal.h.
 *
 * Sequence numbers are per capture thread, +1 per event attempted, so a gap means dropped events to
 * TraceEvent (microsoft/perfview, src/TraceEvent/EventPipe/EventCache.cs and ThreadCache.cs). */
#include <stdlib.h>

#include "format/nettrace-internal.h"

nw_thread *nw_add_thread(mantra_nettrace_writer *w, uint64_t tid) {
    if (cm_grow((void **)&w->threads, &w->thread_cap, (size_t)w->thread_count + 1, sizeof *w->threads, 16) !=
        MANTRA_OK)
        return NULL;
    if ((w->thread_count + 1) * 2 > w->thread_slot_count) {
        uint32_t count = w->thread_slot_count ? w->thread_slot_count * 2 : 64;
        uint32_t *slots = calloc(count, sizeof *slots);
        if (!slots)
            return NULL;
        for (uint32_t j = 0; j < w->thread_count; j++) {
            uint32_t i = (uint32_t)nw_mix64(w->threads[j].capture_thread_id) & (count - 1);
            while (slots[i])
                i = (i + 1) & (count - 1);
            slots[i] = j + 1;
        }
        free(w->thread_slots);
        w->thread_slots = slots;
        w->thread_slot_count = count;
    }
    uint32_t mask = w->thread_slot_count - 1;
    uint32_t i = (uint32_t)nw_mix64(tid) & mask;
    while (w->thread_slots[i])
        i = (i + 1) & mask;
    nw_thread *t = &w->threads[w->thread_count++];
    w->thread_slots[i] = w->thread_count;
    t->capture_thread_id = tid;
    t->last_sequence = 0;
    t->has_events = 0;
    t->last_timestamp = 0;
    w->st.threads = w->thread_count;
    return t;
}

int mantra_nettrace_thread_dropped(mantra_nettrace_writer *w, uint64_t capture_thread_id, uint32_t n) {
    if (!w)
        return MANTRA_EINVAL;
    int rc = nw_check_usable(w);
    if (rc != MANTRA_OK)
        return rc;
    nw_thread *t = nw_find_thread(w, capture_thread_id);
    if (!t && !(t = nw_add_thread(w, capture_thread_id)))
        return nw_fail(w, MANTRA_ENOMEM, "out of memory for the thread table");
    t->last_sequence += n;
    return MANTRA_OK;
}
