/* mantra-demo: what `make demo` runs.
 *
 * Registers the providers generated from manifest/dotnet.yaml, shows that a disabled event costs
 * nothing, then attaches an in-process listener and writes a module load, a few method loads (JIT
 * and precompiled with hot/cold regions), a block-count PGO payload and the ProcessInfo event with
 * the generated typed writers. The listener decodes every payload with the generated typed readers
 * and prints it; any value that does not come back as written makes the demo exit 1.
 *
 * Until the runtime's sessions land (trace files), this is the whole write path: manifest ->
 * generated writer -> libmantra payload serialisation -> listener -> generated reader. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dotnet_readers.h"
#include "dotnet_writers.h"

static int g_mismatches;
static int g_events;

static void expect(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "mantra-demo: MISMATCH: %s\n", what);
        g_mismatches++;
    }
}

static const char *utf8(mantra_str16 s, char *buf, size_t size) {
    mantra_str16_to_utf8(s, buf, size);
    return buf;
}

static void hexdump(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i += 16) {
        printf("      %04zx ", i);
        for (size_t j = i; j < i + 16 && j < n; j++)
            printf(" %02x", p[j]);
        printf("\n");
    }
}

static void on_event(void *ctx, const mantra_event_desc *d, const uint8_t *payload, size_t size) {
    (void)ctx;
    char a[128], b[128], c[128];
    g_events++;
    printf("  event %-28s id %-4" PRIu32 " v%u  %3zu bytes  keywords 0x%" PRIx64 "\n", d->symbol, d->id, d->version, size,
           d->keywords);
    if (d == &mantra_DotNETRuntime_events[MANTRA_DotNETRuntime_EVENT_ModuleLoad_V2]) {
        mantra_DotNETRuntime_ModuleLoad_V2_fields f;
        expect(mantra_DotNETRuntime_ModuleLoad_V2_decode(payload, size, 8, &f) == MANTRA_DECODE_OK, "ModuleLoad decode");
        printf("      ModuleID=0x%" PRIx64 " ModuleILPath=\"%s\" flags=%s\n", f.ModuleID, utf8(f.ModuleILPath, a, sizeof a),
               mantra_DotNETRuntime_ModuleFlagsMap_name(f.ModuleFlags));
        expect(f.ModuleID == 0x7f0010000000u, "ModuleID");
        expect(mantra_str16_equals_utf8(f.ModuleILPath, "/opt/app/Hello.dll"), "ModuleILPath");
        hexdump(payload, size < 48 ? size : 48);
    } else if (d == &mantra_DotNETRuntime_events[MANTRA_DotNETRuntime_EVENT_MethodLoadVerbose_V2]) {
        mantra_DotNETRuntime_MethodLoadVerbose_V2_fields f;
        expect(mantra_DotNETRuntime_MethodLoadVerbose_V2_decode(payload, size, 8, &f) == MANTRA_DECODE_OK,
               "MethodLoadVerbose decode");
        printf("      %s.%s %s at 0x%" PRIx64 " size %" PRIu32 "\n", utf8(f.MethodNamespace, a, sizeof a),
               utf8(f.MethodName, b, sizeof b), utf8(f.MethodSignature, c, sizeof c), f.MethodStartAddress, f.MethodSize);
        expect(f.MethodSize > 0 && f.ReJITID == 0, "MethodLoadVerbose values");
    } else if (d == &mantra_DotNETRuntime_events[MANTRA_DotNETRuntime_EVENT_R2RMethodLoad]) {
        mantra_DotNETRuntime_R2RMethodLoad_fields f;
        expect(mantra_DotNETRuntime_R2RMethodLoad_decode(payload, size, 8, &f) == MANTRA_DECODE_OK, "R2RMethodLoad decode");
        printf("      hot 0x%" PRIx64 "+%" PRIu32 "  cold 0x%" PRIx64 "+%" PRIu32 "\n", f.HotStartAddress, f.HotSize,
               f.ColdStartAddress, f.ColdSize);
        expect(f.HotSize == 0x40 && f.ColdSize == 0x180, "R2RMethodLoad sizes");
    } else if (d == &mantra_DotNETRuntime_events[MANTRA_DotNETRuntime_EVENT_JitInstrumentationData]) {
        mantra_DotNETRuntime_JitInstrumentationData_fields f;
        expect(mantra_DotNETRuntime_JitInstrumentationData_decode(payload, size, 8, &f) == MANTRA_DECODE_OK,
               "JitInstrumentationData decode");
        printf("      MethodID=0x%" PRIx64 " %" PRIu32 " bytes of PGO data (kind BasicBlockIntCount = 0x%x)\n", f.MethodID,
               f.DataSize, MANTRA_PGO_BasicBlockIntCount);
        expect(f.Data.size == f.DataSize && f.Data.size == 6, "PGO data length");
    } else if (d == &mantra_EventPipe_events[MANTRA_EventPipe_EVENT_ProcessInfo]) {
        mantra_EventPipe_ProcessInfo_fields f;
        expect(mantra_EventPipe_ProcessInfo_decode(payload, size, 8, &f) == MANTRA_DECODE_OK, "ProcessInfo decode");
        printf("      CommandLine=\"%s\" OS=\"%s\" Arch=\"%s\"\n", utf8(f.CommandLine, a, sizeof a),
               utf8(f.OSInformation, b, sizeof b), utf8(f.ArchInformation, c, sizeof c));
        expect(mantra_str16_equals_utf8(f.CommandLine, "mantra-demo --grüße"), "CommandLine");
    }
}

int main(int argc, char **argv) {
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: mantra-demo\n\nWrites a few events of manifest/dotnet.yaml with the generated writers and\n"
               "decodes them with the generated readers. Exit status 0 when every value comes back.\n");
        return 0;
    }
    if (mantra_dotnet_register() != 0) {
        fprintf(stderr, "mantra-demo: could not register the providers\n");
        return 1;
    }
    printf("mantra demo: %d providers from manifest/dotnet.yaml\n", MANTRA_DOTNET_PROVIDER_COUNT);
    for (size_t i = 0; i < MANTRA_DOTNET_PROVIDER_COUNT; i++)
        printf("  %-40s %3" PRIu32 " event versions\n", mantra_dotnet_providers[i]->name,
               mantra_dotnet_providers[i]->event_count);

    int rc = mantra_DotNETRuntime_MethodLoad_V2_write(1, 2, 3, 4, 5, 6, 7, 8);
    printf("\nno session: MethodLoad_V2 enabled=%d, write returns %d (disabled: nothing serialised)\n",
           MANTRA_DotNETRuntime_MethodLoad_V2_enabled() ? 1 : 0, rc);
    expect(rc == MANTRA_WRITE_DISABLED, "disabled write");

    printf("\nlistener attached:\n");
    mantra_set_listener(on_event, NULL);
    const mantra_guid pdb = {0x12345678u, 0x9abc, 0xdef0, {1, 2, 3, 4, 5, 6, 7, 8}};
    mantra_DotNETRuntime_ModuleLoad_V2_write(0x7f0010000000u, 0x7f0020000000u, 0x8 /* Manifest */, 0,
                                             "/opt/app/Hello.dll", "", 1, &pdb, 1, "/src/Hello.pdb", NULL, 0, "");
    static const char *const methods[][3] = {
        {"Hello.Program", "Main", "void (string[])"},
        {"Hello.Program", "Fib", "int32 (int32)"},
        {"System.Collections.Generic.List`1[System.Int32]", "Add", "void (!0)"},
    };
    for (int i = 0; i < 3; i++) {
        if (MANTRA_DotNETRuntime_MethodLoadVerbose_V2_enabled()) /* guard, then the out-of-line part */
            mantra_DotNETRuntime_MethodLoadVerbose_V2_emit(0x1000u + (uint64_t)i, 0x7f0010000000u,
                                                            0x7f0030000000u + 0x100u * (uint64_t)i, 0x80u + (uint32_t)i,
                                                            0x06000001u + (uint32_t)i, 0x8 /* Jitted */, methods[i][0],
                                                            methods[i][1], methods[i][2], 1, 0);
    }
    mantra_DotNETRuntime_R2RMethodLoad_write(0x2000, 0x7f0010000000u, 0x7f0040000000u, 0x40, 0x7f0050000000u, 0x180,
                                             0x06000010u, 0, 1);
    const uint8_t pgo[6] = {0x41, 0x00, 0x01, 0x10, 0x00, 0x00}; /* a tiny schema+count record */
    mantra_DotNETRuntime_JitInstrumentationData_write(1, 0, sizeof pgo, 0x1001, pgo);
    mantra_EventPipe_ProcessInfo_write("mantra-demo --grüße", "Linux", "x64");
    mantra_set_listener(NULL, NULL);

    mantra_write_counters counters;
    mantra_get_write_counters(&counters);
    printf("\n%d events written and decoded; refused: %" PRIu64 " too large, %" PRIu64 " bad strings\n", g_events,
           counters.too_large, counters.bad_string);
    if (g_mismatches || g_events != 7) {
        fprintf(stderr, "mantra-demo: FAILED (%d mismatches, %d events)\n", g_mismatches, g_events);
        return 1;
    }
    printf("every value came back as written.\n");
    return 0;
}
