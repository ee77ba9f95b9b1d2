/* sym_image.c - ReadyToRun image files placed in a trace's symbol map (sym_trace.h): for each module
 * of the trace, the file `--image` names (matched by file name, without case) or else the module's
 * own IL path when it is readable here. The image's identity is checked against the trace (the
 * module's ManagedPdbSignature against the image's CodeView GUID: a difference is refused). The
 * image is placed where the trace saw its code: every precompiled method start the trace gives (a
 * rundown's or a load's, by token; R2RGetEntryPoint's by name) votes for `start - hot RVA`, and the
 * most common value wins (on Linux the runtime maps an image section by section, but hot and cold
 * code both lie in .text, so one offset places both: ../shared/reference/r2r-and-symbols.md §2.7).
 * Then every method of the image is a MANTRA_SYM_IMAGE fact: its hot and cold part, named from the
 * image's metadata (image_names.c). */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image_names.h"
#include "pgo_tool.h"
#include "sym_trace.h"
#include "tool.h"

static const char *base_name(const char *p) {
    const char *b = p;
    for (; *p; p++)
        if (*p == '/' || *p == '\\')
            b = p + 1;
    return b;
}

static int same_name(const char *a, const char *b) {
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

static int cmp_u64(const void *pa, const void *pb) {
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return a < b ? -1 : a > b;
}

/* The MethodDef method of token in r (its MethodDef entries are in token order). */
static const mantra_r2r_method *by_token(const mantra_r2r *r, uint32_t token) {
    size_t lo = 0, hi = r->nmethods - r->ninstances;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->methods[mid].token < token)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->nmethods - r->ninstances && r->methods[lo].token == token ? &r->methods[lo] : NULL;
}

typedef struct placed {
    mantra_pe pe;
    mantra_md *md;
    mantra_r2r r;
    uint8_t *data;
} placed;

static void placed_free(placed *p) {
    mantra_r2r_free(&p->r);
    mantra_md_close(p->md);
    mantra_pe_free(&p->pe);
    free(p->data);
}

/* Opens file as a ReadyToRun image: 0; 1 when it is not one (an IL-only assembly, not a PE file:
 * *why); -1 when it is damaged (*why, err); -2 out of memory. */
static int open_image(const char *file, placed *p, const char **why, mantra_ecma_error *err) {
    memset(p, 0, sizeof *p);
    size_t size;
    p->data = (uint8_t *)tool_read_file(file, &size);
    if (p->data == NULL) {
        *why = "cannot be read";
        return 1;
    }
    if (mantra_pe_parse(p->data, size, &p->pe, err) != MANTRA_OK) {
        *why = "not a PE file";
        return 1;
    }
    int st = mantra_r2r_open(&p->pe, &p->r, err);
    if (st == MANTRA_ENOENT) {
        *why = "not a ReadyToRun image";
        return 1;
    }
    if (st == MANTRA_OK)
        st = mantra_md_open_pe(&p->pe, &p->md, err);
    if (st == MANTRA_OK)
        st = mantra_r2r_code(&p->pe, &p->r, err);
    if (st == MANTRA_ENOMEM)
        return -2;
    if (st != MANTRA_OK) {
        *why = err->message;
        return -1;
    }
    return 0;
}

#define AMBIGUOUS ((size_t)-2)

/* "Namespace|Name" -> MethodDef method index of the image, AMBIGUOUS for overloads (names cannot
 * tell them apart). */
static int names_of_image(const placed *p, pgo_strmap *names) {
    for (size_t k = 0; k < p->r.nmethods - p->r.ninstances; k++) {
        pgo_text ns = {0}, name = {0};
        int rc = image_method_names(p->md, &p->r.methods[k], &ns, &name, NULL);
        char *key = rc == 0 && ns.s && name.s ? pgo_strf("%s|%s", ns.s, name.s) : NULL;
        free(ns.s);
        free(name.s);
        if (rc == -2 || (rc == 0 && key == NULL))
            return -2;
        if (key == NULL)
            continue;
        size_t had = pgo_strmap_get(names, key);
        rc = pgo_strmap_put(names, key, had == (size_t)-1 ? k : AMBIGUOUS);
        free(key);
        if (rc < 0)
            return -2;
    }
    return 0;
}

/* The offset of the image in the process: the most common start - RVA over the trace's precompiled
 * method starts of this module (R2RGetEntryPoint's, which name no module, by their names); 0 with
 * *votes 0 when the trace gives none. */
static int place(const sym_trace *st, const sym_module *mod, const placed *p, uint64_t *base, size_t *votes) {
    uint64_t *d = malloc((st->ncodes ? st->ncodes : 1) * sizeof *d);
    pgo_strmap names = {0};
    int have_names = 0, rc = d ? 0 : -2;
    size_t n = 0;
    for (size_t i = 0; rc == 0 && i < st->ncodes; i++) {
        const sym_code *c = &st->codes[i];
        if (c->token) {
            const mantra_r2r_method *m = c->module_id == mod->id ? by_token(&p->r, c->token) : NULL;
            if (m)
                d[n++] = c->start - m->hot_rva;
            continue;
        }
        if (!have_names) {
            rc = names_of_image(p, &names);
            have_names = 1;
        }
        char *key = rc == 0 ? pgo_strf("%s|%s", c->name_space, c->name) : NULL;
        if (rc == 0 && key == NULL)
            rc = -2;
        size_t k = key ? pgo_strmap_get(&names, key) : (size_t)-1;
        free(key);
        if (k != (size_t)-1 && k != AMBIGUOUS)
            d[n++] = c->start - p->r.methods[k].hot_rva;
    }
    pgo_strmap_free(&names);
    *votes = 0;
    *base = 0;
    if (rc == 0 && n > 1)
        qsort(d, n, sizeof *d, cmp_u64);
    for (size_t i = 0; rc == 0 && i < n;) { /* the longest run of one value */
        size_t j = i;
        while (j < n && d[j] == d[i])
            j++;
        if (j - i > *votes) {
            *votes = j - i;
            *base = d[i];
        }
        i = j;
    }
    free(d);
    return rc;
}

static int add_methods(sym_trace *st, const sym_module *mod, const placed *p, uint64_t base) {
    for (size_t i = 0; i < p->r.nmethods; i++) {
        const mantra_r2r_method *m = &p->r.methods[i];
        pgo_text ns = {0}, name = {0}, sig = {0};
        int rc = image_method_names(p->md, m, &ns, &name, &sig);
        if (rc == 0) {
            mantra_sym_method f = {mod->id, 0, m->sig ? 0 : m->token, 0, ns.s, name.s, sig.s ? sig.s : "",
                                   base + m->hot_rva, m->hot_size, m->cold_size ? base + m->cold_rva : 0, m->cold_size};
            /* an instantiation is not its MethodDef's code: no token to merge by */
            rc = m->hot_size ? mantra_symbols_method_load(st->map, 0, MANTRA_SYM_IMAGE, &f) : 0;
            rc = rc == MANTRA_OK ? 0 : -2;
            st->image_methods += rc == 0 && m->hot_size;
        } else if (rc == -1) {
            rc = 0; /* another module's method: left out */
        }
        free(ns.s);
        free(name.s);
        free(sig.s);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int guid_zero(const mantra_guid *g) {
    static const mantra_guid z = {0, 0, 0, {0}};
    return memcmp(g, &z, sizeof z) == 0;
}

int sym_images_place(sym_trace *st, const char *const *images, size_t nimages) {
    int status = 0;
    uint8_t *used = calloc(nimages ? nimages : 1, 1);
    if (used == NULL)
        return -2;
    for (size_t i = 0; i < st->nmods && status >= 0; i++) {
        const sym_module *mod = &st->mods[i];
        const char *file = NULL;
        int given = 0;
        for (size_t k = 0; k < nimages && !file; k++)
            if (mod->path[0] && same_name(base_name(images[k]), base_name(mod->path))) {
                file = images[k];
                given = 1;
                used[k] = 1;
            }
        if (file == NULL && mod->path[0] && access(mod->path, R_OK) == 0)
            file = mod->path;
        if (file == NULL)
            continue;
        placed p;
        const char *why = NULL;
        mantra_ecma_error err = {0, ""};
        int rc = open_image(file, &p, &why, &err);
        if (rc == -2) {
            status = -2;
        } else if (rc != 0) {
            if (given || rc == -1)
                fprintf(stderr, "mantra %s: %s: offset %" PRIu64 ": %s%s\n", st->cmd, file, err.offset, why,
                        given ? "" : " (not used)");
            if (given)
                status = -1;
        } else {
            mantra_guid g;
            uint32_t age;
            const char *pdb;
            if (!guid_zero(&mod->pdb_guid) && mantra_pe_codeview(&p.pe, &g, &age, &pdb) == MANTRA_OK &&
                memcmp(&g, &mod->pdb_guid, sizeof g) != 0) {
                fprintf(stderr, "mantra %s: %s: not the image of the trace's module %s (its PDB signature "
                        "%08x-%04x-... differs from the trace's %08x-%04x-...)%s\n", st->cmd, file, mod->path, g.data1,
                        g.data2, mod->pdb_guid.data1, mod->pdb_guid.data2, given ? "" : ": not used");
                if (given)
                    status = -1;
            } else {
                uint64_t base;
                size_t votes;
                rc = place(st, mod, &p, &base, &votes);
                if (rc < 0) {
                    status = rc;
                } else if (votes == 0) { /* said for an image given; counted for the others */
                    st->images_unplaced++;
                    if (given)
                        fprintf(stderr, "mantra %s: %s: the trace gives no start of this image's code: not placed\n",
                                st->cmd, file);
                } else {
                    status = add_methods(st, mod, &p, base);
                    st->images_placed++;
                }
            }
        }
        placed_free(&p);
    }
    for (size_t k = 0; k < nimages && status == 0; k++)
        if (!used[k]) {
            fprintf(stderr, "mantra %s: %s: no module of the trace has this file's name\n", st->cmd, images[k]);
            status = -1;
        }
    free(used);
    return status;
}
