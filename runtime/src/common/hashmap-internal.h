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

/* FNV-1a (64-bit) of the bytes p[0..n), continuing from h (start: CM_FNV_BASIS): the keys of maps
 * by name or content (the assembler's method names, the manifest's name tables, the metadata
 * builder's deduplication). */
#define CM_FNV_BASIS UINT64_C(14695981039346656037)
static inline uint64_t cm_fnv1a(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * UINT64_C(1099511628211);
    return h;
}
/* The same over a NUL-terminated string. */
static inline uint64_t cm_fnv1a_str(const char *s) {
    uint64_t h = CM_FNV_BASIS;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
    return h;
}

#endif
