/* grow-internal.h - growing a malloc'ed array by doubling (the reader's stack, label and queue
 * tables). Private. */
#ifndef MANTRA_GROW_INTERNAL_H
#define MANTRA_GROW_INTERNAL_H

#include <stdint.h>
#include <stdlib.h>

#include "mantra/status.h"

/* Makes *p (an array of *cap elements of elem bytes) hold at least need elements: the capacity
 * doubles from first (or from *cap). 0, or MANTRA_ENOMEM (also when the size would overflow);
 * *p and *cap are unchanged on failure. */
static inline int cm_grow(void **p, size_t *cap, size_t need, size_t elem, size_t first) {
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : first;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return MANTRA_ENOMEM;
        n *= 2;
    }
    if (elem != 0 && n > SIZE_MAX / elem)
        return MANTRA_ENOMEM;
    void *q = realloc(*p, n * elem);
    if (q == NULL)
        return MANTRA_ENOMEM;
    *p = q;
    *cap = n;
    return 0;
}

#endif
