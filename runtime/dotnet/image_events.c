/* image_events.c - the runtime provider's events of precompiled images (dotnet_stacks.h), written
 * where the .NET runtime writes them for ReadyToRun code (dotnet/runtime src/coreclr/vm/eventtrace.cpp;
 * ../shared/reference/clr-events.md):
 *  - loading an image: AssemblyLoad V1, ModuleLoad V2, DomainModuleLoad V1 (Loader 0x8), in the
 *    order a .NET runtime writes them for an assembly it loads (its traces show that order);
 *  - the first call of a precompiled method (the runtime's R2R "restore" of a method):
 *    R2RGetEntryPointStart, then R2RGetEntryPoint V1 (V0's fields and the entry part's size;
 *    CompilationDiagnostic 0x2000000000) and mantra's R2RMethodLoad with both parts (NGen 0x20);
 *  - unloading: MethodUnloadVerbose V2 for every method that was called (its load was reported),
 *    then ModuleUnload V2.
 * Identities: ModuleID = AssemblyID = the image's program (as for programs run from source),
 * MethodID = the method's entry address, ModuleILPath = the image's path, ManagedPdbSignature = the
 * module's GUID (tools check an image file against it), ModuleFlags = Manifest | ReadyToRunModule. */
#include <stdatomic.h>
#include <string.h>

#include "dotnet_registry.h"
#include "dotnet_stacks.h"
#include "dotnet_writers.h"
#include "mantra/image.h"

static const mantra_guid zero_guid;

mantra_guid mantra_dotnet_module_guid(const mantra_interp_method_identity *id) {
    mantra_guid g;
    const uint8_t *b = id->module_guid;
    g.data1 = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    g.data2 = (uint16_t)(b[4] | b[5] << 8);
    g.data3 = (uint16_t)(b[6] | b[7] << 8);
    memcpy(g.data4, b + 8, 8);
    return g;
}

uint64_t mantra_dotnet_image_module_id(const mantra_image *im) {
    return (uint64_t)(uintptr_t)mantra_image_program(im);
}

/* The module's name and GUID (from its first method; an image has at least one: the checks of
 * opening refuse one without). */
static int identity(const mantra_image *im, mantra_interp_method_identity *id) {
    return mantra_interp_module_method(mantra_image_module(im), 0, id);
}

static void loaded(void *ctx, const mantra_image *im) {
    (void)ctx;
    mantra_interp_method_identity id;
    if (identity(im, &id) != 0)
        return;
    uint64_t module_id = mantra_dotnet_image_module_id(im);
    mantra_guid g = mantra_dotnet_module_guid(&id);
    (void)mantra_DotNETRuntime_AssemblyLoad_V1_write(module_id, MANTRA_DOTNET_APPDOMAIN_ID, 0,
                                                      MANTRA_DOTNET_ASSEMBLY_READY_TO_RUN, id.module_name, 0);
    (void)mantra_DotNETRuntime_ModuleLoad_V2_write(module_id, module_id, MANTRA_DOTNET_IMAGE_MODULE_FLAGS, 0,
                                                    mantra_image_path(im), "", 0, &g, 0, "", &zero_guid, 0, "");
    (void)mantra_DotNETRuntime_DomainModuleLoad_V1_write(module_id, module_id, MANTRA_DOTNET_APPDOMAIN_ID,
                                                          MANTRA_DOTNET_IMAGE_MODULE_FLAGS, 0, mantra_image_path(im), "",
                                                          0);
}

static void first_call(void *ctx, const mantra_image *im, size_t method) {
    (void)ctx;
    mantra_image_method_info mi;
    if (mantra_image_method(im, method, &mi) != 0)
        return;
    uint64_t hot = mi.hot_start, cold = mi.cold_start;
    (void)mantra_DotNETRuntime_R2RGetEntryPointStart_write(hot, 0);
    (void)mantra_DotNETRuntime_R2RGetEntryPoint_V1_write(hot, mi.id.namespace_name, mi.id.name, mi.id.signature, hot, 0,
                                                          mi.hot_size);
    (void)mantra_DotNETRuntime_R2RMethodLoad_write(hot, mantra_dotnet_image_module_id(im), hot, mi.hot_size, cold,
                                                   mi.cold_size, mi.id.token, 0, 0);
}

static void unloading(void *ctx, const mantra_image *im) {
    (void)ctx;
    uint64_t module_id = mantra_dotnet_image_module_id(im);
    size_t n = mantra_image_method_count(im);
    for (size_t i = 0; i < n; i++) {
        mantra_image_method_info mi;
        if (!mantra_image_method_called(im, i) || mantra_image_method(im, i, &mi) != 0)
            continue;
        uint64_t hot = mi.hot_start;
        (void)mantra_DotNETRuntime_MethodUnloadVerbose_V2_write(hot, module_id, hot, mi.hot_size, mi.id.token, 0,
                                                                mi.id.namespace_name, mi.id.name, mi.id.signature, 0, 0);
    }
    mantra_interp_method_identity id;
    if (identity(im, &id) != 0)
        return;
    mantra_guid g = mantra_dotnet_module_guid(&id);
    (void)mantra_DotNETRuntime_ModuleUnload_V2_write(module_id, module_id, MANTRA_DOTNET_IMAGE_MODULE_FLAGS, 0,
                                                      mantra_image_path(im), "", 0, &g, 0, "", &zero_guid, 0, "");
}

int mantra_dotnet_images_init(void) {
    int rc = mantra_dotnet_register();
    if (rc < 0)
        return rc;
    mantra_image_listener l = {loaded, unloading, first_call, NULL};
    mantra_image_set_listener(&l);
    return 0;
}

void mantra_dotnet_images_fini(void) {
    mantra_image_set_listener(NULL);
}
