/* arena-internal.h - a bump allocator whose blocks are freed together (the reader's metadata and
 * stacks, the manifest model). Private. */
#ifndef MANTRA_ARENA_INTERNAL_H
#define MANTRA_ARENA_INTERNAL_H

#include <stddef.h>

typedef struct cm_arena_block cm_arena_block;
typedef struct cm_arena {
    cm_arena_block *head; /* the block being filled */
    size_t total;         /* bytes allocated from the system (block headers included) */
} cm_arena;

/* size bytes, zeroed and 16-byte aligned; NULL when out of memory. Blocks start at 16 KB and
 * double up to 1 MB; a request larger than the next block gets a block of its own. */
void *cm_arena_alloc(cm_arena *a, size_t size);
/* A NUL-terminated copy of s[0..len); NULL when out of memory. */
char *cm_arena_strdup(cm_arena *a, const char *s, size_t len);
/* Frees every block; the arena is empty and usable again. */
void cm_arena_free(cm_arena *a);

#endif
