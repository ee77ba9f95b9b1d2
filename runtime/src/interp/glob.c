/* glob.c - the method filter of MANTRA_InterpPgoMethods: a comma-separated list of patterns where
 * `*` matches any run of characters and `?` one character; a method matches when any pattern
 * matches its "Namespace.Name" or its "Name". */
#include "interp/interp-internal.h"

/* Iterative matcher with one backtrack point (the last `*`): linear in practice, never recursive. */
int ip_glob_one(const char *pat, size_t plen, const char *s) {
    size_t p = 0, star = (size_t)-1;
    const char *mark = NULL;
    while (*s) {
        if (p < plen && (pat[p] == '?' || pat[p] == *s)) {
            p++;
            s++;
        } else if (p < plen && pat[p] == '*') {
            star = p++;
            mark = s;
        } else if (star != (size_t)-1) {
            p = star + 1;
            s = ++mark;
        } else {
            return 0;
        }
    }
    while (p < plen && pat[p] == '*')
        p++;
    return p == plen;
}

int mantra_interp_glob_match(const char *list, const char *name) {
    if (list == NULL || name == NULL)
        return 0;
    const char *p = list;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        /* surrounding blanks are not part of a pattern */
        while (len > 0 && (*p == ' ' || *p == '\t')) {
            p++;
            len--;
        }
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--;
        if (len > 0 && ip_glob_one(p, len, name))
            return 1;
        if (end == NULL)
            return 0;
        p = end + 1;
    }
}
