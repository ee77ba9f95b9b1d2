/* pgo_image_read.c - the PGO data crossgen2 embedded in a ReadyToRun image (--embed-pgo-data) read
 * back as a profile (docs/pgo.md "Reading an image's embedded data"): section 117's entries
 * (mantra_r2r_pgo_each), each a method of the image and its schema + data stream (mantra_pgo_decode).
 * Methods are named from the image's own metadata as the runtime names them in its events
 * (pgo_names.c), so that they merge with a trace's and a .mibc's. Type handles are import cells
 * whose fixup is READYTORUN_FIXUP_TypeHandle (0x10, readytorun.h) followed by the type's signature;
 * crossgen2 writes (n << 4) | 0xF for a type or method the image cannot refer to
 * (InstrumentationDataTableNode.cs TypeToInt): those stay unknown, counted. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgo_mibc.h"
#include "tool.h"

#define FIXUP_TYPE_HANDLE 0x10
#define FIXUP_MODULE_OVERRIDE 0x80
#define UNKNOWN_CELL 0xF

typedef struct image_reader {
    const char *path;
    const mantra_pe *pe;
    const mantra_r2r *r2r;
    const mantra_md *md;
    pgo_profile *p;
    pgo_assembly_names names;
    char *module, *guid;
    uint64_t methods, other_module, undecodable;
} image_reader;

/* A type handle value: its name from the import cell it names, NULL when it cannot be named
 * (*reason). */
static char *type_handle_name(image_reader *ir, int64_t v, int *reason) {
    *reason = PGO_UNNAMED_IMAGE_UNKNOWN;
    if ((v & 0xF) == UNKNOWN_CELL || v < 0 || v > UINT32_MAX)
        return NULL;
    *reason = PGO_UNNAMED_IMAGE_CELL;
    const uint8_t *sig;
    size_t max;
    mantra_ecma_error err = {0, ""};
    if (mantra_r2r_import_signature(ir->pe, ir->r2r, (uint32_t)(v & 0xF), (uint32_t)(v >> 4), &sig, &max, &err) !=
            MANTRA_OK ||
        max < 2 || sig[0] != FIXUP_TYPE_HANDLE) /* a module override: a type of another module */
        return NULL;
    pgo_text t = {0};
    size_t k = pgo_sig_type_text(ir->md, sig + 1, max - 1, 1, &ir->names, &t);
    if (k == 0 || t.oom) {
        *reason = t.oom ? PGO_UNNAMED_OUT_OF_MEMORY : PGO_UNNAMED_IMAGE_CELL;
        free(t.s);
        return NULL;
    }
    return t.s;
}

/* A handle value as crossgen2 encoded it: a type by name; a method, or what cannot be named, as an
 * unknown handle as the runtime gives one (1..33: corjit.h UNKNOWN_TYPEHANDLE_MIN/MAX). */
static char *handle_name(void *ctx, int element, int64_t *value, int *reason) {
    image_reader *ir = ctx;
    *reason = PGO_UNNAMED_IMAGE_UNKNOWN;
    char *name = element == MANTRA_PGO_TypeHandle ? type_handle_name(ir, *value, reason) : NULL;
    if (name == NULL && *reason != PGO_UNNAMED_OUT_OF_MEMORY)
        *value = ((*value >> 4) & 0x1F) + 1;
    return name;
}

/* Fills m's names from MethodDef `row` of the image, its owner from sig (when the entry gives one).
 * -1 when it cannot be named, -2 out of memory. */
static int name_method(image_reader *ir, const mantra_r2r_method_sig *sig, pgo_method *m) {
    uint32_t v[MANTRA_MD_MAX_COLUMNS];
    if (mantra_md_row(ir->md, MANTRA_MD_METHOD_DEF, sig->rid, v) != 0)
        return -1;
    const uint8_t *blob;
    uint32_t n;
    pgo_text ns = {0}, owner = {0}, text = {0};
    int rc = -1;
    if (sig->owner) {
        if (pgo_sig_type_text(ir->md, sig->owner, sig->owner_size, 0, &ir->names, &ns) == sig->owner_size &&
            pgo_sig_type_text(ir->md, sig->owner, sig->owner_size, 1, &ir->names, &owner) == sig->owner_size)
            rc = 0;
    } else {
        uint32_t type = MANTRA_MD_TOKEN(MANTRA_MD_TYPE_DEF, mantra_md_method_owner(ir->md, sig->rid));
        if (pgo_type_text(ir->md, type, 0, &ir->names, &ns) == 0 && pgo_type_text(ir->md, type, 1, &ir->names, &owner) == 0)
            rc = 0;
    }
    if (rc == 0 && (mantra_md_blob(ir->md, v[4], &blob, &n) != 0 || pgo_sig_text(ir->md, blob, n, &text) != n || !text.s))
        rc = -1;
    if (rc == 0 && sig->ninst) {
        m->method_args = calloc(sig->ninst, sizeof *m->method_args);
        if (m->method_args == NULL)
            rc = -2;
        size_t at = 0;
        for (uint32_t i = 0; rc == 0 && i < sig->ninst; i++) {
            pgo_text t = {0};
            size_t k = pgo_sig_type_text(ir->md, sig->inst + at, sig->inst_size - at, 1, &ir->names, &t);
            if (k == 0 || t.oom) {
                free(t.s);
                rc = t.oom ? -2 : -1;
                break;
            }
            m->method_args[m->nmethod_args++] = t.s;
            at += k;
        }
    }
    if (ns.oom || owner.oom || text.oom)
        rc = -2;
    if (rc == 0) {
        m->name_space = ns.s;
        m->owner_type = owner.s;
        m->signature = text.s;
        ns.s = owner.s = text.s = NULL;
        m->name = pgo_strdup(mantra_md_string(ir->md, v[3]));
        m->module = pgo_strdup(ir->module);
        m->module_path = pgo_strdup(ir->path);
        m->pdb_guid = pgo_strdup(ir->guid);
        m->token = MANTRA_MD_TOKEN(MANTRA_MD_METHOD_DEF, sig->rid);
        if (!m->name || !m->module || !m->module_path || !m->pdb_guid)
            rc = -2;
    }
    free(ns.s);
    free(owner.s);
    free(text.s);
    return rc;
}

static int read_entry(void *ctx, const mantra_r2r_pgo_entry *e) {
    image_reader *ir = ctx;
    const mantra_r2r_method_sig *sig = &e->method;
    if (sig->module != MANTRA_R2R_NO_MODULE ||
        (sig->flags & (MANTRA_R2R_SIG_MEMBER_REF_TOKEN | MANTRA_R2R_SIG_SLOT_INSTEAD_OF_TOKEN))) {
        ir->other_module++; /* a method of another module of a version bubble: not named from this image */
        return 0;
    }
    pgo_method m;
    memset(&m, 0, sizeof m);
    size_t where = 0;
    int st = mantra_pgo_decode(e->data, e->data_max, 8, &m.data, &where);
    if (st == MANTRA_ENOMEM)
        return -2;
    if (st != MANTRA_OK) {
        pgo_errf("%s: offset %" PRIu64 ": the embedded PGO data of MethodDef %u does not decode "
                "(%s)\n", ir->path, (uint64_t)(e->data - ir->pe->data) + where, sig->rid, mantra_status_name(st));
        return -1;
    }
    int rc = name_method(ir, sig, &m);
    if (rc == 0)
        rc = pgo_name_handles(&m, &ir->p->counts, handle_name, ir);
    if (rc == -1) {
        pgo_errf("%s: offset %" PRIu64 ": the embedded PGO data names MethodDef %u, which the "
                "image's metadata cannot name\n", ir->path, e->at, sig->rid);
        pgo_method_free(&m);
        return -1;
    }
    char *id = rc == 0 ? pgo_method_identity(&m) : NULL;
    if (id == NULL) {
        pgo_method_free(&m);
        return -2;
    }
    m.runs = 1;
    ir->p->counts.methods_read++;
    ir->methods++;
    rc = pgo_profile_add(ir->p, &m, id);
    free(id);
    return rc < 0 ? -2 : 0;
}

int pgo_read_image(pgo_profile *p, const char *path, const mantra_pe *pe, const mantra_md *md, const char *corelib) {
    image_reader ir;
    memset(&ir, 0, sizeof ir);
    ir.path = path;
    ir.pe = pe;
    ir.md = md;
    ir.p = p;
    ir.names.corelib = corelib;
    mantra_r2r r2r;
    mantra_ecma_error err = {0, ""};
    int st = mantra_r2r_open(pe, &r2r, &err);
    if (st != MANTRA_OK) {
        pgo_errf("%s: offset %" PRIu64 ": %s\n", path, err.offset, err.message);
        return st == MANTRA_ENOMEM ? -2 : -1;
    }
    ir.r2r = &r2r;
    const uint8_t *sec;
    uint32_t size;
    int rc = 0;
    if (mantra_r2r_section_bytes(pe, &r2r, MANTRA_R2R_PGO_INSTRUMENTATION_DATA, &sec, &size, &err) == 0) {
        pgo_errf("%s: a ReadyToRun image without embedded PGO data (crossgen2 writes it with "
                "--embed-pgo-data)\n", path);
        rc = -1;
    }
    uint32_t v[MANTRA_MD_MAX_COLUMNS];
    mantra_guid g = {0, 0, 0, {0}};
    uint32_t age;
    const char *pdb;
    mantra_pe_codeview(pe, &g, &age, &pdb); /* all zeros without one, as a trace's ModuleLoad gives */
    ir.module = pgo_strdup(mantra_md_row(md, MANTRA_MD_ASSEMBLY, 1, v) == 0 ? mantra_md_string(md, v[7]) : "");
    ir.guid = pgo_strf("%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x", g.data1, g.data2, g.data3, g.data4[0],
                       g.data4[1], g.data4[2], g.data4[3], g.data4[4], g.data4[5], g.data4[6], g.data4[7]);
    if (rc == 0 && (ir.module == NULL || ir.guid == NULL))
        rc = -2;
    if (rc == 0) {
        st = mantra_r2r_pgo_each(pe, &r2r, read_entry, &ir, &err);
        if (st == MANTRA_EFORMAT)
            pgo_errf("%s: offset %" PRIu64 ": %s\n", path, err.offset, err.message);
        rc = st == MANTRA_OK ? 0 : st == -2 ? -2 : -1;
    }
    if (rc == 0) {
        p->counts.profiles++;
        if (ir.other_module)
            pgo_errf("%s: %" PRIu64 " method%s of other modules skipped (not named from this image)\n",
                    path, ir.other_module, ir.other_module == 1 ? "" : "s");
    }
    free(ir.module);
    free(ir.guid);
    mantra_r2r_free(&r2r);
    return rc;
}
