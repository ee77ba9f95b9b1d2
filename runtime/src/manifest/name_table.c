/* name_table.c - the manifest loader's name tables (keywords, tasks, opcodes, maps, templates,
 * fields, providers, PGO kinds): each a cm_map from a 64-bit FNV-1a hash of the name to the first
 * of a chain of entries (in the scratch arena) whose names are compared, so two names with the same
 * hash stay apart. The maps are listed in the loader and freed at the end of the load. */
#include <string.h>

#if defined(MANTRA_HAVE_LIBYAML)

#include "manifest/loader-internal.h"

typedef struct name_entry {
    const char *name;
    const void *item;
    struct name_entry *next; /* same hash */
} name_entry;

void mf_names_init(mf_loader *l, mf_names *t) {
    mf_name_map *m = mf_scratch(l, 1, sizeof *m);
    memset(&m->map, 0, sizeof m->map);
    m->next = l->name_maps;
    l->name_maps = m;
    t->m = m;
}

void mf_names_free_all(mf_loader *l) {
    for (mf_name_map *m = l->name_maps; m != NULL; m = m->next)
        cm_map_free(&m->map);
    l->name_maps = NULL;
}

/* The entry of name, or NULL; *slot: the map's value for its hash (NULL when there is none). */
static name_entry *find(const mf_names *t, const char *name, uint64_t h, uint64_t **slot) {
    *slot = cm_map_get(&t->m->map, h);
    for (name_entry *e = *slot != NULL ? (name_entry *)(uintptr_t)**slot : NULL; e != NULL; e = e->next)
        if (strcmp(e->name, name) == 0)
            return e;
    return NULL;
}

const void *mf_names_get(const mf_names *t, const char *name) {
    if (t->m == NULL)
        return NULL;
    uint64_t *slot;
    name_entry *e = find(t, name, cm_fnv1a_str(name), &slot);
    return e != NULL ? e->item : NULL;
}

const void *mf_names_add(mf_loader *l, mf_names *t, const char *name, const void *item) {
    uint64_t h = cm_fnv1a_str(name);
    uint64_t *slot;
    name_entry *e = find(t, name, h, &slot);
    if (e != NULL)
        return e->item;
    e = mf_scratch(l, 1, sizeof *e);
    e->name = name;
    e->item = item;
    if (slot != NULL) { /* another name with this hash: chain */
        e->next = (name_entry *)(uintptr_t)*slot;
        *slot = (uint64_t)(uintptr_t)e;
        return NULL;
    }
    e->next = NULL;
    if (cm_map_put(&t->m->map, h, (uint64_t)(uintptr_t)e) != 0)
        mf_fail_oom(l);
    return NULL;
}

#endif /* MANTRA_HAVE_LIBYAML */
