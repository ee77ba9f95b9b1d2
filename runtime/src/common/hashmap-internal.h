/* hashmap-internal.h - a uint64 -> uint64 hash map (the reader's metadata, stacks, threads and
 * sequence numbers; the manifest's name and id tables). Private. */
#ifndef MANTRA_HASHMAP_INTERNAL_H
#define MANTRA_HASHMAP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

typedef struct cm_map {
    uint64_t *keys;
    uint64_t *vals;
    uint8_t *used;
    size_t cap; /* power of two, or 0 */
    size_t count;
} cm_map;

/* The value stored under key (changeable in place), or NULL. */
uint64_t *cm_map_get(const cm_map *m, uint64_t key);
/* Inserts or replaces; 0 or MANTRA_ENOMEM. */
int cm_map_put(cm_map *m, uint64_t key, uint64_t val);
void cm_map_del(cm_map *m, uint64_t key);
/* Removes every entry (keeps the table). */
void cm_map_clear(cm_map *m);
/* Frees the table; the map is empty and usable again. */
void cm_map_free(cm_map *m);

#endif
