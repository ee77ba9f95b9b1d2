/* The bump allocator of arena-internal.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/arena-internal.h"

struct cm_arena_block {
    cm_arena_block *next;
    size_t size; /* usable bytes after the header */
    size_t used;
};

#define ARENA_ALIGN 16u
#define ARENA_HEADER ((sizeof(cm_arena_block) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1))
#define ARENA_FIRST_BLOCK 16384u
#define ARENA_MAX_BLOCK (1u << 20)

void *cm_arena_alloc(cm_arena *a, size_t size) {
    size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (size == 0)
        size = ARENA_ALIGN;
    cm_arena_block *b = a->head;
    if (b == NULL || b->size - b->used < size) {
        size_t want = b == NULL ? ARENA_FIRST_BLOCK : b->size * 2;
        if (want > ARENA_MAX_BLOCK)
            want = ARENA_MAX_BLOCK;
        if (want < size)
            want = size;
        if (want > SIZE_MAX - ARENA_HEADER)
            return NULL;
        cm_arena_block *nb = malloc(ARENA_HEADER + want);
        if (nb == NULL)
            return NULL;
        nb->size = want;
        nb->used = 0;
        a->total += ARENA_HEADER + want;
        if (b != NULL && want == size && b->size - b->used >= ARENA_ALIGN * 4) {
            /* a large request: keep filling the current block afterwards */
            nb->next = b->next;
            b->next = nb;
            nb->used = size;
            memset((char *)nb + ARENA_HEADER, 0, size);
            return (char *)nb + ARENA_HEADER;
        }
        nb->next = b;
        a->head = nb;
        b = nb;
    }
    void *p = (char *)b + ARENA_HEADER + b->used;
    b->used += size;
    memset(p, 0, size);
    return p;
}

char *cm_arena_strdup(cm_arena *a, const char *s, size_t len) {
    if (len == SIZE_MAX)
        return NULL;
    char *p = cm_arena_alloc(a, len + 1);
    if (p == NULL)
        return NULL;
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

void cm_arena_free(cm_arena *a) {
    cm_arena_block *b = a->head;
    while (b != NULL) {
        cm_arena_block *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
    a->total = 0;
}
