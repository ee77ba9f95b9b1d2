/* Payload serialisation and dispatch of written events (mantra/event.h).
 *
 * A written event goes to the in-process listener (bit 63 of the enabled mask), if one is set, and
 * to every session whose bit (0..62) is set in the event's mask (session/session.c). The payload
 * is assembled in a per-thread buffer of MANTRA_MAX_PAYLOAD bytes, so the write path never
 * allocates. */
#include <stdbool.h>
#include <string.h>

#include "mantra/event.h"
#include "session/session-internal.h"
#include "common/utf-internal.h"

#define LISTENER_SESSION_BIT MANTRA_LISTENER_BIT
#define MAX_PROVIDERS 256

static _Atomic(mantra_listener_fn) g_listener;
static void *_Atomic g_listener_ctx;
static _Atomic uint64_t g_written, g_too_large, g_bad_string, g_dropped;
static const mantra_provider_desc *g_providers[MAX_PROVIDERS];
static _Atomic uint32_t g_provider_count;
static atomic_flag g_registry_lock = ATOMIC_FLAG_INIT; /* registration is rare: a spin lock */

int64_t mantra_payload_size(const mantra_data *data, uint32_t count) {
    uint64_t total = 0;
    for (uint32_t i = 0; i < count; i++) {
        const mantra_data *d = &data[i];
        uint64_t n;
        switch (d->kind) {
        case MANTRA_DATA_BYTES:
            n = d->size;
            break;
        case MANTRA_DATA_UTF8_AS_UTF16Z: {
            size_t bytes;
            size_t units = d->ptr ? mantra_utf8_utf16_units(d->ptr, &bytes) : 0;
            if (units == SIZE_MAX)
                return MANTRA_WRITE_BAD_STRING;
            n = ((uint64_t)units + 1) * 2;
            break;
        }
        case MANTRA_DATA_UTF16Z: {
            const uint16_t *s = d->ptr;
            uint64_t units = 0;
            if (s)
                while (s[units] != 0 && units <= MANTRA_MAX_PAYLOAD)
                    units++;
            n = (units + 1) * 2;
            break;
        }
        case MANTRA_DATA_UTF8Z: {
            size_t bytes = 0;
            if (d->ptr && mantra_utf8_utf16_units(d->ptr, &bytes) == SIZE_MAX)
                return MANTRA_WRITE_BAD_STRING;
            n = (uint64_t)bytes + 1;
            break;
        }
        default:
            return MANTRA_WRITE_BAD_STRING;
        }
        if (n > MANTRA_MAX_PAYLOAD)
            return MANTRA_WRITE_TOO_LARGE;
        total += n;
        if (total > MANTRA_MAX_PAYLOAD)
            return MANTRA_WRITE_TOO_LARGE;
    }
    return (int64_t)total;
}

int64_t mantra_payload_serialize(const mantra_data *data, uint32_t count, uint8_t *out, size_t out_size) {
    int64_t need = mantra_payload_size(data, count);
    if (need < 0)
        return need;
    if ((uint64_t)need > out_size)
        return MANTRA_WRITE_TOO_LARGE;
    size_t o = 0;
    for (uint32_t i = 0; i < count; i++) {
        const mantra_data *d = &data[i];
        switch (d->kind) {
        case MANTRA_DATA_BYTES:
            if (d->ptr)
                memcpy(out + o, d->ptr, (size_t)d->size);
            else
                memset(out + o, 0, (size_t)d->size);
            o += (size_t)d->size;
            break;
        case MANTRA_DATA_UTF8_AS_UTF16Z:
            if (d->ptr)
                o += mantra_utf8_to_utf16le(d->ptr, strlen(d->ptr), out + o);
            out[o++] = 0;
            out[o++] = 0;
            break;
        case MANTRA_DATA_UTF16Z: {
            const uint16_t *s = d->ptr;
            for (size_t k = 0; s && s[k] != 0; k++) {
                out[o++] = (uint8_t)s[k];
                out[o++] = (uint8_t)(s[k] >> 8);
            }
            out[o++] = 0;
            out[o++] = 0;
            break;
        }
        default: { /* MANTRA_DATA_UTF8Z */
            size_t n = d->ptr ? strlen(d->ptr) : 0;
            if (n)
                memcpy(out + o, d->ptr, n);
            o += n;
            out[o++] = 0;
            break;
        }
        }
    }
    return (int64_t)o;
}

/* A payload over 64 KB: refused; every session that enables the event counts it and spends its
 * sequence number on it, so readers see the gap. */
static int refuse_too_large(const mantra_event_state *state) {
    atomic_fetch_add_explicit(&g_too_large, 1, memory_order_relaxed);
    uint64_t sessions = state ? (MANTRA_ATOMIC_LOAD_RELAXED(&state->enabled) & MANTRA_SESSION_BITS) : 0;
    if (sessions != 0)
        mantra__session_oversized(state, sessions);
    return MANTRA_WRITE_TOO_LARGE;
}

int mantra_event_write(const mantra_event_desc *desc, mantra_event_state *state, const mantra_data *data,
                       uint32_t count) {
    static _Thread_local uint8_t payload[MANTRA_MAX_PAYLOAD];
    int64_t n = mantra_payload_serialize(data, count, payload, sizeof payload);
    if (n == MANTRA_WRITE_TOO_LARGE)
        return refuse_too_large(state);
    if (n < 0) {
        atomic_fetch_add_explicit(&g_bad_string, 1, memory_order_relaxed);
        return (int)n;
    }
    return mantra_event_write_bytes(desc, state, payload, (uint32_t)n);
}

int mantra_event_write_bytes(const mantra_event_desc *desc, mantra_event_state *state, const void *payload,
                             uint32_t size) {
    if (MANTRA_UNLIKELY(size > MANTRA_MAX_PAYLOAD))
        return refuse_too_large(state);
    uint64_t sessions = state ? (MANTRA_ATOMIC_LOAD_RELAXED(&state->enabled) & MANTRA_SESSION_BITS) : 0;
    mantra_listener_fn fn = atomic_load_explicit(&g_listener, memory_order_acquire);
    /* a stopping hook or rundown writes into its session only, not to the listener */
    int to_listener = fn != NULL && mantra__session_exclusive == NULL;
    if (MANTRA_UNLIKELY(to_listener))
        fn(atomic_load_explicit(&g_listener_ctx, memory_order_acquire), desc, payload, size);
    if (sessions != 0) /* counts the event itself, per thread */
        return mantra__session_write(desc, state, sessions, payload, size);
    atomic_fetch_add_explicit(to_listener ? &g_written : &g_dropped, 1, memory_order_relaxed);
    return to_listener ? MANTRA_WRITE_OK : MANTRA_WRITE_DROPPED;
}

uint32_t mantra__provider_count(void) { return atomic_load_explicit(&g_provider_count, memory_order_acquire); }
const mantra_provider_desc *mantra__provider_at(uint32_t i) { return g_providers[i]; }

/* Recomputes the listener bit of every registered event's enabled mask. */
static void publish_listener_bit(bool on) {
    uint32_t np = atomic_load_explicit(&g_provider_count, memory_order_acquire);
    for (uint32_t i = 0; i < np; i++) {
        const mantra_provider_desc *p = g_providers[i];
        for (uint32_t e = 0; e < p->event_count; e++) {
            if (on)
                atomic_fetch_or_explicit(&p->states[e].enabled, LISTENER_SESSION_BIT, memory_order_release);
            else
                atomic_fetch_and_explicit(&p->states[e].enabled, ~LISTENER_SESSION_BIT, memory_order_release);
        }
    }
}

void mantra_set_listener(mantra_listener_fn fn, void *ctx) {
    atomic_store_explicit(&g_listener_ctx, ctx, memory_order_release);
    atomic_store_explicit(&g_listener, fn, memory_order_release);
    publish_listener_bit(fn != NULL);
}

static int register_locked(const mantra_provider_desc *provider) {
    uint32_t np = atomic_load_explicit(&g_provider_count, memory_order_acquire);
    for (uint32_t i = 0; i < np; i++)
        if (g_providers[i] == provider)
            return 0;
    if (np >= MAX_PROVIDERS)
        return MANTRA_ENOSPC;
    /* state->runtime leads from an event's state back to its provider (session write path). */
    for (uint32_t e = 0; e < provider->event_count; e++)
        provider->states[e].runtime = (void *)(uintptr_t)provider;
    g_providers[np] = provider;
    atomic_store_explicit(&g_provider_count, np + 1, memory_order_release);
    if (atomic_load_explicit(&g_listener, memory_order_acquire) != NULL)
        for (uint32_t e = 0; e < provider->event_count; e++)
            atomic_fetch_or_explicit(&provider->states[e].enabled, LISTENER_SESSION_BIT, memory_order_release);
    return 0;
}

int mantra_register_provider(const mantra_provider_desc *provider) {
    while (atomic_flag_test_and_set_explicit(&g_registry_lock, memory_order_acquire))
        ;
    int rc = register_locked(provider);
    atomic_flag_clear_explicit(&g_registry_lock, memory_order_release);
    if (rc == 0)
        mantra__session_refresh_provider(provider); /* running sessions may want its events */
    return rc;
}

void mantra_get_write_counters(mantra_write_counters *out) {
    uint64_t sw, sd;
    mantra__session_event_counts(&sw, &sd);
    out->written = atomic_load_explicit(&g_written, memory_order_relaxed) + sw;
    out->too_large = atomic_load_explicit(&g_too_large, memory_order_relaxed);
    out->bad_string = atomic_load_explicit(&g_bad_string, memory_order_relaxed);
    out->dropped = atomic_load_explicit(&g_dropped, memory_order_relaxed) + sd;
}
