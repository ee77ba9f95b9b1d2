/* workflow_writer - the writer of the manifest-workflow test (tests/workflow/run_workflow.py), built
 * against the regenerated copy of manifest/dotnet.yaml that adds JitInstrumentationDataVerbose V1
 * (the V0 fields and Tier, UInt16, at the end) and the PGO kind WorkflowProbeIntCount. It writes,
 * through a real session into TRACE, method 0x10 with V0 and method 0x20 with V1, both with a
 * BasicBlockIntCount record and a WorkflowProbeIntCount record of two values:
 *
 *   workflow_writer TRACE
 *
 * It compiles only against the regenerated code: the V1 writer and MANTRA_PGO_WorkflowProbeIntCount
 * exist nowhere else. */
#include <stdio.h>
#include <stdlib.h>

#include "dotnet_defs.h"
#include "dotnet_registry.h"
#include "dotnet_writers.h"
#include "mantra/pgo.h"
#include "mantra/session.h"

static int fail(const char *what, int rc) {
    fprintf(stderr, "workflow_writer: %s failed (%d): %s\n", what, rc, mantra_session_last_error());
    return 1;
}

/* The method's data as one chunk (it is far below the 40,000-byte chunk size). */
static int encode(const int64_t *values, uint8_t *blob, size_t cap, uint32_t *size, uint32_t *flags) {
    static const mantra_pgo_schema schema[] = {
        {MANTRA_PGO_BasicBlockIntCount, 0, 1, 0},
        {MANTRA_PGO_WorkflowProbeIntCount, 4, 2, 0},
    };
    int64_t n = mantra_pgo_encode(schema, 2, values, 3, blob, cap);
    size_t off, len;
    if (n <= 0 || mantra_pgo_chunk((size_t)n, 0, flags, &off, &len) != 0 || len != (size_t)n)
        return -1;
    *size = (uint32_t)n;
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: workflow_writer TRACE\n");
        return 2;
    }
    int rc = mantra_dotnet_register();
    if (rc != 0)
        return fail("mantra_dotnet_register", rc);
    mantra_session_config c;
    mantra_session_config_init(&c);
    c.providers = "Microsoft-Windows-DotNETRuntime:0x10000000000:5";
    c.output = MANTRA_SESSION_OUTPUT_FILE;
    c.path = argv[1];
    mantra_session_id id;
    if ((rc = mantra_session_start(&id, &c)) != 0)
        return fail("mantra_session_start", rc);

    uint8_t blob[256];
    uint32_t size, flags;
    static const int64_t a[] = {7, 11, 13}, b[] = {5, 3, 2};
    if (encode(a, blob, sizeof blob, &size, &flags) != 0)
        return fail("encode", -1);
    rc = mantra_DotNETRuntime_JitInstrumentationDataVerbose_write(0, flags, size, 0x10, 0x1000, 0x06000010, "Wf.C",
                                                                  "FromV0", "void ()", blob);
    if (rc != MANTRA_WRITE_OK)
        return fail("the V0 write", rc);
    if (encode(b, blob, sizeof blob, &size, &flags) != 0)
        return fail("encode", -1);
    rc = mantra_DotNETRuntime_JitInstrumentationDataVerbose_V1_write(0, flags, size, 0x20, 0x1000, 0x06000020, "Wf.C",
                                                                     "FromV1", "void ()", blob, 2);
    if (rc != MANTRA_WRITE_OK)
        return fail("the V1 write", rc);
    if ((rc = mantra_session_stop(id)) != 0)
        return fail("mantra_session_stop", rc);
    printf("workflow_writer: wrote %s (V0 and V1 of event 298)\n", argv[1]);
    return 0;
}
