/* dotnet_pgo.h - PGO data into traces, as the .NET runtime writes it for dotnet-pgo (library
 * mantra_dotnet_pgo, beside the generated mantra_dotnet: it writes through the generated writers
 * of manifest/dotnet.yaml, so it sits above libmantra's layers; docs/pgo.md "The session flush").
 *
 *  - The flush: a session-stopping hook. When the stopping session enables
 *    JitInstrumentationDataVerbose (Microsoft-Windows-DotNETRuntime, keyword
 *    JitInstrumentationData 0x10000000000), it writes into that session only, for every method
 *    of the PGO store: ModuleLoad V2 (id 152) once per module, MethodJittingStarted V1 (id 145,
 *    with the bytecode size as MethodILSize), MethodLoadVerbose V2 (id 143),
 *    then the method's PgoFormat blob in JitInstrumentationDataVerbose (id 298) chunks of at most
 *    40,000 bytes, MethodFlags = chunk index, | 0x80000000 on the last. MethodID is the method's
 *    registration index (mantra_pgo_method_info.index), ModuleID the module's.
 *  - Collections: mantra_pgo_collect starts a file session with that keyword (and Loader | Jit
 *    for the identity events) and stops exactly that session when its window ends.
 *  - The text dump of the environment (MANTRA_WritePGOData) at process exit.
 */
#ifndef MANTRA_DOTNET_PGO_H
#define MANTRA_DOTNET_PGO_H

#include <stdint.h>

#include "mantra/pgo.h"
#include "mantra/session.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Flags of the flush and of collections. */
#define MANTRA_PGO_FLUSH_DELTAS 1u /* snapshot with MANTRA_PGO_SNAPSHOT_RESET: each flush holds
                                    * the counts since the previous one (default: cumulative) */

/* The providers of a collection: JitInstrumentationData | Loader | Jit, Verbose. */
#define MANTRA_PGO_COLLECT_PROVIDERS "Microsoft-Windows-DotNETRuntime:0x10000000018:5"
#define MANTRA_PGO_COLLECT_DEFAULT_SECONDS 10u

typedef struct mantra_pgo_flush_stats {
    uint32_t modules;  /* ModuleLoad events */
    uint32_t methods;  /* MethodLoadVerbose events (methods with data) */
    uint32_t chunks;   /* JitInstrumentationDataVerbose events */
    uint64_t bytes;    /* PgoFormat bytes in them */
    uint32_t failed;   /* writes that did not succeed (dropped, disabled, errors) */
} mantra_pgo_flush_stats;

/* Registers the generated providers, installs the flush hook (flags for every session that is not
 * a collection with its own flags), and registers the text dump of the environment
 * (mantra_pgo_text_dump_env) with atexit once. Idempotent; a later call changes the flags. */
int mantra_dotnet_pgo_init(unsigned flags);
/* Removes the flush hook. */
int mantra_dotnet_pgo_fini(void);

/* Writes the flush events for every method of the PGO store from the calling thread (the hook
 * calls it; events go wherever the calling thread's writes go). st may be NULL. 0 or MANTRA_ENOMEM. */
int mantra_pgo_flush_write(unsigned flags, mantra_pgo_flush_stats *st);
/* The statistics of the last flush the hook wrote (for tests and tools). */
void mantra_pgo_flush_last_stats(mantra_pgo_flush_stats *out);

/* Starts a collection: a file session into path with MANTRA_PGO_COLLECT_PROVIDERS, stopped when
 * seconds have passed (0: MANTRA_PGO_COLLECT_DEFAULT_SECONDS) by mantra_session_stop_after (a
 * timer thread, or a pump job in the threadless build); its stop writes the flush. flags: 0 or
 * MANTRA_PGO_FLUSH_DELTAS (also set by MANTRA_PGOCollectReset=1). *id (may be NULL) gets the
 * session. Calls mantra_dotnet_pgo_init(0) first when needed. 0 or a MANTRA_E* code. */
int mantra_pgo_collect(const char *path, uint32_t seconds);
int mantra_pgo_collect_ex(const char *path, uint32_t seconds, unsigned flags, mantra_session_id *id);

/* Asks for a collection from a signal handler (async-signal-safe: sets a flag only). */
void mantra_pgo_collect_request(void);
/* Starts the requested collection, if any: into MANTRA_PGOCollectPath or else default_path, for
 * MANTRA_PGOCollectSeconds (default 10). Either path is a template: "{pid}" becomes the process
 * id and "{n}" the collection's number in the process, from 1 (mantra_output_path_expand), so
 * that repeated collections keep every snapshot. 1 started, 0 nothing requested, or a MANTRA_E*
 * code. */
int mantra_pgo_collect_poll(const char *default_path);
/* Queues a mantra_pump job that calls mantra_pgo_collect_poll(default_path, copied) at every pump
 * until mantra_shutdown. 0 or a MANTRA_E* code. */
int mantra_pgo_collect_watch(const char *default_path);
/* Ends the job of mantra_pgo_collect_watch at its next run. */
void mantra_pgo_collect_unwatch(void);

#ifdef __cplusplus
}
#endif

#endif /* MANTRA_DOTNET_PGO_H */
