/* dotnet_pgo-internal.h - shared by the files of the mantra_dotnet_pgo library. Private. */
#ifndef MANTRA_DOTNET_PGO_INTERNAL_H
#define MANTRA_DOTNET_PGO_INTERNAL_H

#include "dotnet_pgo.h"

/* pgo_flush.c: the flags the flush of session id uses (a collection's own); the hook takes them
 * back when the session stops. 0 or MANTRA_ERANGE (64 collections at once). */
int pgo_flush_set_session_flags(mantra_session_id id, unsigned flags);

/* pgo_flush.c: registers the generated providers, the hook and the exit-time text dump (once),
 * without changing the default flags. */
int pgo_flush_ensure(void);

#endif
