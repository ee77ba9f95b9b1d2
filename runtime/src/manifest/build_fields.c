/* build_fields.c - the manifest model's templates and fields: field shapes and types, struct members
 * (one level), counts and lengths that name an earlier integer field (each such field gets a slot),
 * maps of integer fields, and the fixed payload size of a template, with the rules of
 * generator/mantra_gen/validate.py (fields, reference, fixed_size). */
#include <stdio.h>
#include <string.h>

#if defined(MANTRA_HAVE_LIBYAML)

#include "manifest/loader-internal.h"

static const char *const FIELD_KEYS[] = {"name", "type", "out", "map", "length", "count", "fields", "layout", NULL};

typedef struct field_src {
    yaml_node_t *node;
    yaml_node_t *members; /* struct members (a sequence, null or NULL) */
    mf_size_ref count, length;
    const char *map;
} field_src;

static void fields(mf_loader *l, mf_provider_ctx *c, yaml_node_item_t *items, size_t n, const char *where,
                   const mantra_manifest_field *parent, const mantra_manifest_field *outer, size_t outer_n,
                   mantra_manifest_field **out_fields, uint16_t *slot_count, uint16_t *struct_slots);

/* The reference of field list[i] by its count or length (validate.reference); fills *kind, *value
 * and gives the named field a slot. `outer`: the template's fields when list are a struct's members. */
static void reference(mf_loader *l, const char *what, const mf_size_ref *r, mantra_manifest_field *list, size_t n,
                      size_t i, yaml_node_t *node, const mantra_manifest_field *outer, size_t outer_n, uint8_t *kind,
                      uint32_t *value, uint16_t *slots) {
    mantra_manifest_field *f = &list[i];
    if (!r->given)
        return;
    if (!r->is_name) {
        if (r->num.neg || r->num.mag < 1) {
            char note[64];
            snprintf(note, sizeof note, "a fixed %s is at least 1", what);
            mf_fail(l, node, note, "%s %s of field '%s' is out of range", what, r->num.text, f->name);
        }
        *kind = MANTRA_MANIFEST_REF_FIXED;
        *value = r->num.big || r->num.mag > UINT32_MAX ? UINT32_MAX : (uint32_t)r->num.mag;
        return;
    }
    char note[300];
    const char *hint = NULL;
    size_t j = i;
    while (j > 0 && strcmp(list[j - 1].name, r->name) != 0)
        j--;
    if (j > 0) {
        mantra_manifest_field *t = &list[j - 1];
        if (mf_is_integer_type(t->type) && t->count_kind == MANTRA_MANIFEST_REF_NONE) {
            if (t->slot == MANTRA_MANIFEST_NO_SLOT) {
                if (*slots >= MANTRA_MANIFEST_MAX_SLOTS)
                    mf_fail(l, node, NULL, "more than %u fields of one template or struct give a count or length",
                            MANTRA_MANIFEST_MAX_SLOTS);
                t->slot = (*slots)++;
            }
            *kind = MANTRA_MANIFEST_REF_FIELD;
            *value = (uint32_t)(j - 1);
            return;
        }
        if (mf_is_integer_type(t->type))
            snprintf(note, sizeof note, "'%.200s' is an array", r->name);
        else
            snprintf(note, sizeof note, "'%.200s' has type '%s'", r->name, mantra_manifest_type_name(t->type));
        hint = note;
    } else {
        int later = 0, in_outer = 0;
        for (size_t k = i; k < n; k++)
            later |= strcmp(list[k].name, r->name) == 0;
        for (size_t k = 0; k < outer_n; k++)
            in_outer |= strcmp(outer[k].name, r->name) == 0;
        if (later) {
            if (strcmp(r->name, f->name) != 0) {
                snprintf(note, sizeof note, "'%.140s' comes after '%.140s'", r->name, f->name);
                hint = note;
            }
        } else if (in_outer) {
            snprintf(note, sizeof note, "a struct member's %s must name a member of the same struct", what);
            hint = note;
        }
    }
    mf_fail(l, node, hint, "%s '%s' of field '%s' does not name an earlier integer field", what, r->name, f->name);
}

static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
static uint64_t sat_mul(uint64_t a, uint64_t b) { return (a != 0 && b > UINT64_MAX / a) ? UINT64_MAX : a * b; }

uint64_t mf_fixed_size(const mantra_manifest_field *f, size_t n) {
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        const mf_type_info *ti = mf_type_info_of(f[i].type);
        uint64_t elem = f[i].type == MANTRA_TYPE_POINTER ? 8 : ti ? ti->size : 0;
        if (f[i].type == MANTRA_TYPE_BINARY)
            elem = f[i].length_kind == MANTRA_MANIFEST_REF_FIXED ? f[i].length : 0;
        if (f[i].type == MANTRA_TYPE_OBJECT)
            elem = mf_fixed_size(f[i].members, f[i].member_count);
        uint64_t count = f[i].count_kind == MANTRA_MANIFEST_REF_FIXED ? f[i].count
                         : f[i].count_kind == MANTRA_MANIFEST_REF_FIELD ? 0
                                                                         : 1;
        total = sat_add(total, sat_mul(elem, count));
    }
    return total;
}

static void fields(mf_loader *l, mf_provider_ctx *c, yaml_node_item_t *items, size_t n, const char *where,
                   const mantra_manifest_field *parent, const mantra_manifest_field *outer, size_t outer_n,
                   mantra_manifest_field **out_fields, uint16_t *slot_count, uint16_t *struct_slots) {
    mantra_manifest_field *out = mf_alloc(l, n ? n : 1, sizeof *out);
    field_src *src = mf_scratch(l, n ? n : 1, sizeof *src);
    mf_names seen;
    mf_names_init(l, &seen);
    *slot_count = 0;
    /* pass 1: shape and scalar values of every field (Python: the loader) */
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *node = mf_node_at(l, items[i]);
        mf_pairs p;
        mf_mapping(l, node, "field", FIELD_KEYS, 0x3, &p);
        mantra_manifest_field *f = &out[i];
        field_src *s = &src[i];
        s->node = node;
        f->name = mf_keep(l, mf_string(l, p.val[0], "name"));
        f->type = mf_field_type(l, p.val[1], "type");
        if (mf_given(&p, 2))
            f->out_type = mf_keep(l, mf_string(l, p.val[2], "out"));
        if (mf_given(&p, 3))
            s->map = mf_string(l, p.val[3], "map");
        if (mf_given(&p, 4))
            s->length = mf_size_ref_of(l, p.val[4], "length");
        if (mf_given(&p, 5))
            s->count = mf_size_ref_of(l, p.val[5], "count");
        if (p.key[6] != NULL && f->type != MANTRA_TYPE_OBJECT) {
            char note[300];
            snprintf(note, sizeof note, "field '%.200s' has type '%s'", f->name, mantra_manifest_type_name(f->type));
            mf_fail(l, p.key[6], note, "only a struct field can have 'fields'");
        }
        if (mf_given(&p, 7)) {
            const char *layout = mf_string(l, p.val[7], "layout");
            if (f->type != MANTRA_TYPE_OBJECT)
                mf_fail(l, node, "a layout applies to struct fields", "field '%s' of type '%s' cannot have a layout",
                        f->name, mantra_manifest_type_name(f->type));
            else if (layout != NULL && strcmp(layout, "c") == 0)
                f->layout = MANTRA_MANIFEST_LAYOUT_C;
            else if (layout != NULL && strcmp(layout, "packed") != 0)
                mf_fail(l, node,
                        "packed (the default: members back to back) or c (each member at its natural alignment, each "
                        "element padded to the largest)",
                        "unknown layout '%s' of struct '%s'", layout, f->name);
        }
        f->line = mf_node_line(node);
        f->column = mf_node_col(node);
        f->size = mf_type_info_of(f->type)->size; /* a type mf_field_type() accepted */
        f->slot = MANTRA_MANIFEST_NO_SLOT;
        if (f->type == MANTRA_TYPE_OBJECT) {
            if (parent != NULL)
                mf_fail(l, node, "a struct cannot contain structs", "struct '%s' is nested in struct '%s'", f->name,
                        parent->name);
            size_t mn;
            mf_sequence(l, &p, 6, "fields", &mn); /* a sequence (or nothing); members are built below */
            s->members = p.val[6];
        }
    }
    /* pass 2: the rules of validate.fields, field by field */
    for (size_t i = 0; i < n; i++) {
        mantra_manifest_field *f = &out[i];
        field_src *s = &src[i];
        const mantra_manifest_field *first = mf_names_add(l, &seen, f->name, f);
        if (first != NULL) {
            char nb[64];
            mf_fail(l, s->node, mf_first_line(first->line, nb, sizeof nb), "field '%s' is defined twice%s", f->name,
                    where);
        }
        if (f->type == MANTRA_TYPE_OBJECT) {
            if (!s->count.given)
                mf_fail(l, s->node, "a struct is an array: give it a count (an earlier integer field or a number)",
                        "struct '%s' has no count", f->name);
            size_t mn = 0;
            yaml_node_item_t *mitems = NULL;
            if (s->members != NULL && s->members->type == YAML_SEQUENCE_NODE) {
                mn = (size_t)(s->members->data.sequence.items.top - s->members->data.sequence.items.start);
                mitems = s->members->data.sequence.items.start;
            }
            if (mn == 0)
                mf_fail(l, s->node, NULL, "struct '%s' has no fields", f->name);
            char swhere[300];
            snprintf(swhere, sizeof swhere, " in struct '%.280s'", f->name);
            mantra_manifest_field *members;
            uint16_t mslots, unused;
            fields(l, c, mitems, mn, swhere, f, out, n, &members, &mslots, &unused);
            f->members = members;
            f->member_count = (uint32_t)mn;
            for (size_t k = 0; f->layout == MANTRA_MANIFEST_LAYOUT_C && k < mn; k++) {
                const mantra_manifest_field *m = &members[k];
                if (m->type == MANTRA_TYPE_STRING || m->type == MANTRA_TYPE_STRING8 || m->type == MANTRA_TYPE_BINARY ||
                    m->count_kind == MANTRA_MANIFEST_REF_FIELD)
                    mf_fail(l, mf_node_at(l, mitems[k]),
                            "a C-layout struct holds fixed-size members only: scalars, GUID, Pointer and arrays of a "
                            "fixed count of them",
                            "member '%s' of struct '%s' (layout c) has no fixed size", m->name, f->name);
            }
            if (mslots > *struct_slots)
                *struct_slots = mslots;
        }
        int array_ok = f->type != MANTRA_TYPE_STRING && f->type != MANTRA_TYPE_STRING8 &&
                       f->type != MANTRA_TYPE_BINARY;
        int count_given = s->count.given;
        if (s->length.given && count_given)
            mf_fail(l, s->node, NULL, "field '%s' has both a count and a length", f->name);
        else if (count_given && !array_ok)
            mf_fail(l, s->node, "arrays of strings and of Binary cannot be written",
                    "field '%s' of type '%s' cannot have a count", f->name, mantra_manifest_type_name(f->type));
        else if (s->length.given && f->type != MANTRA_TYPE_BINARY)
            mf_fail(l, s->node, "only Binary fields take a length", "field '%s' of type '%s' cannot have a length",
                    f->name, mantra_manifest_type_name(f->type));
        else if (f->type == MANTRA_TYPE_BINARY && !s->length.given)
            mf_fail(l, s->node, "give it a length: an earlier integer field or a number",
                    "field '%s' of type 'Binary' has no length", f->name);
        reference(l, "length", &s->length, out, n, i, s->node, outer, outer_n, &f->length_kind, &f->length, slot_count);
        reference(l, "count", &s->count, out, n, i, s->node, outer, outer_n, &f->count_kind, &f->count, slot_count);
        if (s->map != NULL) {
            const mantra_manifest_map *mp = mf_names_get(&c->maps, s->map);
            if (mp == NULL)
                mf_fail(l, s->node, NULL, "undefined map '%s'", s->map);
            if (!mf_is_integer_type(f->type))
                mf_fail(l, s->node, "maps apply to integer fields", "field '%s' of type '%s' cannot have a map",
                        f->name, mantra_manifest_type_name(f->type));
            f->map = mp;
        }
    }
    *out_fields = out;
}

void mf_template_of(mf_loader *l, mf_provider_ctx *c, mantra_manifest_template *t, const char *name,
                    yaml_node_t *fields_node, yaml_node_t *at) {
    size_t n = 0;
    yaml_node_item_t *items = NULL;
    char dbuf_[256];
    if (fields_node != NULL && !mf_is_null(fields_node)) {
        if (fields_node->type != YAML_SEQUENCE_NODE)
            mf_fail(l, fields_node, NULL, "expected a sequence for 'fields', got %s", MF_DESCRIBE(fields_node));
        n = (size_t)(fields_node->data.sequence.items.top - fields_node->data.sequence.items.start);
        items = fields_node->data.sequence.items.start;
    }
    char where[300];
    snprintf(where, sizeof where, " in template '%.280s'", name);
    mantra_manifest_field *f;
    fields(l, c, items, n, where, NULL, NULL, 0, &f, &t->slot_count, &t->struct_slot_count);
    t->name = mf_keep(l, name);
    t->fields = f;
    t->field_count = (uint32_t)n;
    t->line = mf_node_line(at);
    t->column = mf_node_col(at);
}

#endif /* MANTRA_HAVE_LIBYAML */
