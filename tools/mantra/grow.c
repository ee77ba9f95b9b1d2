/* Growing a malloc'ed array by doubling (tool.h tool_grow): the tools' lists of events, codes,
 * numbers. */
#include <stdint.h>
#include <stdlib.h>

#include "tool.h"

int tool_grow(void **p, size_t *cap, size_t need, size_t elem, size_t first) {
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : first;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return -2;
        n *= 2;
    }
    if (elem && n > SIZE_MAX / elem)
        return -2;
    void *q = realloc(*p, n * elem);
    if (q == NULL)
        return -2;
    *p = q;
    *cap = n;
    return 0;
}
