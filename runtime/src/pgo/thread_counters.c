/* Per-thread counter cells (mantra/pgo.h, mantra_pgo_count_slot): every uint32 counter has a slot;
 * each thread increments its own cell of the slot without a lock prefix, and snapshots sum the
 * cells of every thread. bench/pgo_counters.c measured this against a shared relaxed fetch-add
 * (docs/pgo.md): the shared cell costs about 5 ns per probe on one thread and 18 ns when two
 * threads count the same probe; the per-thread cell costs about as much as a plain increment.
 *
 * Cell sets are never freed: a detached set waits in the list for the next thread that attaches,
 * with its counts, so nothing counted is ever lost. The list is pushed under the store's lock and
 * walked without it (every set is published with a release store before it becomes reachable). */
#include <stdatomic.h>
#include <stdlib.h>

#include "pgo-internal.h"

static _Atomic(mantra_pgo_thread *) g_threads;
static uint32_t g_slots; /* slots reserved (store lock) */

uint32_t pg_reserve_slots(uint32_t n) {
    uint64_t max = (uint64_t)MANTRA_PGO_MAX_PAGES * MANTRA_PGO_PAGE_SLOTS;
    if ((uint64_t)g_slots + n > max)
        return PG_NO_SLOT;
    uint32_t first = g_slots;
    g_slots += n;
    return first;
}

mantra_pgo_thread *mantra_pgo_thread_attach(void) {
    if (pg_lock() != MANTRA_OK)
        return NULL;
    mantra_pgo_thread *t;
    for (t = atomic_load_explicit(&g_threads, memory_order_acquire); t != NULL; t = t->next_)
        if (!t->attached_)
            break;
    if (t == NULL) {
        t = calloc(1, sizeof *t);
        if (t == NULL) {
            pg_unlock();
            return NULL;
        }
        t->next_ = atomic_load_explicit(&g_threads, memory_order_relaxed);
        atomic_store_explicit(&g_threads, t, memory_order_release);
    }
    t->attached_ = 1;
    pg_unlock();
    return t;
}

void mantra_pgo_thread_detach(mantra_pgo_thread *t) {
    if (t == NULL || pg_lock() != MANTRA_OK)
        return;
    t->attached_ = 0;
    pg_unlock();
}

uint32_t *mantra_pgo_thread_page(mantra_pgo_thread *t, uint32_t page) {
    if (t == NULL || page >= MANTRA_PGO_MAX_PAGES)
        return NULL;
    uint32_t *cells = __atomic_load_n(&t->pages[page], __ATOMIC_ACQUIRE);
    if (cells != NULL)
        return cells;
    cells = calloc(MANTRA_PGO_PAGE_SLOTS, sizeof *cells);
    if (cells != NULL) /* only the owner writes its pages: a plain publish */
        __atomic_store_n(&t->pages[page], cells, __ATOMIC_RELEASE);
    return cells;
}

uint32_t pg_thread_sum(uint32_t slot) {
    uint32_t page = slot >> MANTRA_PGO_PAGE_SHIFT, sum = 0;
    if (page >= MANTRA_PGO_MAX_PAGES)
        return 0;
    for (mantra_pgo_thread *t = atomic_load_explicit(&g_threads, memory_order_acquire); t != NULL; t = t->next_) {
        uint32_t *cells = __atomic_load_n(&t->pages[page], __ATOMIC_ACQUIRE);
        if (cells != NULL)
            sum += PG_LOAD(&cells[slot & (MANTRA_PGO_PAGE_SLOTS - 1u)]);
    }
    return sum;
}
