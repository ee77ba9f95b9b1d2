/* r2r_code.c - a ReadyToRun image's methods and their code ranges (mantra/ecma.h mantra_r2r_code), as
 * ../shared/reference/r2r-and-symbols.md §2.3-2.6 describes them: RuntimeFunctions (102, x64: 12
 * bytes {Begin, End, Unwind}), MethodDefEntryPoints (103: a NativeArray indexed by MethodDef row -
 * 1), InstanceMethodEntryPoints (109: a NativeHashtable of method signature + entry point: the
 * generic instantiations) and HotColdMap (120: (cold index, hot index) pairs). An entry point element is
 * a native integer: bit 0 set when fixups follow, the RUNTIME_FUNCTION index above bit 1 (or bit 0
 * without fixups). */
#include <stdlib.h>
#include <string.h>

#include "ecma-internal.h"
#include "mantra/decode.h"

/* The RUNTIME_FUNCTION index of the entry point element at blob[at]; -1 when it runs past. */
static int entry_rtf(const uint8_t *blob, uint32_t size, uint32_t at, uint32_t *rtf) {
    uint32_t id;
    if (at >= size || ec_native_uint(blob + at, size - at, &id) == 0)
        return -1;
    *rtf = id & 1 ? id >> 2 : id >> 1;
    return 0;
}

/* Appends a method (its code range filled later); MANTRA_ENOMEM. */
static int add_method(mantra_r2r *r, size_t *cap, mantra_r2r_method m) {
    if (r->nmethods == *cap) {
        size_t c = *cap ? *cap * 2 : 256;
        mantra_r2r_method *n = realloc(r->methods, c * sizeof *n);
        if (n == NULL)
            return MANTRA_ENOMEM;
        r->methods = n;
        *cap = c;
    }
    r->methods[r->nmethods++] = m;
    return MANTRA_OK;
}

typedef struct inst_walk {
    const uint8_t *blob;
    uint32_t size;
    uint64_t at;
    uint8_t *is_entry;
    mantra_r2r *r;
    size_t *cap;
    mantra_ecma_error *err;
} inst_walk;

static int add_instance(void *ctx, uint32_t entry) {
    inst_walk *w = ctx;
    mantra_r2r_method_sig sig;
    size_t k = mantra_r2r_method_sig_parse(w->blob + entry, w->size - entry, &sig);
    uint32_t f;
    if (k == 0 || entry_rtf(w->blob, w->size, entry + (uint32_t)k, &f) < 0)
        return ec_fail(w->err, w->at + entry, "InstanceMethodEntryPoints: an entry's method signature or entry point "
                       "is malformed");
    if (f >= w->r->first_cold)
        return ec_fail(w->err, w->at + entry, "InstanceMethodEntryPoints: an entry starts at RUNTIME_FUNCTION %u, past "
                       "the hot ones (%u)", f, w->r->first_cold);
    w->is_entry[f] = 1;
    uint32_t token = sig.module == MANTRA_R2R_NO_MODULE &&
                             !(sig.flags & (MANTRA_R2R_SIG_MEMBER_REF_TOKEN | MANTRA_R2R_SIG_SLOT_INSTEAD_OF_TOKEN))
                         ? MANTRA_MD_TOKEN(MANTRA_MD_METHOD_DEF, sig.rid)
                         : 0;
    w->r->ninstances++;
    return add_method(w->r, w->cap, (mantra_r2r_method){token, 0, 0, 0, 0, f, w->blob + entry, (uint32_t)k});
}

int mantra_r2r_code(const mantra_pe *pe, mantra_r2r *r, mantra_ecma_error *err) {
    const uint8_t *rtf, *eps, *inst, *hc;
    uint32_t rtf_size, eps_size, inst_size, hc_size;
    if (mantra_r2r_section_bytes(pe, r, MANTRA_R2R_RUNTIME_FUNCTIONS, &rtf, &rtf_size, err) < 0 ||
        mantra_r2r_section_bytes(pe, r, MANTRA_R2R_METHOD_DEF_ENTRY_POINTS, &eps, &eps_size, err) < 0 ||
        mantra_r2r_section_bytes(pe, r, MANTRA_R2R_INSTANCE_METHOD_ENTRY_POINTS, &inst, &inst_size, err) < 0 ||
        mantra_r2r_section_bytes(pe, r, MANTRA_R2R_HOT_COLD_MAP, &hc, &hc_size, err) < 0)
        return MANTRA_EFORMAT;
    if (pe->machine != 0x8664) {
        ec_fail(err, 0, "RUNTIME_FUNCTIONs of machine 0x%x are not read (x64's carry their end; others need their "
                "unwind data)", pe->machine);
        return MANTRA_EUNSUPPORTED;
    }
    free(r->methods);
    r->methods = NULL;
    r->nmethods = r->ninstances = 0;
    r->nfunctions = rtf_size / 12;
    r->first_cold = r->nfunctions;
    uint32_t npairs = hc_size / 8;
    if (npairs)
        r->first_cold = mantra_load_u32(hc);
    if (r->first_cold > r->nfunctions)
        return ec_fail(err, (uint64_t)(hc - pe->data), "the HotColdMap's first cold RUNTIME_FUNCTION %u is past the %u "
                       "there are", r->first_cold, r->nfunctions);
    uint8_t *is_entry = calloc(r->nfunctions ? r->nfunctions : 1, 1);
    uint32_t *pair_of = NULL;
    if (is_entry == NULL)
        return MANTRA_ENOMEM;
    int rc = MANTRA_OK;
    size_t cap = 0;
    uint32_t count = 0;
    if (eps_size && ec_native_array_get(eps, eps_size, 0, &count) < 0) {
        rc = ec_fail(err, (uint64_t)(eps - pe->data), "MethodDefEntryPoints: no NativeArray header");
        goto out;
    }
    for (uint32_t i = 0; i < count; i++) {
        int64_t el = ec_native_array_get(eps, eps_size, i, NULL);
        uint32_t f;
        if (el < 0 || (el > 0 && entry_rtf(eps, eps_size, (uint32_t)el, &f) < 0)) {
            rc = ec_fail(err, (uint64_t)(eps - pe->data), "MethodDefEntryPoints: element %u runs past the section", i);
            goto out;
        }
        if (el == 0)
            continue;
        if (f >= r->first_cold) {
            rc = ec_fail(err, (uint64_t)(eps - pe->data), "MethodDefEntryPoints: MethodDef %u starts at "
                         "RUNTIME_FUNCTION %u, past the hot ones (%u)", i + 1, f, r->first_cold);
            goto out;
        }
        rc = add_method(r, &cap, (mantra_r2r_method){MANTRA_MD_TOKEN(MANTRA_MD_METHOD_DEF, i + 1), 0, 0, 0, 0, f, NULL, 0});
        if (rc != MANTRA_OK)
            goto out;
        is_entry[f] = 1;
    }
    if (inst_size) {
        inst_walk w = {inst, inst_size, (uint64_t)(inst - pe->data), is_entry, r, &cap, err};
        rc = ec_native_hashtable_each(inst, inst_size, w.at, "InstanceMethodEntryPoints", add_instance, &w, err);
        if (rc != MANTRA_OK)
            goto out;
    }
    /* the HotColdMap's (cold index, hot index) pairs, in order, by hot index: pair + 1 (0: none) */
    if (npairs && (pair_of = calloc(r->nfunctions, sizeof *pair_of)) == NULL) {
        rc = MANTRA_ENOMEM;
        goto out;
    }
    for (uint32_t k = 0; k < npairs; k++) {
        uint32_t cold = mantra_load_u32(hc + 8 * k), hot = mantra_load_u32(hc + 8 * k + 4);
        uint32_t cold_end = k + 1 < npairs ? mantra_load_u32(hc + 8 * (k + 1)) : r->nfunctions;
        if (hot >= r->nfunctions || cold >= r->nfunctions || cold_end > r->nfunctions || cold_end <= cold) {
            rc = ec_fail(err, (uint64_t)(hc - pe->data) + 8 * k, "HotColdMap: cold RUNTIME_FUNCTIONs %u..%u of %u "
                         "(hot %u)", cold, cold_end, r->nfunctions, hot);
            goto out;
        }
        pair_of[hot] = k + 1;
    }
    /* a method's hot part: its RUNTIME_FUNCTIONs to the next entry point or the first cold one */
    for (size_t i = 0; i < r->nmethods; i++) {
        mantra_r2r_method *m = &r->methods[i];
        uint32_t last = m->entry;
        while (last + 1 < r->first_cold && !is_entry[last + 1])
            last++;
        uint32_t begin = mantra_load_u32(rtf + 12 * m->entry), end = mantra_load_u32(rtf + 12 * last + 4);
        m->hot_rva = begin;
        m->hot_size = end > begin ? end - begin : 0;
        uint32_t k = pair_of ? pair_of[m->entry] : 0;
        if (k--) { /* its cold part: to the next pair's cold index, or the last RUNTIME_FUNCTION */
            uint32_t cold = mantra_load_u32(hc + 8 * k);
            uint32_t cold_end = k + 1 < npairs ? mantra_load_u32(hc + 8 * (k + 1)) : r->nfunctions;
            uint32_t cb = mantra_load_u32(rtf + 12 * cold), ce = mantra_load_u32(rtf + 12 * (cold_end - 1) + 4);
            m->cold_rva = cb;
            m->cold_size = ce > cb ? ce - cb : 0;
        }
    }
out:
    free(is_entry);
    free(pair_of);
    if (rc != MANTRA_OK) {
        free(r->methods);
        r->methods = NULL;
        r->nmethods = r->ninstances = 0;
    }
    return rc;
}
