/* fuzz_pgo_payload - the payload parsers of `mantra pgo` (tools/mantra/pgo_payload.c): the first
 * byte picks the event (298, 297, 152, 154, 143, 145, 72, 15), the rest is its payload. Whatever
 * parses must describe bytes inside the payload (Data of 298/297 ends exactly at its end). */
#include <stdint.h>
#include <stdlib.h>

#include "../../tools/mantra/pgo_tool.h"

static int count_type(void *ctx, uint64_t type_id, uint64_t module_id, const char *name, const uint64_t *params,
                      uint32_t nparams) {
    (void)type_id, (void)module_id, (void)params;
    if (name == NULL || (nparams && params == NULL))
        abort();
    (*(size_t *)ctx)++;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0)
        return 0;
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    switch (data[0] % 8) {
    case 0:
    case 1: {
        pgo_instr_event e;
        const char *why = NULL;
        if (pgo_parse_instr(p, n, data[0] % 8 == 0, &e, &why) == 0) {
            if (e.data < p || e.data + e.data_size != p + n)
                abort();
            pgo_instr_event_free(&e);
        } else if (why == NULL) {
            abort();
        }
        break;
    }
    case 2: {
        pgo_module_event m;
        if (pgo_parse_module(p, n, &m) == 0)
            free(m.il_path);
        break;
    }
    case 3: {
        pgo_assembly_event a;
        if (pgo_parse_assembly(p, n, &a) == 0)
            free(a.name);
        break;
    }
    case 4:
    case 5: {
        pgo_method_event m;
        if ((data[0] % 8 == 4 ? pgo_parse_method_verbose : pgo_parse_jitting_started)(p, n, &m) == 0)
            pgo_method_event_free(&m);
        break;
    }
    case 6: {
        pgo_details_event d;
        if (pgo_parse_method_details(p, n, &d) == 0)
            free(d.type_parameters);
        break;
    }
    default: {
        size_t types = 0;
        (void)pgo_parse_bulk_type(p, n, count_type, &types);
        break;
    }
    }
    return 0;
}
