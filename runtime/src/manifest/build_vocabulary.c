/* build_vocabulary.c - the manifest model's provider vocabulary: keywords (single-bit masks, no
 * reuse), opcodes (of the provider or of a task), tasks and value/bitmap maps (entries sorted by
 * value), with the duplicate and range rules of generator/mantra_gen/validate.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(MANTRA_HAVE_LIBYAML)

#include "manifest/loader-internal.h"

static const char *const KEYWORD_KEYS[] = {"name", "mask", "symbol", "message", NULL};
static const char *const OPCODE_KEYS[] = {"name", "value", "symbol", "message", NULL};
static const char *const TASK_KEYS[] = {"name", "value", "symbol", "guid", "message", "opcodes", NULL};
static const char *const MAP_KEYS[] = {"name", "kind", "entries", NULL};
static const char *const ENTRY_KEYS[] = {"value", "message", NULL};

void mf_keywords(mf_loader *l, mf_provider_ctx *c, const mf_pairs *pp) {
    size_t n;
    yaml_node_item_t *items = mf_sequence(l, pp, mf_key_index(mf_provider_keys, "keywords"), "keywords", &n);
    mantra_manifest_keyword *out = mf_alloc(l, n ? n : 1, sizeof *out);
    yaml_node_t **where = mf_scratch(l, n ? n : 1, sizeof *where);
    mf_names_init(l, &c->keywords);
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *node = mf_node_at(l, items[i]);
        mf_pairs p;
        mf_mapping(l, node, "keyword", KEYWORD_KEYS, 0x3, &p);
        const char *name = mf_string(l, p.val[0], "name");
        mf_int mask = mf_integer(l, p.val[1], "mask");
        if (mf_given(&p, 2))
            mf_string(l, p.val[2], "symbol");
        if (mf_given(&p, 3))
            mf_string(l, p.val[3], "message");
        const mantra_manifest_keyword *first = mf_names_add(l, &c->keywords, name, &out[i]);
        where[i] = node;
        if (first != NULL) {
            char nb[64];
            size_t j = (size_t)(first - out);
            mf_fail(l, node, mf_first_line(mf_node_line(where[j]), nb, sizeof nb), "keyword '%s' is defined twice",
                    name);
        }
        if (mask.neg || mask.big || mask.mag == 0 || (mask.mag & (mask.mag - 1)) != 0) {
            char hx[64];
            mf_hex_text(&mask, hx, sizeof hx);
            mf_fail(l, node, "a keyword mask is one of the 64 bits 0x1 .. 0x8000000000000000",
                    "mask %s of keyword '%s' is not a single bit", hx, name);
        }
        for (size_t j = 0; j < i; j++) {
            if (out[j].mask == mask.mag) {
                char hx[64], nb[64];
                mf_hex_text(&mask, hx, sizeof hx);
                mf_fail(l, node, mf_first_line(mf_node_line(where[j]), nb, sizeof nb),
                        "keyword '%s' reuses the mask %s of keyword '%s'", name, hx, out[j].name);
            }
        }
        out[i].name = mf_keep(l, name);
        out[i].mask = mask.mag;
    }
    c->p->keywords = out;
    c->p->keyword_count = (uint32_t)n;
}

void mf_opcodes(mf_loader *l, yaml_node_item_t *items, size_t n, mf_names *table, const char *where) {
    mf_opcode_def *defs = mf_scratch(l, n ? n : 1, sizeof *defs);
    yaml_node_t **nodes = mf_scratch(l, n ? n : 1, sizeof *nodes);
    mf_names_init(l, table);
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *node = mf_node_at(l, items[i]);
        mf_pairs p;
        mf_mapping(l, node, "opcode", OPCODE_KEYS, 0x3, &p);
        const char *name = mf_string(l, p.val[0], "name");
        mf_int value = mf_integer(l, p.val[1], "value");
        if (mf_given(&p, 2))
            mf_string(l, p.val[2], "symbol");
        const char *message = mf_given(&p, 3) ? mf_string(l, p.val[3], "message") : name;
        nodes[i] = node;
        const mf_opcode_def *first = mf_names_add(l, table, name, &defs[i]);
        if (first != NULL) {
            char nb[64];
            mf_fail(l, node, mf_first_line(mf_node_line(nodes[first - defs]), nb, sizeof nb),
                    "opcode '%s' is defined twice%s", name, where);
        }
        char owner[300];
        snprintf(owner, sizeof owner, "opcode '%.280s'", name);
        defs[i].name = mf_keep(l, name);
        defs[i].message = mf_keep(l, message);
        defs[i].value =
            (uint8_t)mf_in_range(l, &value, "value", owner, 0xFF, mf_node_line(node), mf_node_col(node), NULL);
    }
}

void mf_tasks(mf_loader *l, mf_provider_ctx *c, const mf_pairs *pp) {
    size_t n;
    yaml_node_item_t *items = mf_sequence(l, pp, mf_key_index(mf_provider_keys, "tasks"), "tasks", &n);
    mf_task_def *defs = mf_scratch(l, n ? n : 1, sizeof *defs);
    yaml_node_t **nodes = mf_scratch(l, n ? n : 1, sizeof *nodes);
    mf_names_init(l, &c->tasks);
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *node = mf_node_at(l, items[i]);
        mf_pairs p;
        mf_mapping(l, node, "task", TASK_KEYS, 0x3, &p);
        const char *name = mf_string(l, p.val[0], "name");
        mf_int value = mf_integer(l, p.val[1], "value");
        if (mf_given(&p, 2))
            mf_string(l, p.val[2], "symbol");
        const char *guid = mf_given(&p, 3) ? mf_guid_text(l, p.val[3], "guid") : NULL;
        const char *message = mf_given(&p, 4) ? mf_string(l, p.val[4], "message") : name;
        nodes[i] = node;
        const mf_task_def *first = mf_names_add(l, &c->tasks, name, &defs[i]);
        if (first != NULL) {
            char nb[64];
            mf_fail(l, node, mf_first_line(mf_node_line(nodes[first - defs]), nb, sizeof nb),
                    "task '%s' is defined twice", name);
        }
        char owner[300];
        snprintf(owner, sizeof owner, "task '%.280s'", name);
        defs[i].name = mf_keep(l, name);
        defs[i].message = mf_keep(l, message);
        defs[i].value =
            (uint16_t)mf_in_range(l, &value, "value", owner, 0xFFFF, mf_node_line(node), mf_node_col(node), NULL);
        if (guid != NULL)
            mf_check_guid(l, guid, "task", name, node, NULL);
        size_t on;
        yaml_node_item_t *oitems = mf_sequence(l, &p, 5, "opcodes", &on);
        char where[300];
        snprintf(where, sizeof where, " in task '%.280s'", name);
        mf_opcodes(l, oitems, on, &defs[i].opcodes, where);
    }
    c->task_defs = defs;
    c->task_count = n;
}

static int cmp_entry(const void *a, const void *b) {
    const mantra_manifest_map_entry *x = a, *y = b;
    return x->value < y->value ? -1 : x->value > y->value;
}

void mf_maps(mf_loader *l, mf_provider_ctx *c, const mf_pairs *pp) {
    size_t n;
    yaml_node_item_t *items = mf_sequence(l, pp, mf_key_index(mf_provider_keys, "maps"), "maps", &n);
    mantra_manifest_map *out = mf_alloc(l, n ? n : 1, sizeof *out);
    yaml_node_t **nodes = mf_scratch(l, n ? n : 1, sizeof *nodes);
    mf_names_init(l, &c->maps);
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *node = mf_node_at(l, items[i]);
        mf_pairs p;
        mf_mapping(l, node, "map", MAP_KEYS, 0x3, &p);
        const char *name = mf_string(l, p.val[0], "name");
        const char *kind = mf_scalar(l, p.val[1], "kind", "a map kind");
        if (strcmp(kind, "value") != 0 && strcmp(kind, "bitmap") != 0)
            mf_fail(l, p.val[1], "valid kinds: value, bitmap", "unknown map kind '%s'", kind);
        size_t en;
        yaml_node_item_t *eitems = mf_sequence(l, &p, 2, "entries", &en);
        mantra_manifest_map_entry *entries = mf_alloc(l, en ? en : 1, sizeof *entries);
        yaml_node_t **enodes = mf_scratch(l, en ? en : 1, sizeof *enodes);
        mf_int *values = mf_scratch(l, en ? en : 1, sizeof *values);
        for (size_t j = 0; j < en; j++) {
            yaml_node_t *enode = mf_node_at(l, eitems[j]);
            mf_pairs ep;
            mf_mapping(l, enode, "map entry", ENTRY_KEYS, 0x3, &ep);
            values[j] = mf_integer(l, ep.val[0], "value");
            entries[j].message = mf_keep(l, mf_string(l, ep.val[1], "message"));
            enodes[j] = enode;
        }
        nodes[i] = node;
        const mantra_manifest_map *first = mf_names_add(l, &c->maps, name, &out[i]);
        if (first != NULL) {
            char nb[64];
            mf_fail(l, node, mf_first_line(mf_node_line(nodes[first - out]), nb, sizeof nb),
                    "map '%s' is defined twice", name);
        }
        char owner[300];
        snprintf(owner, sizeof owner, "map '%.280s'", name);
        for (size_t j = 0; j < en; j++) {
            entries[j].value = mf_in_range(l, &values[j], "value", owner, UINT64_MAX, mf_node_line(enodes[j]),
                                           mf_node_col(enodes[j]), NULL);
            for (size_t k = 0; k < j; k++) {
                if (entries[k].value == entries[j].value) {
                    char nb[64], hx[64];
                    mf_hex_text(&values[j], hx, sizeof hx);
                    mf_fail(l, enodes[j], mf_first_line(mf_node_line(enodes[k]), nb, sizeof nb),
                            "map '%s' defines value %s twice", name, hx);
                }
            }
        }
        qsort(entries, en, sizeof *entries, cmp_entry);
        out[i].name = mf_keep(l, name);
        out[i].entries = entries;
        out[i].entry_count = (uint32_t)en;
        out[i].is_bitmap = strcmp(kind, "bitmap") == 0;
    }
    c->p->maps = out;
    c->p->map_count = (uint32_t)n;
}

#endif /* MANTRA_HAVE_LIBYAML */
