/* session-internal.h - what core/event_write.c and session/ share. Private. */
#ifndef MANTRA_SESSION_INTERNAL_H
#define MANTRA_SESSION_INTERNAL_H

#include <stdint.h>

#include "mantra/event.h"

/* Bit 63 of mantra_event_state.enabled is the process-wide listener's; sessions use 0..62. */
#define MANTRA_LISTENER_BIT (UINT64_C(1) << 63)
#define MANTRA_SESSION_BITS (~MANTRA_LISTENER_BIT)

/* Registry (core/event_write.c): the number of registered providers and provider i. Entries
 * never change once published. */
uint32_t mantra__provider_count(void);
const mantra_provider_desc *mantra__provider_at(uint32_t i);

/* Sessions (session/session.c): recomputes the session bits of one provider's events (called by
 * registration), and writes one serialised payload into every session of `sessions`. Returns
 * MANTRA_WRITE_OK, or MANTRA_WRITE_DROPPED when at least one session dropped it. */
void mantra__session_refresh_provider(const mantra_provider_desc *provider);
int mantra__session_write(const mantra_event_desc *desc, const mantra_event_state *state, uint64_t sessions,
                          const uint8_t *payload, uint32_t size);

void mantra__session_set_error(const char *msg);

/* Events written to / dropped by sessions (mantra__session_write counts them itself), summed over
 * threads. */
void mantra__session_event_counts(uint64_t *written, uint64_t *dropped);

/* An oversized payload: every session of `sessions` counts it as dropped and consumes its sequence
 * number. */
void mantra__session_oversized(const mantra_event_state *state, uint64_t sessions);

/* The session a stopping hook or rundown callback writes into (NULL otherwise): its events go to
 * that session only, not to other sessions or the process listener. */
extern _Thread_local void *mantra__session_exclusive;

#endif /* MANTRA_SESSION_INTERNAL_H */
