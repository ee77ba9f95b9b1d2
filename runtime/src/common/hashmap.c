/* The uint64 -> uint64 hash map of hashmap-internal.h: open addressing with linear probing,
 * deletion by backward shift, a load factor of at most 3/4. */
#include <stdlib.h>
#include <string.h>

#include "common/hashmap-internal.h"
#include "mantra/status.h"

static size_t map_hash(uint64_t k, size_t mask) {
    k ^= k >> 33;
    k *= UINT64_C(0xff51afd7ed558ccd);
    k ^= k >> 33;
    return (size_t)k & mask;
}

uint64_t *cm_map_get(const cm_map *m, uint64_t key) {
    if (m->cap == 0)
        return NULL;
    size_t mask = m->cap - 1;
    for (size_t i = map_hash(key, mask);; i = (i + 1) & mask) {
        if (!m->used[i])
            return NULL;
        if (m->keys[i] == key)
            return &m->vals[i];
    }
}

static int map_grow(cm_map *m) {
    size_t ncap = m->cap ? m->cap * 2 : 16;
    cm_map n = {0};
    n.keys = malloc(ncap * sizeof *n.keys);
    n.vals = malloc(ncap * sizeof *n.vals);
    n.used = calloc(ncap, 1);
    if (!n.keys || !n.vals || !n.used) {
        free(n.keys);
        free(n.vals);
        free(n.used);
        return MANTRA_ENOMEM;
    }
    n.cap = ncap;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->used[i]) {
            size_t mask = ncap - 1;
            size_t j = map_hash(m->keys[i], mask);
            while (n.used[j])
                j = (j + 1) & mask;
            n.used[j] = 1;
            n.keys[j] = m->keys[i];
            n.vals[j] = m->vals[i];
        }
    }
    n.count = m->count;
    cm_map_free(m);
    *m = n;
    return 0;
}

int cm_map_put(cm_map *m, uint64_t key, uint64_t val) {
    uint64_t *v = cm_map_get(m, key);
    if (v) {
        *v = val;
        return 0;
    }
    if ((m->count + 1) * 4 > m->cap * 3) {
        int rc = map_grow(m);
        if (rc < 0)
            return rc;
    }
    size_t mask = m->cap - 1;
    size_t i = map_hash(key, mask);
    while (m->used[i])
        i = (i + 1) & mask;
    m->used[i] = 1;
    m->keys[i] = key;
    m->vals[i] = val;
    m->count++;
    return 0;
}

void cm_map_del(cm_map *m, uint64_t key) {
    if (m->cap == 0)
        return;
    size_t mask = m->cap - 1;
    size_t i = map_hash(key, mask);
    for (;; i = (i + 1) & mask) {
        if (!m->used[i])
            return;
        if (m->keys[i] == key)
            break;
    }
    m->used[i] = 0;
    m->count--;
    /* Backward-shift the entries of the probe run that follows. */
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!m->used[j])
            return;
        size_t h = map_hash(m->keys[j], mask);
        /* Move j to i when h is not cyclically in (i, j]. */
        int in_range = (i <= j) ? (i < h && h <= j) : (i < h || h <= j);
        if (!in_range) {
            m->used[i] = 1;
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            m->used[j] = 0;
            i = j;
        }
    }
}

void cm_map_clear(cm_map *m) {
    if (m->cap)
        memset(m->used, 0, m->cap);
    m->count = 0;
}

void cm_map_free(cm_map *m) {
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof *m);
}
