/* Fuzz target: the diagnostics IPC command parser (runtime/src/diag/ipc_parse.c). The input is one
 * message as a client sends it: the 20-byte header is parsed, and the payload (what follows, at
 * most the size the header announces) by the parser of the command it names; an accepted
 * CollectTracing is turned into its provider spec, whose every entry must carry the names parsed.
 * Seeds: tests/fuzz/corpus/ipc_command (the byte examples of the protocol reference). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diag/ipc-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < DG_HEADER_SIZE)
        return 0;
    dg_header h;
    if (dg_parse_header(data, &h) != 0)
        return 0;
    size_t n = size - DG_HEADER_SIZE;
    if (n > (size_t)h.size - DG_HEADER_SIZE)
        n = (size_t)h.size - DG_HEADER_SIZE;
    const uint8_t *p = data + DG_HEADER_SIZE;
    if (h.set == DG_SET_EVENTPIPE && h.id == DG_EP_STOP) {
        uint64_t id;
        (void)dg_parse_stop(p, n, &id);
        return 0;
    }
    dg_collect c;
    uint32_t hr = dg_parse_collect(h.id, p, n, &c);
    if (hr == 0 && c.session_type == 0) {
        if (c.count == 0 || c.buffer_mb == 0 || c.format >= 2)
            abort();
        char *spec = dg_collect_spec(&c);
        if (spec == NULL)
            abort();
        for (uint32_t i = 0; i < c.count; i++)
            if (c.providers[i].level > DG_MAX_LEVEL || !strstr(spec, c.providers[i].name))
                abort();
        free(spec);
    }
    dg_collect_free(&c);
    return 0;
}
