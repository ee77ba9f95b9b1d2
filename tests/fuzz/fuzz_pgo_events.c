/* fuzz_pgo_events - the event readers of `mantra pgo` (tools/mantra/pgo_events.c, over the generated
 * readers of manifest/dotnet.yaml and manifest/clr/runtime.yaml). The first byte picks the event:
 * bits 0-2 which one (298, 297, 152, 154, 143, 145, 72, 15), bits 3-4 its version, bit 5 the rundown
 * provider's counterpart where there is one (152 -> 153, 154 -> 155, 143 -> 144); the rest is its
 * payload. Whatever is read must describe bytes inside the payload (Data of 298/297 ends inside it)
 * and a refusal must say why. */
#include <stdint.h>
#include <stdlib.h>

#include "../../tools/mantra/pgo_tool.h"

/* Every type's views lie inside the payload (ctx: the event). */
static int count_type(void *ctx, uint64_t type_id, uint64_t module_id, mantra_str16 name, mantra_array params) {
    (void)type_id, (void)module_id;
    const mantra_trace_event *ev = ctx;
    const uint8_t *end = ev->payload + ev->payload_size;
    if ((name.units && (name.data < ev->payload || name.data + 2 * name.units > end)) ||
        (params.count && (params.data < ev->payload || params.data + 8 * params.count > end)))
        abort();
    return 0;
}

static void refused(int rc, const char *why) {
    if (rc == -1 && why == NULL)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const uint32_t ids[] = {298, 297, 152, 154, 143, 145, 72, 15};
    static const uint32_t rundown_ids[] = {298, 297, 153, 155, 144, 145, 72, 15};
    if (size == 0)
        return 0;
    unsigned which = data[0] % 8, rundown = (data[0] >> 5) & 1;
    mantra_trace_metadata md = {0};
    md.event_id = rundown ? rundown_ids[which] : ids[which];
    mantra_trace_event ev = {0};
    ev.metadata = &md;
    ev.version = (data[0] >> 3) & 3;
    ev.payload = data + 1;
    ev.payload_size = size - 1;
    const char *why = NULL;
    int rc;
    switch (which) {
    case 0:
    case 1: {
        pgo_instr_event e;
        if ((rc = pgo_read_instr(&ev, 8, which == 0, &e, &why)) == 0) {
            if (e.data_size && (e.data < ev.payload || e.data + e.data_size > ev.payload + ev.payload_size))
                abort();
            pgo_instr_event_free(&e);
        }
        break;
    }
    case 2: {
        pgo_module_event m;
        rc = pgo_read_module(&ev, 8, (int)rundown, &m, &why);
        free(m.il_path);
        break;
    }
    case 3: {
        pgo_assembly_event a;
        rc = pgo_read_assembly(&ev, 8, (int)rundown, &a, &why);
        free(a.name);
        break;
    }
    case 4:
    case 5: {
        pgo_method_event m;
        rc = pgo_read_method(&ev, 8, which == 4 && rundown, &m, &why);
        pgo_method_event_free(&m);
        break;
    }
    case 6: {
        pgo_details_event d;
        rc = pgo_read_method_details(&ev, 8, &d, &why);
        free(d.type_parameters);
        break;
    }
    default: {
        rc = pgo_read_bulk_type(&ev, 8, count_type, &ev, &why);
        break;
    }
    }
    refused(rc, why);
    return 0;
}
