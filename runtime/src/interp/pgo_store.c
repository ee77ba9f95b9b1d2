/* pgo_store.c - the interpreter's counters in the PGO store (the default, mantra/pgo.h): the
 * module and each method with probes registered with their identities, one BasicBlockIntCount
 * record per probe at its IL offset, the environment's initial values (MANTRA_ReadPGOData), and
 * what a program reads back (counts with every thread's cells). */
#include <stdlib.h>

#include "dotnet_defs.h" /* MANTRA_PGO_BasicBlockIntCount: manifest/dotnet.yaml pgo_kinds */
#include "interp/interp-internal.h"

static void guid_of(const mantra_interp_module *m, mantra_guid *g) {
    const uint8_t *b = m->guid; /* .NET layout: Data1..Data3 little-endian, then Data4 */
    g->data1 = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    g->data2 = (uint16_t)(b[4] | b[5] << 8);
    g->data3 = (uint16_t)(b[6] | b[7] << 8);
    memcpy(g->data4, b + 8, 8);
}

int ip_store_counters(const mantra_interp_module *m, ip_lmethod *lm) {
    const ip_method *x = lm->src;
    mantra_guid g;
    guid_of(m, &g);
    mantra_pgo_module *mod = NULL;
    mantra_pgo_method *pm = NULL;
    int rc = mantra_pgo_module_register(m->name, "", &g, &mod);
    if (rc == 0)
        rc = mantra_pgo_method_register(mod, x->token, x->namespace_name, x->name, x->signature, x->il_size, &pm);
    if (rc != 0)
        return rc;
    mantra_pgo_schema *s = malloc(lm->nprobes * sizeof *s);
    lm->pgo_slots = malloc(lm->nprobes * sizeof *lm->pgo_slots);
    if (s == NULL || lm->pgo_slots == NULL) {
        free(s);
        return MANTRA_ENOMEM;
    }
    for (uint32_t k = 0; k < lm->nprobes; k++) {
        s[k].kind = MANTRA_PGO_BasicBlockIntCount;
        s[k].il_offset = (int32_t)lm->probe_il[k];
        s[k].count = 1;
        s[k].other = 0;
    }
    mantra_pgo_method_set_code_hash(pm, mantra_pgo_hash32(MANTRA_PGO_HASH32_INIT, x->il, x->il_size));
    size_t had = 0;
    (void)mantra_pgo_method_schema(pm, &had); /* loaded before: its counters count on */
    rc = mantra_pgo_method_instrument(pm, s, lm->nprobes);
    free(s);
    if (rc != 0)
        return rc;
    if (had == 0 && (rc = mantra_pgo_read_env_apply(pm)) < 0) /* initial values: at the first load only */
        return rc;
    /* BasicBlockIntCount records are 4 bytes aligned to 4: the shared cells are one array */
    lm->counters = mantra_pgo_counters_u32(pm, 0);
    for (uint32_t k = 0; k < lm->nprobes; k++)
        if (mantra_pgo_counter_slot(pm, k, &lm->pgo_slots[k]) != 0)
            return MANTRA_ENOMEM; /* the store's slot space is full */
    lm->pgo = pm;
    return lm->counters != NULL ? 0 : MANTRA_ENOMEM;
}

mantra_pgo_method *mantra_interp_program_pgo_method(const mantra_interp_program *p, size_t method) {
    if (p == NULL || method >= p->nmethods)
        return NULL;
    return p->methods[method].pgo;
}

int mantra_interp_program_counts(const mantra_interp_program *p, size_t method, uint32_t *out) {
    if (p == NULL || method >= p->nmethods || (out == NULL && p->methods[method].nprobes > 0))
        return MANTRA_EINVAL;
    const ip_lmethod *lm = &p->methods[method];
    if (lm->pgo == NULL) {
        for (uint32_t k = 0; k < lm->nprobes; k++)
            out[k] = __atomic_load_n(&lm->counters[k], __ATOMIC_RELAXED);
        return 0;
    }
    mantra_pgo_data d;
    int rc = mantra_pgo_snapshot(lm->pgo, 0, &d);
    if (rc != 0)
        return rc;
    for (uint32_t k = 0; k < lm->nprobes && k < d.value_count; k++)
        out[k] = (uint32_t)d.values[k];
    mantra_pgo_data_free(&d);
    return 0;
}
