/* str-internal.h - a malloc'ed copy of a string. Private. */
#ifndef MANTRA_STR_INTERNAL_H
#define MANTRA_STR_INTERNAL_H

#include <stdlib.h>
#include <string.h>

/* A copy of s (NUL included), or NULL when out of memory. */
static inline char *cm_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p != NULL)
        memcpy(p, s, n);
    return p;
}

#endif
