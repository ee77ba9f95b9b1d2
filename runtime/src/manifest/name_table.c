/* name_table.c - the manifest loader's name tables (keywords, tasks, opcodes, maps, templates,
 * fields, providers, PGO kinds), all kept in the loader's one cm_map: the key is a 64-bit FNV-1a
 * hash of the table's number and the name, the value the first of a chain of entries (in the
 * scratch arena) whose names are compared, so two names with the same hash stay apart. */
#include <string.h>

#if defined(MANTRA_HAVE_LIBYAML)

#include "manifest/loader-internal.h"

typedef struct name_entry {
    const char *name;
    const void *item;
    uint32_t table;
    struct name_entry *next; /* same hash */
} name_entry;

static uint64_t hash_name(uint32_t table, const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned i = 0; i < 4; i++)
        h = (h ^ (uint8_t)(table >> (8 * i))) * 1099511628211ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

void mf_names_init(mf_loader *l, mf_names *t) {
    t->map = &l->names;
    t->table = ++l->name_tables;
}

static name_entry *find(const mf_names *t, const char *name, uint64_t h, name_entry **head) {
    uint64_t *v = cm_map_get(t->map, h);
    *head = v != NULL ? (name_entry *)(uintptr_t)*v : NULL;
    for (name_entry *e = *head; e != NULL; e = e->next)
        if (e->table == t->table && strcmp(e->name, name) == 0)
            return e;
    return NULL;
}

const void *mf_names_get(const mf_names *t, const char *name) {
    if (t->map == NULL)
        return NULL;
    name_entry *head;
    name_entry *e = find(t, name, hash_name(t->table, name), &head);
    return e != NULL ? e->item : NULL;
}

const void *mf_names_add(mf_loader *l, mf_names *t, const char *name, const void *item) {
    uint64_t h = hash_name(t->table, name);
    name_entry *head;
    name_entry *e = find(t, name, h, &head);
    if (e != NULL)
        return e->item;
    e = mf_scratch(l, 1, sizeof *e);
    e->name = name;
    e->item = item;
    e->table = t->table;
    e->next = head;
    if (cm_map_put(t->map, h, (uint64_t)(uintptr_t)e) != 0)
        mf_fail_oom(l);
    return NULL;
}

#endif /* MANTRA_HAVE_LIBYAML */
