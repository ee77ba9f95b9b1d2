/* Sessions (mantra/session.h): the session table (which session owns which bit of the enabled
 * masks), the enable masks of every registered event, start (configuration, output, drain thread or
 * threadless job, start rundown), statistics, and stop step by step as EventPipe disables a session
 * (dotnet/runtime, src/native/eventpipe/ep.c, disable_holding_lock; ep-session.c,
 * ep_session_disable): stopping hooks, ProcessInfo, masks, flush, rundown, final flush, final
 * sequence point, end tag. The concurrency rules are in session-internal.h. */
#include <stdlib.h>
#include <string.h>

#include "mantra/pump.h"
#include "session-internal.h"
#include "startup-internal.h"

static atomic_flag g_ctl = ATOMIC_FLAG_INIT;
static session *g_live[MANTRA_MAX_SESSIONS];  /* g_ctl: sessions whose events are enabled */
static session *g_taken[MANTRA_MAX_SESSIONS]; /* g_ctl: index in use (until stop finished) */
_Atomic(session *) ss_slots[MANTRA_MAX_SESSIONS];
static uint64_t g_generation; /* g_ctl */

void ss_ctl_lock(void) {
    while (atomic_flag_test_and_set_explicit(&g_ctl, memory_order_acquire))
        mantra_pal_yield();
}
void ss_ctl_unlock(void) { atomic_flag_clear_explicit(&g_ctl, memory_order_release); }

/* ---- the writers' fence (session-internal.h) ------------------------------------------------ */

_Atomic int ss_asym_fence;

/* Once per process: in mantra_init() before it starts a thread (registration waits for an RCU grace
 * period once the process has a second thread: 12-22 ms here, free before), else at the first
 * session start (the table lock is not held: registration is a system call). MANTRA_SESSION_FENCE=seqcst keeps the sequentially consistent store (what EventPipe
 * does); anything else, or unset, takes membarrier where the host has it. Decided once: a writer
 * that read 1 relies on every later rare side fencing with membarrier, so it is never cleared. */
void ss_init_writers_fence(void) {
#if SS_ASYM_FENCE
    static atomic_flag decided = ATOMIC_FLAG_INIT;
    if (atomic_flag_test_and_set(&decided))
        return;
    const char *v = mantra_pal_getenv("MANTRA_SESSION_FENCE");
    if (v && strcmp(v, "seqcst") == 0)
        return;
    if (mantra_pal_heavy_fence_init())
        atomic_store(&ss_asym_fence, 1);
#endif
}

void ss_writers_fence(void) {
    if (!(atomic_load(&ss_asym_fence) && mantra_pal_heavy_fence()))
        atomic_thread_fence(memory_order_seq_cst);
}

/* ---- masks --------------------------------------------------------------------------------- */

/* Does session s (in its current mode) enable the event? Rundown, as EventPipe's (dotnet/runtime,
 * src/native/eventpipe/ep-session.c, ep_session_enable_rundown): the rundown provider at Verbose
 * with the rundown keywords is added; at stop it is the only named entry left beside a `*` entry. */
static int session_enables(const session *s, const char *provider, const mantra_event_desc *d) {
    if (s->mode != MODE_NORMAL && strcmp(provider, MANTRA_RUNDOWN_PROVIDER) == 0) {
        mantra_provider_spec rd;
        memset(&rd, 0, sizeof rd);
        memcpy(rd.name, MANTRA_RUNDOWN_PROVIDER, sizeof MANTRA_RUNDOWN_PROVIDER);
        rd.keywords = s->cfg.rundown_keywords | (s->mode == MODE_START_RUNDOWN ? MANTRA_START_RUNDOWN_KEYWORD : 0);
        rd.level = MANTRA_LEVEL_VERBOSE;
        if (mantra_provider_spec_enables(&rd, 1, provider, d))
            return 1;
    }
    if (s->mode == MODE_STOP_RUNDOWN) {
        for (size_t i = 0; i < s->nspecs; i++)
            if (strcmp(s->specs[i].name, "*") == 0)
                return mantra_provider_spec_enables(&s->specs[i], 1, provider, d);
        return 0;
    }
    return mantra_provider_spec_enables(s->specs, s->nspecs, provider, d);
}

static void refresh_provider_locked(const mantra_provider_desc *p) {
    for (uint32_t e = 0; e < p->event_count; e++) {
        uint64_t bits = 0;
        for (uint32_t i = 0; i < MANTRA_MAX_SESSIONS; i++)
            if (g_live[i] && session_enables(g_live[i], p->name, &p->events[e]))
                bits |= UINT64_C(1) << i;
        mantra_atomic_u64 *en = &p->states[e].enabled;
        uint64_t old = atomic_load_explicit(en, memory_order_relaxed);
        while (!atomic_compare_exchange_weak_explicit(en, &old, (old & MANTRA_LISTENER_BIT) | bits,
                                                      memory_order_release, memory_order_relaxed))
            ;
    }
}

static void refresh_all_locked(void) {
    uint32_t n = ss_provider_count();
    for (uint32_t i = 0; i < n; i++)
        refresh_provider_locked(ss_provider_at(i));
}

void ss_refresh_provider(const mantra_provider_desc *provider) {
    ss_ctl_lock();
    refresh_provider_locked(provider);
    ss_ctl_unlock();
}

/* ---- start / stop -------------------------------------------------------------------------- */

void mantra_session_config_init(mantra_session_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->fd = -1;
    cfg->buffer_mb = 256;
    cfg->sequence_point_mb = 10;
    cfg->flush_interval_ms = 100;
    cfg->block_timeout_ms = 100;
}

static void free_session(session *s) {
    ss_free_buffers(s);
    ss_ids_free(s);
    mantra_nettrace_writer_free(s->w);
    mantra_sink_free(s->sink);
    mantra_pal_cond_destroy(&s->cond);
    mantra_pal_cond_destroy(&s->space);
    mantra_pal_mutex_destroy(&s->drain_lock);
    mantra_pal_mutex_destroy(&s->lock);
    free(s->specs);
    free(s->path);
    free(s);
}

void ss_release(session *s) {
    if (atomic_fetch_sub(&s->refs, 1) == 1)
        free_session(s);
}

int mantra_session_start(mantra_session_id *id, const mantra_session_config *cfg) {
    if (!id || !cfg)
        return ss_set_error("NULL argument"), MANTRA_EINVAL;
    *id = 0;
#ifdef MANTRA_THREADLESS
    if (cfg->buffer_mode == MANTRA_BUFFER_BLOCK)
        return ss_set_error("Block mode needs a drain thread: not available in the threadless build"),
               MANTRA_EUNSUPPORTED;
#endif
    if (cfg->buffer_mode > MANTRA_BUFFER_BLOCK)
        return ss_set_error("unknown buffer mode"), MANTRA_EINVAL;
    session *s = calloc(1, sizeof *s);
    if (!s)
        return MANTRA_ENOMEM;
    s->cfg = *cfg;
    s->cfg.providers = NULL; /* parsed below; the caller's strings are not kept */
    if (cfg->path) {
        size_t n = strlen(cfg->path) + 1;
        if (!(s->path = malloc(n))) {
            free(s);
            return MANTRA_ENOMEM;
        }
        memcpy(s->path, cfg->path, n);
    }
    s->cfg.path = s->path;
    if (s->cfg.flush_interval_ms == 0)
        s->cfg.flush_interval_ms = 100;
    if (s->cfg.block_timeout_ms == 0)
        s->cfg.block_timeout_ms = 100;
    s->cap = cfg->buffer_bytes ? cfg->buffer_bytes : (uint64_t)(cfg->buffer_mb ? cfg->buffer_mb : 256) << 20;
    s->rotate = cfg->rotate_bytes ? cfg->rotate_bytes : (uint64_t)cfg->rotate_mb << 20;
    atomic_init(&s->refs, 1);
    s->specs = calloc(64, sizeof *s->specs);
    int rc = s->specs ? MANTRA_OK : MANTRA_ENOMEM;
    if (!rc)
        rc = mantra_provider_spec_parse(cfg->providers, s->specs, 64, &s->nspecs, NULL);
    for (size_t i = 0; !rc && i < s->nspecs; i++) {
        s->keywords |= s->specs[i].keywords;
        /* an entry for the rundown provider with StartRundown (0x40) asks for a start rundown, with
         * its keywords unless the configuration names them (an end rundown too with EndRundown) */
        if (strcmp(s->specs[i].name, MANTRA_RUNDOWN_PROVIDER) == 0 && (s->specs[i].keywords & MANTRA_START_RUNDOWN_KEYWORD)) {
            s->cfg.start_rundown = 1;
            if (s->cfg.rundown_keywords == 0)
                s->cfg.rundown_keywords = s->specs[i].keywords;
        }
    }
    if (!rc && mantra_pal_mutex_init(&s->lock) != 0)
        rc = MANTRA_ENOMEM;
    if (!rc && mantra_pal_mutex_init(&s->drain_lock) != 0) {
        mantra_pal_mutex_destroy(&s->lock);
        rc = MANTRA_ENOMEM;
    }
    if (!rc && mantra_pal_cond_init(&s->cond) != 0) {
        mantra_pal_mutex_destroy(&s->drain_lock);
        mantra_pal_mutex_destroy(&s->lock);
        rc = MANTRA_ENOMEM;
    }
    if (!rc && mantra_pal_cond_init(&s->space) != 0) {
        mantra_pal_cond_destroy(&s->cond);
        mantra_pal_mutex_destroy(&s->drain_lock);
        mantra_pal_mutex_destroy(&s->lock);
        rc = MANTRA_ENOMEM;
    }
    if (rc) {
        free(s->specs);
        free(s->path);
        free(s);
        return rc;
    }
    rc = ss_open_output(s);
    if (!rc) {
        ss_init_writers_fence(); /* before any writer can see this session */
        ss_ctl_lock();
        uint32_t i = 0;
        while (i < MANTRA_MAX_SESSIONS && g_taken[i])
            i++;
        if (i == MANTRA_MAX_SESSIONS) {
            rc = MANTRA_ERANGE;
            ss_set_error("too many sessions (63 beside the listener)");
        } else {
            g_taken[i] = s;
            s->index = i;
            s->id = (++g_generation << 6) | i;
        }
        ss_ctl_unlock();
        if (!rc)
            ss_fill_pool(s); /* once the session has its slot: a session refused maps no pool */
    }
#ifdef MANTRA_THREADLESS
    if (!rc) {
        atomic_fetch_add(&s->refs, 1); /* the streaming job's */
        if ((rc = mantra_queue_job(ss_stream_job, s)) != 0) {
            atomic_fetch_sub(&s->refs, 1); /* a job that cannot be queued releases what it holds */
            ss_set_error("cannot queue the streaming job (out of memory)");
        }
    }
#else
    /* read here, on the caller's thread, as the other settings (getenv and a host's setenv on
     * another thread do not mix) */
    s->spread = mantra_pal_getenv_u32("MANTRA_DRAIN_SPREAD", 1u, 1u) == 1u;
    if (!rc && (rc = mantra_pal_thread_start(&s->drain, ss_drain_main, s)) == 0)
        s->has_drain = 1;
    else if (rc && s->id)
        ss_set_error("cannot start the drain thread");
#endif
    if (rc) {
        if (s->id) {
            ss_ctl_lock();
            g_taken[s->index] = NULL;
            ss_ctl_unlock();
        }
        ss_release(s);
        return rc;
    }
    ss_ctl_lock();
    if (s->cfg.start_rundown && s->cfg.rundown_keywords && s->cfg.output != MANTRA_SESSION_OUTPUT_LISTENER)
        s->mode = MODE_START_RUNDOWN;
    g_live[s->index] = s;
    atomic_store(&ss_slots[s->index], s);
    refresh_all_locked();
    ss_ctl_unlock();
    *id = s->id;
    if (s->mode == MODE_START_RUNDOWN) {
        ss_run_rundown(s, MANTRA_RUNDOWN_AT_START);
        ss_ctl_lock();
        s->mode = MODE_NORMAL;
        refresh_all_locked();
        ss_ctl_unlock();
    }
    ss_run_start_hooks(s);
    return MANTRA_OK;
}

static session *find(mantra_session_id id) {
    uint32_t i = (uint32_t)(id & 63u);
    if (id == 0 || i >= MANTRA_MAX_SESSIONS)
        return NULL;
    session *s = g_taken[i];
    return s && s->id == id ? s : NULL;
}

static void collect_stats(session *s, mantra_session_stats *out) {
    memset(out, 0, sizeof *out);
    mantra_pal_mutex_lock(&s->lock);
    for (tss *t = s->threads; t; t = t->next) {
        uint64_t attempts = atomic_load_explicit(&t->seq, memory_order_relaxed) - SEQ_FIRST;
        uint64_t dropped = atomic_load_explicit(&t->dropped, memory_order_relaxed);
        out->attempted += attempts;
        out->written += attempts - dropped;
        out->dropped += dropped;
        out->oversized += atomic_load_explicit(&t->oversized, memory_order_relaxed);
        out->blocked += atomic_load_explicit(&t->blocked, memory_order_relaxed);
        out->threads++;
    }
    out->buffers = s->buffers;
    out->buffer_bytes = s->allocated;
    mantra_pal_mutex_unlock(&s->lock);
    mantra_pal_mutex_lock(&s->drain_lock);
    out->bytes = s->bytes_done;
    if (s->w) {
        mantra_nettrace_stats ns;
        mantra_nettrace_get_stats(s->w, &ns);
        out->bytes += ns.bytes;
    }
    out->files = s->cfg.output == MANTRA_SESSION_OUTPUT_LISTENER ? 0 : s->file_no + 1;
    mantra_pal_mutex_unlock(&s->drain_lock);
}

int mantra_session_get_stats(mantra_session_id id, mantra_session_stats *out) {
    if (!out)
        return ss_set_error("NULL argument"), MANTRA_EINVAL;
    ss_ctl_lock();
    session *s = find(id);
    if (s && g_live[s->index] == s)
        atomic_fetch_add(&s->refs, 1);
    else
        s = NULL;
    ss_ctl_unlock();
    if (!s)
        return ss_set_error("unknown session id"), MANTRA_EINVAL;
    collect_stats(s, out);
    ss_release(s);
    return MANTRA_OK;
}

session *ss_acquire_running(mantra_session_id id) {
    ss_ctl_lock();
    session *s = find(id);
    if (s && g_live[s->index] == s && !s->claimed)
        atomic_fetch_add(&s->refs, 1);
    else
        s = NULL;
    ss_ctl_unlock();
    return s;
}

int mantra_session_bit(mantra_session_id id) {
    ss_ctl_lock();
    session *s = find(id);
    int bit = s ? (int)s->index : MANTRA_EINVAL; /* read under the lock: a stop may free s */
    ss_ctl_unlock();
    return bit;
}


int mantra_session_stop_stats(mantra_session_id id, mantra_session_stats *out) {
    static atomic_flag stop_lock = ATOMIC_FLAG_INIT; /* one stop at a time (payload buffer) */
    ss_ctl_lock();
    session *s = find(id);
    if (!s || g_live[s->index] != s || s->claimed) {
        ss_ctl_unlock();
        return ss_set_error(s ? "session is already stopping" : "unknown session id"), MANTRA_EINVAL;
    }
    s->claimed = 1; /* the id is validated: no second stop */
    ss_ctl_unlock();
    /* 0. stopping hooks: before the stop takes its locks; events into this session only */
    ss_run_stopping_hooks(s);
    while (atomic_flag_test_and_set_explicit(&stop_lock, memory_order_acquire))
        mantra_pal_yield();
    /* 1. ProcessInfo, into the stopping session (trace outputs); a drain pass first, so that a
     * full budget does not drop it */
    int trace = s->cfg.output != MANTRA_SESSION_OUTPUT_LISTENER;
    if (trace) {
        ss_drain_pass(s, 0);
        ss_write_process_info(s);
    }
    /* 2. disable: masks (only the rundown provider stays when rundown runs), then flush */
    int rundown = s->cfg.rundown_keywords != 0 && trace;
    ss_ctl_lock();
    if (rundown) {
        s->mode = MODE_STOP_RUNDOWN;
        atomic_store(&s->rundown_rec, ss_current_rec());
    } else {
        g_live[s->index] = NULL;
    }
    refresh_all_locked();
    ss_ctl_unlock();
    ss_drain_pass(s, 0);
    /* 3. rundown, into this session only; the drain still runs, so it has the whole budget */
    if (rundown && atomic_load(&s->rundown_rec)) {
        ss_run_rundown(s, MANTRA_RUNDOWN_AT_STOP);
        ss_ctl_lock();
        g_live[s->index] = NULL;
        refresh_all_locked();
        ss_ctl_unlock();
    }
    ss_ctl_lock();
    atomic_store(&ss_slots[s->index], NULL);
    ss_ctl_unlock();
    mantra_pal_mutex_lock(&s->lock);
    s->disabled = 1;
    mantra_pal_cond_broadcast(&s->space);
    mantra_pal_mutex_unlock(&s->lock);
    ss_wait_writers(s->index);
    /* 4. stop the drain, flush everything */
    mantra_pal_mutex_lock(&s->lock);
    s->stopping = 1;
    mantra_pal_cond_signal(&s->cond);
    mantra_pal_mutex_unlock(&s->lock);
    if (s->has_drain)
        mantra_pal_thread_join(&s->drain);
    atomic_store(&s->job_stop, 1);
    ss_drain_pass(s, 1);
    int rc = MANTRA_OK;
    if (s->w && !s->failed) {
        /* 5. final sequence point (with trailing drops), end tag, close */
        rc = ss_account_trailing_drops(s);
        if (!rc)
            rc = mantra_nettrace_finish(s->w);
        if (rc)
            ss_set_error(mantra_nettrace_last_error(s->w));
        int crc = mantra_sink_close(s->sink);
        if (!rc && crc) {
            rc = crc;
            ss_set_error(mantra_sink_last_error(s->sink));
        }
    } else if (s->failed) {
        rc = MANTRA_EIO;
        ss_set_error(s->errmsg);
        if (s->sink)
            (void)mantra_sink_close(s->sink);
    }
    atomic_flag_clear_explicit(&stop_lock, memory_order_release);
    if (out)
        collect_stats(s, out);
    ss_ctl_lock();
    g_taken[s->index] = NULL;
    ss_ctl_unlock();
    ss_release(s);
    return rc;
}

int mantra_session_stop(mantra_session_id id) { return mantra_session_stop_stats(id, NULL); }

/* ---- process lifetime ---------------------------------------------------------------------- */

uint32_t mantra_session_stop_all(void) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < MANTRA_MAX_SESSIONS; i++) {
        ss_ctl_lock();
        session *s = g_live[i];
        mantra_session_id id = s ? s->id : 0;
        ss_ctl_unlock();
        if (id && mantra_session_stop(id) != MANTRA_EINVAL)
            n++;
    }
    return n;
}

void mantra_shutdown(void) {
    ss_timers_shutdown();
    mantra_session_stop_all();
    mantra_pump();
}
