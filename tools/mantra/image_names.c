/* image_names.c - a ReadyToRun image's methods named from its metadata as the runtime names them in
 * its events (namespace, name and signature text): `mantra image` and the symbol map's
 * image methods (sym_image.c) share it. */
#include <stdlib.h>

#include "image_names.h"

int image_method_names(const mantra_md *md, const mantra_r2r_method *m, pgo_text *ns, pgo_text *name, pgo_text *sig) {
    uint32_t v[MANTRA_MD_MAX_COLUMNS], row = MANTRA_MD_TOKEN_ROW(m->token);
    if (m->token == 0 || mantra_md_row(md, MANTRA_MD_METHOD_DEF, row, v) != 0)
        return -1;
    mantra_r2r_method_sig rs;
    int have_sig = m->sig && mantra_r2r_method_sig_parse(m->sig, m->sig_size, &rs);
    int named = 0;
    if (have_sig && rs.owner) { /* an instantiated type, as the runtime writes it: "Ns.T`1[System.Int32]" */
        pgo_text t = {0};
        named = pgo_sig_type_text(md, rs.owner, rs.owner_size, 0, NULL, &t) == rs.owner_size && !t.oom;
        if (named && t.s)
            pgo_text_add(ns, t.s);
        free(t.s);
    }
    if (!named) {
        char type[1024];
        size_t n = mantra_md_type_name(md, MANTRA_MD_TOKEN(MANTRA_MD_TYPE_DEF, mantra_md_method_owner(md, row)), type,
                                       sizeof type);
        pgo_text_add(ns, n && n < sizeof type ? type : "?");
    }
    pgo_text_add(name, mantra_md_string(md, v[3]));
    if (have_sig && rs.ninst) { /* a generic method's arguments after its name */
        size_t at = 0;
        pgo_text_add(name, "[");
        for (uint32_t i = 0; i < rs.ninst; i++) {
            if (i)
                pgo_text_add(name, ",");
            size_t k = pgo_sig_type_text(md, rs.inst + at, rs.inst_size - at, 0, NULL, name);
            if (k == 0) {
                pgo_text_add(name, "?");
                break;
            }
            at += k;
        }
        pgo_text_add(name, "]");
    }
    if (sig) {
        const uint8_t *blob;
        uint32_t bn;
        if (mantra_md_blob(md, v[4], &blob, &bn) != 0 || pgo_sig_text(md, blob, bn, sig) != bn)
            pgo_text_add(sig, "");
    }
    return ns->oom || name->oom || (sig && sig->oom) ? -2 : 0;
}
