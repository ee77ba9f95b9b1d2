/* stacks.c - the sampler's tick and the method rundown of interpreted code (dotnet_stacks.h). */
#include <stdatomic.h>
#include <stdlib.h>

#include "dotnet_registry.h"
#include "dotnet_stacks.h"
#include "dotnet_writers.h"
#include "mantra/image.h"

/* SampleProfilerSampleType::Managed (dotnet/runtime, src/coreclr/vm/sampleprofiler.h). */
#define SAMPLE_TYPE_MANAGED 2

static void write_sample(void *ctx, const mantra_interp_sample *s) {
    int *n = ctx;
    int32_t type = SAMPLE_TYPE_MANAGED;
    mantra_event_options o = {0};
    o.stack = s->ips;
    o.stack_depth = (uint32_t)s->frames;
    o.flags = MANTRA_EVENT_OPT_THREAD_ID;
    o.thread_id = s->os_thread_id;
    if (mantra_event_write_bytes_ex(&mantra_SampleProfiler_events[0], &mantra_SampleProfiler_states[0], &type,
                                    sizeof type, &o) == MANTRA_WRITE_OK)
        (*n)++;
}

int mantra_dotnet_stacks_sample(void) {
    if (!MANTRA_SampleProfiler_ThreadSample_enabled())
        return 0;
    int n = 0;
    (void)mantra_interp_sample_threads(write_sample, &n);
    return n;
}

/* Active while a session enables ThreadSample; idle otherwise, until a session starts
 * (wake_sampler). */
static int tick(void *ctx) {
    (void)ctx;
    if (!MANTRA_SampleProfiler_ThreadSample_enabled())
        return 0;
    (void)mantra_dotnet_stacks_sample();
    return 1;
}

/* A session has started and its masks are published (start hooks run after that): if it enables
 * ThreadSample, the idle sampler's next tick samples at once. */
static void wake_sampler(void *ctx, const mantra_session_info *info, const mantra_provider_spec *specs, size_t n) {
    (void)ctx;
    (void)info;
    (void)specs;
    (void)n;
    mantra_interp_sampler_wake();
}

/* ---- rundown ----------------------------------------------------------------------------------- */

typedef struct rundown_ctx {
    int start; /* phase AT_START: the DCStart events */
    uint64_t keywords;
    int methods;
} rundown_ctx;

static const mantra_guid zero_guid;

static void module_rundown(const rundown_ctx *c, uint64_t module_id, uint32_t flags, const char *path,
                           const mantra_guid *pdb) {
    if (!(c->keywords & MANTRA_DOTNET_RUNDOWN_LOADER))
        return;
    if (c->start)
        (void)mantra_DotNETRuntimeRundown_ModuleDCStart_V2_write(module_id, module_id, flags, 0, path, "", 0, pdb, 0, "",
                                                                  &zero_guid, 0, "");
    else
        (void)mantra_DotNETRuntimeRundown_ModuleDCEnd_V2_write(module_id, module_id, flags, 0, path, "", 0, pdb, 0, "",
                                                                &zero_guid, 0, "");
}

static void method_rundown(rundown_ctx *c, uint64_t module_id, const mantra_interp_method_identity *id, uint64_t start,
                           uint32_t size) {
    if (c->start)
        (void)mantra_DotNETRuntimeRundown_MethodDCStartVerbose_V2_write(start, module_id, start, size, id->token, 0,
                                                                        id->namespace_name, id->name, id->signature, 0, 0);
    else
        (void)mantra_DotNETRuntimeRundown_MethodDCEndVerbose_V2_write(start, module_id, start, size, id->token, 0,
                                                                      id->namespace_name, id->name, id->signature, 0, 0);
    c->methods++;
}

/* An image's methods (NGen rundown): MethodDC*Verbose with the entry part (MethodSize the hot
 * size and MethodFlags' extent HotSection 0, as the runtime writes R2R methods), then mantra's
 * R2RMethodDCStart/End with both parts. */
static void image_rundown(rundown_ctx *c, const mantra_image *im) {
    mantra_interp_method_identity id;
    if (mantra_interp_module_method(mantra_image_module(im), 0, &id) != 0)
        return;
    uint64_t module_id = mantra_dotnet_image_module_id(im);
    mantra_guid g = mantra_dotnet_module_guid(&id);
    module_rundown(c, module_id, MANTRA_DOTNET_IMAGE_MODULE_FLAGS, mantra_image_path(im), &g);
    if (!(c->keywords & MANTRA_DOTNET_RUNDOWN_NGEN))
        return;
    for (size_t i = 0; i < mantra_image_method_count(im); i++) {
        mantra_image_method_info mi;
        if (mantra_image_method(im, i, &mi) != 0)
            continue;
        uint64_t hot = mi.hot_start, cold = mi.cold_start;
        method_rundown(c, module_id, &mi.id, hot, mi.hot_size);
        if (c->start)
            (void)mantra_DotNETRuntimeRundown_R2RMethodDCStart_write(hot, module_id, hot, mi.hot_size, cold, mi.cold_size,
                                                                     mi.id.token, 0, 0);
        else
            (void)mantra_DotNETRuntimeRundown_R2RMethodDCEnd_write(hot, module_id, hot, mi.hot_size, cold, mi.cold_size,
                                                                   mi.id.token, 0, 0);
    }
}

static void program_rundown(void *arg, const mantra_interp_program *p) {
    rundown_ctx *c = arg;
    const mantra_image *im = mantra_image_of_program(p);
    if (im != NULL) {
        image_rundown(c, im);
        return;
    }
    const mantra_interp_module *m = mantra_interp_program_module(p);
    uint64_t module_id = (uint64_t)(uintptr_t)p;
    size_t count = mantra_interp_module_method_count(m);
    const char *path = "";
    mantra_interp_method_identity id;
    if (count > 0 && mantra_interp_module_method(m, 0, &id) == 0)
        path = id.module_name;
    module_rundown(c, module_id, 0, path, &zero_guid);
    if (!(c->keywords & MANTRA_DOTNET_RUNDOWN_JIT))
        return;
    for (size_t i = 0; i < count; i++) {
        const uint8_t *code;
        size_t size;
        if (mantra_interp_module_method(m, i, &id) != 0 || mantra_interp_program_code(p, i, &code, &size) != 0)
            continue;
        method_rundown(c, module_id, &id, (uint64_t)(uintptr_t)code, (uint32_t)size);
    }
}

int mantra_dotnet_stacks_rundown_ex(int phase, uint64_t keywords) {
    rundown_ctx c = {phase == MANTRA_RUNDOWN_AT_START, keywords, 0};
    if (!c.start && !(keywords & MANTRA_DOTNET_RUNDOWN_END))
        return 0; /* an end rundown is asked for by EndRundown (0x100) */
    if (c.start)
        (void)mantra_DotNETRuntimeRundown_DCStartInit_V1_write(0);
    else
        (void)mantra_DotNETRuntimeRundown_DCEndInit_V1_write(0);
    (void)mantra_interp_foreach_program(program_rundown, &c);
    if (c.start)
        (void)mantra_DotNETRuntimeRundown_DCStartComplete_V1_write(0);
    else
        (void)mantra_DotNETRuntimeRundown_DCEndComplete_V1_write(0);
    return c.methods;
}

int mantra_dotnet_stacks_rundown(int phase) {
    return mantra_dotnet_stacks_rundown_ex(phase, UINT64_MAX);
}

static void rundown_cb(void *ctx, const mantra_session_info *info, int phase) {
    (void)ctx;
    (void)mantra_dotnet_stacks_rundown_ex(phase, info->rundown_keywords);
}

/* ---- lifetime ---------------------------------------------------------------------------------- */

static _Atomic int g_registered;

int mantra_dotnet_stacks_init(uint32_t interval_ms) {
    int rc = mantra_dotnet_register();
    if (rc < 0)
        return rc;
    if (!atomic_exchange(&g_registered, 1)) {
        if ((rc = mantra_rundown_register(rundown_cb, NULL)) < 0) {
            atomic_store(&g_registered, 0);
            return rc;
        }
        if ((rc = mantra_session_add_start_hook(wake_sampler, NULL)) < 0) {
            (void)mantra_rundown_unregister(rundown_cb, NULL);
            atomic_store(&g_registered, 0);
            return rc;
        }
    }
    if (interval_ms == 0) {
        const char *v = getenv("MANTRA_SampleProfilerIntervalMs");
        interval_ms = v != NULL ? (uint32_t)strtoul(v, NULL, 10) : 0u;
    }
    rc = mantra_interp_sampler_start(interval_ms ? interval_ms : 1u, tick, NULL);
    return rc == MANTRA_ESTATE ? 0 : rc; /* already running */
}

void mantra_dotnet_stacks_fini(void) {
    mantra_interp_sampler_stop();
    if (atomic_exchange(&g_registered, 0)) {
        (void)mantra_rundown_unregister(rundown_cb, NULL);
        (void)mantra_session_remove_start_hook(wake_sampler, NULL);
    }
}
