/* Fuzz target: the diagnostics IPC command parser (runtime/src/diag/ipc_parse.c). The input is one
 * message as a client sends it: the 20-byte header is parsed, and the payload (what follows, at
 * most the size the header announces) by the parser of the command it names; an accepted
 * CollectTracing is turned into its provider spec (mantra_provider_spec_format per provider), which
 * the spec parser must read back as the request's names, keywords and levels; no spec only when
 * some provider cannot be written as an entry (name or filter data that no entry carries).
 * A message of the Server command set is a reply as a process sends it to the client
 * (dg_parse_reply; an OK payload read as ProcessInfo 1, 2 and 3: every string there on success,
 * nothing left allocated on failure).
 * Seeds: tests/fuzz/corpus/ipc_command (the byte examples of the protocol reference, a ProcessInfo2
 * reply). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diag/ipc-internal.h"
#include "mantra/diag_client.h"
#include "mantra/session.h"

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
    if (h.set == DG_SET_SERVER) {
        uint32_t hr = 0;
        if (dg_parse_reply(&h, p, n, &hr) != 0)
            return 0;
        for (int version = 1; version <= 3; version++) {
            mantra_diag_process_info info;
            if (dg_parse_process_info(version, p, n, &info) == 0) {
                if (!info.command_line || !info.os || !info.arch || info.version != version ||
                    (version >= 2 && (!info.entrypoint || !info.runtime_version)))
                    abort();
                mantra_diag_process_info_free(&info);
            } else if (info.command_line || info.os || info.arch || info.entrypoint || info.runtime_version || info.rid) {
                abort();
            }
        }
        return 0;
    }
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
        if (spec == NULL) { /* some provider must be one that no entry carries */
            static char one[1 << 17];
            int refused = 0;
            for (uint32_t i = 0; i < c.count && !refused; i++)
                refused = mantra_provider_spec_format(c.providers[i].name, c.providers[i].keywords, c.providers[i].level,
                                                      c.providers[i].args, one, sizeof one) < 0;
            if (!refused)
                abort();
        } else {
            static mantra_provider_spec back[1000];
            size_t n = 0, col = 0;
            if (mantra_provider_spec_parse(spec, back, 1000, &n, &col) == 0) {
                if (n != c.count)
                    abort();
                for (uint32_t i = 0; i < c.count; i++)
                    if (c.providers[i].level > DG_MAX_LEVEL || strcmp(back[i].name, c.providers[i].name) != 0 ||
                        back[i].keywords != c.providers[i].keywords || back[i].level != c.providers[i].level)
                        abort();
            }
            for (uint32_t i = 0; i < c.count; i++)
                if (!strstr(spec, c.providers[i].name))
                    abort();
            free(spec);
        }
    }
    dg_collect_free(&c);
    return 0;
}
