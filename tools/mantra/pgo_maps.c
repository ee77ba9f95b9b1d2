/* Hash maps and string helpers of `mantra pgo`: uint64 -> uint64 (MethodIDs, TypeIDs, ModuleIDs)
 * and string -> index (method identities). Open addressing, linear probing, power-of-two sizes. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgo_tool.h"

static size_t mix64(uint64_t k) {
    k ^= k >> 33;
    k *= UINT64_C(0xff51afd7ed558ccd);
    k ^= k >> 33;
    k *= UINT64_C(0xc4ceb9fe1a85ec53);
    k ^= k >> 33;
    return (size_t)k;
}

static size_t hash_str(const char *s) {
    uint64_t h = UINT64_C(1469598103934665603); /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
    return mix64(h);
}

static int u64map_grow(pgo_u64map *m) {
    size_t ncap = m->cap ? m->cap * 2 : 256;
    pgo_u64map n = {calloc(ncap, sizeof(uint64_t)), calloc(ncap, sizeof(uint64_t)), calloc(ncap, 1), ncap, 0};
    if (n.keys == NULL || n.vals == NULL || n.used == NULL) {
        pgo_u64map_free(&n);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->used[i])
            (void)pgo_u64map_put(&n, m->keys[i], m->vals[i]);
    pgo_u64map_free(m);
    *m = n;
    return 0;
}

int pgo_u64map_put(pgo_u64map *m, uint64_t key, uint64_t val) {
    if ((m->count + 1) * 2 > m->cap && u64map_grow(m) < 0)
        return -1;
    size_t i = mix64(key) & (m->cap - 1);
    while (m->used[i] && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    if (!m->used[i]) {
        m->used[i] = 1;
        m->keys[i] = key;
        m->count++;
    }
    m->vals[i] = val;
    return 0;
}

uint64_t *pgo_u64map_get(const pgo_u64map *m, uint64_t key) {
    if (m->cap == 0)
        return NULL;
    size_t i = mix64(key) & (m->cap - 1);
    while (m->used[i]) {
        if (m->keys[i] == key)
            return &m->vals[i];
        i = (i + 1) & (m->cap - 1);
    }
    return NULL;
}

void pgo_u64map_free(pgo_u64map *m) {
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof *m);
}

size_t pgo_strmap_get(const pgo_strmap *m, const char *key) {
    if (m->cap == 0)
        return (size_t)-1;
    size_t h = hash_str(key), i = h & (m->cap - 1);
    while (m->keys[i]) {
        if (m->hashes[i] == h && strcmp(m->keys[i], key) == 0)
            return m->vals[i];
        i = (i + 1) & (m->cap - 1);
    }
    return (size_t)-1;
}

static void strmap_insert(pgo_strmap *m, char *key, size_t hash, size_t val) {
    size_t i = hash & (m->cap - 1);
    while (m->keys[i])
        i = (i + 1) & (m->cap - 1);
    m->keys[i] = key;
    m->hashes[i] = hash;
    m->vals[i] = val;
    m->count++;
}

int pgo_strmap_put(pgo_strmap *m, const char *key, size_t val) {
    if (m->cap) { /* a key already there: its value replaced */
        size_t h = hash_str(key), i = h & (m->cap - 1);
        for (; m->keys[i]; i = (i + 1) & (m->cap - 1))
            if (m->hashes[i] == h && strcmp(m->keys[i], key) == 0) {
                m->vals[i] = val;
                return 0;
            }
    }
    if ((m->count + 1) * 2 > m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 256;
        pgo_strmap n = {calloc(ncap, sizeof(char *)), calloc(ncap, sizeof(size_t)), calloc(ncap, sizeof(size_t)), ncap, 0};
        if (n.keys == NULL || n.vals == NULL || n.hashes == NULL) {
            free(n.keys);
            free(n.vals);
            free(n.hashes);
            return -1;
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->keys[i])
                strmap_insert(&n, m->keys[i], m->hashes[i], m->vals[i]);
        free(m->keys);
        free(m->vals);
        free(m->hashes);
        *m = n;
    }
    char *k = pgo_strdup(key);
    if (k == NULL)
        return -1;
    strmap_insert(m, k, hash_str(k), val);
    return 0;
}

void pgo_strmap_free(pgo_strmap *m) {
    for (size_t i = 0; i < m->cap; i++)
        free(m->keys[i]);
    free(m->keys);
    free(m->vals);
    free(m->hashes);
    memset(m, 0, sizeof *m);
}

char *pgo_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c)
        memcpy(c, s, n);
    return c;
}

char *pgo_str16_dup(mantra_str16 s) {
    char small[256]; /* one conversion for the short strings names are */
    size_t need = mantra_str16_to_utf8(s, small, sizeof small);
    char *u = malloc(need + 1);
    if (u == NULL)
        return NULL;
    if (need < sizeof small)
        memcpy(u, small, need + 1);
    else
        mantra_str16_to_utf8(s, u, need + 1);
    return u;
}

uint64_t *pgo_u64_array_dup(mantra_array a) {
    uint64_t *v = a.count ? malloc(a.count * sizeof *v) : NULL;
    for (size_t i = 0; v != NULL && i < a.count; i++)
        v[i] = mantra_array_u64(a, i);
    return v;
}

char *pgo_strf(const char *fmt, ...) {
    char small[256]; /* one formatting pass for short strings (identities, names) */
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (s == NULL)
        return NULL;
    if ((size_t)n < sizeof small) {
        memcpy(s, small, (size_t)n + 1);
        return s;
    }
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}
