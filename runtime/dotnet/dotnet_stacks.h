/* dotnet_stacks.h - interpreted call stacks in traces, as the .NET runtime writes managed ones for
 * dotnet-trace, dotnet-stack and PerfView (library mantra_dotnet_pgo, beside the PGO flush: it
 * writes through the generated writers of manifest/dotnet.yaml; docs/interp.md "Sampling").
 *
 *  - The sampler: while a session enables Microsoft-DotNETCore-SampleProfiler ThreadSample (id 0),
 *    every interval (1 ms by default, as the runtime's sample profiler: dotnet/runtime,
 *    src/native/eventpipe/ep-sample-profiler.c) one ThreadSample per interpreter thread inside a
 *    run, payload Type = 2 (Managed: SampleProfilerSampleType in the runtime's sampleprofiler.h),
 *    written by the sampler thread on behalf of the sampled one (its OS thread id in the header,
 *    the sampler's as capture thread) with the interpreted call stack as the event's stack
 *    (mantra_interp_sample_threads: pseudo IPs in the program's code).
 *  - The rundown: a rundown callback (mantra_rundown_register) writes, per loaded program, one
 *    ModuleDCStart/ModuleDCEnd V2 (id 153/154; ModuleID = AssemblyID = the program's address, the
 *    module's name as ModuleILPath) and per method MethodDCStartVerbose/MethodDCEndVerbose V2
 *    (id 143/144) with MethodStartAddress/MethodSize = the method's code range, so that TraceLog
 *    resolves the samples' addresses to "Namespace.Name" (MethodID = the code address, MethodToken
 *    the method's token, MethodFlags 0 = jitted code), between DCStartInit/DCEndInit and
 *    DCStartComplete/DCEndComplete V1 (ids 147/148 and 145/146) as the runtime's rundown does
 *    (dotnet/runtime, src/coreclr/vm/eventtrace.cpp, ETW::EnumerationLog).
 */
#ifndef MANTRA_DOTNET_STACKS_H
#define MANTRA_DOTNET_STACKS_H

#include <stdint.h>

#include "mantra/interp.h"
#include "mantra/session.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Registers the generated providers and the rundown callback and starts the sampler thread with
 * interval_ms (0: MANTRA_SampleProfilerIntervalMs, else 1). Idempotent. 0, or a MANTRA_E* code;
 * the threadless build has no sampler (MANTRA_EUNSUPPORTED from the start, the rundown is
 * registered all the same, and mantra_dotnet_stacks_sample can be called by the host). */
int mantra_dotnet_stacks_init(uint32_t interval_ms);
/* Stops the sampler and removes the rundown callback. */
void mantra_dotnet_stacks_fini(void);
/* One sampling pass now, on the calling thread, when ThreadSample is enabled: the number of
 * ThreadSample events written (0 when disabled or no thread is inside a run). */
int mantra_dotnet_stacks_sample(void);
/* Writes the rundown events of every loaded program from the calling thread (the callback calls
 * it; phase MANTRA_RUNDOWN_AT_START or _AT_STOP) as keywords ask (rundown keywords: Loader 0x8 the
 * modules, Jit 0x10 methods run from source, NGen 0x20 methods of images, with mantra's
 * R2RMethodDCStart/End giving both parts; at stop only with End 0x100). The number of methods. */
int mantra_dotnet_stacks_rundown_ex(int phase, uint64_t keywords);
/* The same with every keyword. */
int mantra_dotnet_stacks_rundown(int phase);

/* ---- precompiled images (image_events.c) -------------------------------------------------- */

#define MANTRA_DOTNET_APPDOMAIN_ID 1u              /* the one domain's AppDomainID in events */
#define MANTRA_DOTNET_ASSEMBLY_READY_TO_RUN 0x10u  /* AssemblyFlags: the runtime's ReadyToRunAssembly */
#define MANTRA_DOTNET_IMAGE_MODULE_FLAGS 0x28u     /* ModuleFlags: Manifest | ReadyToRunModule */
#define MANTRA_DOTNET_RUNDOWN_END 0x100u           /* EndRundown keyword */
#define MANTRA_DOTNET_RUNDOWN_LOADER 0x8u
#define MANTRA_DOTNET_RUNDOWN_JIT 0x10u
#define MANTRA_DOTNET_RUNDOWN_NGEN 0x20u

struct mantra_image;
/* Sets the image listener that writes the load, first-call and unload events of images
 * (mantra/image.h). 0 or a MANTRA_E* code. */
int mantra_dotnet_images_init(void);
void mantra_dotnet_images_fini(void);
/* A module's GUID (mantra_interp_method_identity.module_guid's bytes) as a GUID field. */
mantra_guid mantra_dotnet_module_guid(const mantra_interp_method_identity *id);
/* The ModuleID (and AssemblyID) of an image in events. */
uint64_t mantra_dotnet_image_module_id(const struct mantra_image *im);

/* ---- method enter/leave and async logical calls (interp_events.c) ------------------------- */

/* Registers the generated providers and a session start hook that installs the profiler layer's
 * tracer (mantra_prof_trace_start) while any Mantra-Interp event is enabled: MethodEnter and
 * MethodLeave with Kind, AsyncMethodStart/Stop/Suspend/Resume with activity ids (docs/profiler.md
 * "In traces"). Sessions started before it (startup tracing) are seen too. Idempotent. 0 or a
 * MANTRA_E* code (MANTRA_ESTATE: another tracer is set). */
int mantra_dotnet_interp_events_init(void);
void mantra_dotnet_interp_events_fini(void);

#ifdef __cplusplus
}
#endif

#endif /* MANTRA_DOTNET_STACKS_H */
