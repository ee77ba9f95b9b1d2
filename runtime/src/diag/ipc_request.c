/* The diagnostics client's requests, as bytes (no I/O): ipc-internal.h.
 *
 * Layouts: dotnet/diagnostics, documentation/design-docs/ipc-protocol.md (CollectTracing2..4,
 * StopTracing, ProcessInfo, ResumeRuntime); the choice of the CollectTracing version and the
 * encodings (a bool as 1 byte): the client's EventPipeSession.cs (CreateStartMessage) and
 * EventPipeSessionConfiguration.cs (SerializeV2..V4). The bytes equal what dotnet-trace 10 sends
 * (tests/interop/profiles_compare.py records both). */
#include "diag/ipc-internal.h"
#include "mantra/diag_client.h"

int dg_request_simple(dg_buf *b, uint8_t set, uint8_t id) {
    dg_buf_header(b, set, id);
    return dg_buf_finish(b);
}

int dg_request_stop(dg_buf *b, uint64_t id) {
    dg_buf_header(b, DG_SET_EVENTPIPE, DG_EP_STOP);
    dg_buf_u64(b, id);
    return dg_buf_finish(b);
}

int dg_request_collect(dg_buf *b, const mantra_diag_collect_request *req) {
    if (!req || !req->providers || req->count == 0 || req->count > DG_MAX_PROVIDERS)
        return -2;
    for (size_t i = 0; i < req->count; i++)
        if (req->providers[i].level > DG_MAX_LEVEL || !req->providers[i].name[0])
            return -2;
    int custom = req->rundown_keywords != MANTRA_DIAG_RUNDOWN_DEFAULT && req->rundown_keywords != 0;
    uint8_t id = custom ? DG_EP_COLLECT + 3 : req->stackwalk ? DG_EP_COLLECT + 1 : DG_EP_COLLECT + 2;
    dg_buf_header(b, DG_SET_EVENTPIPE, id);
    dg_buf_u32(b, req->buffer_mb ? req->buffer_mb : 256);
    dg_buf_u32(b, 1); /* NetTrace */
    uint8_t flag;
    if (custom) {
        dg_buf_u64(b, req->rundown_keywords);
    } else {
        flag = req->rundown_keywords != 0;
        dg_buf_bytes(b, &flag, 1);
    }
    if (id != DG_EP_COLLECT + 1) { /* CollectTracing3 and 4 carry requestStackwalk */
        flag = req->stackwalk != 0;
        dg_buf_bytes(b, &flag, 1);
    }
    dg_buf_u32(b, (uint32_t)req->count);
    for (size_t i = 0; i < req->count; i++) {
        const mantra_provider_spec *p = &req->providers[i];
        dg_buf_u64(b, p->keywords);
        dg_buf_u32(b, p->level);
        dg_buf_string(b, p->name);
        dg_buf_string(b, p->args); /* "" as one NUL unit, as dotnet-trace 10 sends no arguments */
    }
    return dg_buf_finish(b);
}
