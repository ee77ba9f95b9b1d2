/* The provider registry (mantra_register_provider, mantra/event.h): the registered providers,
 * whose events sessions and the process listener can enable. Registration is rare: a spin lock
 * guards it, and entries never change once published, so readers walk the table without it. */
#include "session-internal.h"

#define MAX_PROVIDERS 256

static const mantra_provider_desc *g_providers[MAX_PROVIDERS];
static _Atomic uint32_t g_provider_count;
static atomic_flag g_registry_lock = ATOMIC_FLAG_INIT;

uint32_t ss_provider_count(void) { return atomic_load_explicit(&g_provider_count, memory_order_acquire); }
const mantra_provider_desc *ss_provider_at(uint32_t i) { return g_providers[i]; }

void ss_publish_listener_bit(int on) {
    uint32_t np = atomic_load_explicit(&g_provider_count, memory_order_acquire);
    for (uint32_t i = 0; i < np; i++) {
        const mantra_provider_desc *p = g_providers[i];
        for (uint32_t e = 0; e < p->event_count; e++) {
            if (on)
                atomic_fetch_or_explicit(&p->states[e].enabled, MANTRA_LISTENER_BIT, memory_order_release);
            else
                atomic_fetch_and_explicit(&p->states[e].enabled, ~MANTRA_LISTENER_BIT, memory_order_release);
        }
    }
}

static int register_locked(const mantra_provider_desc *provider) {
    uint32_t np = atomic_load_explicit(&g_provider_count, memory_order_acquire);
    for (uint32_t i = 0; i < np; i++)
        if (g_providers[i] == provider)
            return MANTRA_OK;
    if (np >= MAX_PROVIDERS)
        return MANTRA_ENOSPC;
    /* state->runtime leads from an event's state back to its provider (session write path). */
    for (uint32_t e = 0; e < provider->event_count; e++)
        provider->states[e].runtime = (void *)(uintptr_t)provider;
    g_providers[np] = provider;
    atomic_store_explicit(&g_provider_count, np + 1, memory_order_release);
    if (ss_listener_active())
        for (uint32_t e = 0; e < provider->event_count; e++)
            atomic_fetch_or_explicit(&provider->states[e].enabled, MANTRA_LISTENER_BIT, memory_order_release);
    return MANTRA_OK;
}

int mantra_register_provider(const mantra_provider_desc *provider) {
    while (atomic_flag_test_and_set_explicit(&g_registry_lock, memory_order_acquire))
        ;
    int rc = register_locked(provider);
    atomic_flag_clear_explicit(&g_registry_lock, memory_order_release);
    if (rc == MANTRA_OK)
        ss_refresh_provider(provider); /* running sessions may want its events */
    return rc;
}
