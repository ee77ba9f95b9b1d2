/* pgo_flush.c - the flush of PGO data into a stopping session (dotnet_pgo.h): identity events and
 * JitInstrumentationDataVerbose chunks, as the .NET runtime's LogMethodInstrumentationData writes
 * them (../shared/reference/pgo-format.md §4), through the generated writers. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "dotnet_pgo-internal.h"
#include "dotnet_registry.h"
#include "dotnet_writers.h"

/* Sessions with their own flags (collections), and the flags of every other session. */
#define FLAG_SLOTS 64
typedef struct session_flags {
    mantra_session_id id;
    unsigned flags;
} session_flags;
static session_flags g_flags[FLAG_SLOTS]; /* g_flags_lock */
static atomic_flag g_flags_lock = ATOMIC_FLAG_INIT;
static _Atomic unsigned g_default_flags;
static _Atomic int g_event_298 = -1; /* index of JitInstrumentationDataVerbose in the states */

static mantra_pgo_flush_stats g_last; /* g_flags_lock */

static void flags_lock(void) {
    while (atomic_flag_test_and_set_explicit(&g_flags_lock, memory_order_acquire))
        ;
}
static void flags_unlock(void) { atomic_flag_clear_explicit(&g_flags_lock, memory_order_release); }

/* Remembers id's flags (a collection); takes them back (and forgets them) with take. */
int pgo_flush_set_session_flags(mantra_session_id id, unsigned flags) {
    flags_lock();
    int rc = MANTRA_ERANGE;
    for (int i = 0; i < FLAG_SLOTS && rc != 0; i++)
        if (g_flags[i].id == 0) {
            g_flags[i].id = id;
            g_flags[i].flags = flags;
            rc = 0;
        }
    flags_unlock();
    return rc;
}

static unsigned take_session_flags(mantra_session_id id) {
    unsigned f = atomic_load(&g_default_flags);
    flags_lock();
    for (int i = 0; i < FLAG_SLOTS; i++)
        if (g_flags[i].id == id) {
            f = g_flags[i].flags;
            g_flags[i].id = 0;
        }
    flags_unlock();
    return f;
}

static int event_298_index(void) {
    int k = atomic_load(&g_event_298);
    if (k >= 0)
        return k;
    for (size_t i = 0; i < sizeof mantra_DotNETRuntime_states / sizeof mantra_DotNETRuntime_states[0]; i++)
        if (mantra_DotNETRuntime_events[i].id == 298)
            k = (int)i;
    atomic_store(&g_event_298, k);
    return k;
}

/* ---- the events ------------------------------------------------------------------------------ */

typedef struct flush_state {
    const mantra_pgo_module **seen; /* modules whose ModuleLoad was written */
    size_t nseen, capseen;
    uint8_t *blob;
    size_t capblob;
    mantra_pgo_flush_stats st;
} flush_state;

static void count(flush_state *f, int rc) {
    if (rc != MANTRA_WRITE_OK && rc != MANTRA_WRITE_DISABLED) /* identity events need Loader/Jit */
        f->st.failed++;
}

static int module_event(flush_state *f, const mantra_pgo_module *mod) {
    for (size_t i = f->nseen; i > 0; i--) /* most recent first: methods come module by module */
        if (f->seen[i - 1] == mod)
            return 0;
    if (f->nseen == f->capseen) {
        size_t cap = f->capseen ? f->capseen * 2 : 16;
        const mantra_pgo_module **n = realloc(f->seen, cap * sizeof *n);
        if (n == NULL)
            return MANTRA_ENOMEM;
        f->seen = n;
        f->capseen = cap;
    }
    f->seen[f->nseen++] = mod;
    mantra_pgo_module_info mi;
    mantra_pgo_module_describe(mod, &mi);
    static const mantra_guid zero;
    const char *il_path = mi.path && mi.path[0] ? mi.path : mi.name;
    count(f, mantra_DotNETRuntime_ModuleLoad_V2_write(mi.index, mi.index, 0, 0, il_path, "", 0, &mi.guid, 0, "",
                                                       &zero, 0, ""));
    f->st.modules++;
    return 0;
}

static int method_events(flush_state *f, const mantra_pgo_method *m, unsigned flags) {
    mantra_pgo_data d;
    int rc = mantra_pgo_snapshot(m, (flags & MANTRA_PGO_FLUSH_DELTAS) ? MANTRA_PGO_SNAPSHOT_RESET : 0, &d);
    if (rc != 0)
        return rc == MANTRA_EINVAL ? 0 : rc;
    /* one encoding into the reused buffer; a second only when it did not fit */
    int64_t size = mantra_pgo_encode(d.schema, d.records, d.values, d.value_count, f->blob, f->capblob);
    if (size > 0 && (size_t)size > f->capblob) {
        size_t cap = (size_t)size > 2 * f->capblob ? (size_t)size : 2 * f->capblob;
        uint8_t *nb = realloc(f->blob, cap);
        if (nb == NULL) {
            mantra_pgo_data_free(&d);
            return MANTRA_ENOMEM;
        }
        f->blob = nb;
        f->capblob = cap;
        size = mantra_pgo_encode(d.schema, d.records, d.values, d.value_count, f->blob, f->capblob);
    }
    mantra_pgo_data_free(&d);
    if (size <= 0) /* an empty blob emits nothing (eventtrace.cpp) */
        return 0;
    mantra_pgo_method_info mi;
    mantra_pgo_module_info mo;
    mantra_pgo_method_describe(m, &mi);
    mantra_pgo_module_describe(mi.module, &mo);
    if ((rc = module_event(f, mi.module)) != 0)
        return rc;
    /* MethodJittingStarted (V1, as .NET 10 writes it; Jit keyword at Verbose) carries the IL size, and
     * dotnet-pgo keeps only methods it saw jitted or R2R-loaded (pgo-format.md §5) */
    count(f, mantra_DotNETRuntime_MethodJittingStarted_V1_write(mi.index, mo.index, mi.token, mi.il_size,
                                                                mi.name_space, mi.name, mi.signature, 0));
    count(f, mantra_DotNETRuntime_MethodLoadVerbose_V2_write(mi.index, mo.index, 0, mi.il_size, mi.token, 0,
                                                             mi.name_space, mi.name, mi.signature, 0, 0));
    f->st.methods++;
    size_t n = mantra_pgo_chunk_count((size_t)size);
    for (size_t k = 0; k < n; k++) {
        uint32_t cflags;
        size_t off, len;
        mantra_pgo_chunk((size_t)size, k, &cflags, &off, &len);
        count(f, mantra_DotNETRuntime_JitInstrumentationDataVerbose_write(0, cflags, (uint32_t)len, mi.index, mo.index,
                                                                          mi.token, mi.name_space, mi.name,
                                                                          mi.signature, f->blob + off));
        f->st.chunks++;
        f->st.bytes += len;
    }
    return 0;
}

int mantra_pgo_flush_write(unsigned flags, mantra_pgo_flush_stats *st) {
    flush_state f;
    memset(&f, 0, sizeof f);
    int rc = 0;
    for (const mantra_pgo_method *m = mantra_pgo_next_method(NULL); m != NULL && rc == 0; m = mantra_pgo_next_method(m))
        rc = method_events(&f, m, flags);
    free(f.seen);
    free(f.blob);
    if (st != NULL)
        *st = f.st;
    return rc;
}

void mantra_pgo_flush_last_stats(mantra_pgo_flush_stats *out) {
    flags_lock();
    *out = g_last;
    flags_unlock();
}

/* ---- the hook -------------------------------------------------------------------------------- */

static void stopping_hook(void *ctx, const mantra_session_info *info) {
    (void)ctx;
    unsigned flags = take_session_flags(info->id);
    int k = event_298_index();
    if (k < 0)
        return;
    /* per provider and level, by the session's own enable rule: does it take event 298? */
    uint64_t enabled = MANTRA_ATOMIC_LOAD_RELAXED(&mantra_DotNETRuntime_states[k].enabled);
    if ((enabled & info->mask) == 0)
        return;
    mantra_pgo_flush_stats st;
    (void)mantra_pgo_flush_write(flags, &st);
    flags_lock();
    g_last = st;
    flags_unlock();
}

static void dump_at_exit(void) { (void)mantra_pgo_text_dump_env(NULL, 0); }

int pgo_flush_ensure(void) {
    static atomic_flag once = ATOMIC_FLAG_INIT;
    int rc = mantra_dotnet_register();
    if (rc < 0)
        return rc;
    rc = mantra_session_add_stopping_hook(stopping_hook, NULL);
    if (rc < 0)
        return rc;
    if (!atomic_flag_test_and_set(&once))
        (void)atexit(dump_at_exit);
    return 0;
}

int mantra_dotnet_pgo_init(unsigned flags) {
    atomic_store(&g_default_flags, flags);
    return pgo_flush_ensure();
}

int mantra_dotnet_pgo_fini(void) { return mantra_session_remove_stopping_hook(stopping_hook, NULL); }
