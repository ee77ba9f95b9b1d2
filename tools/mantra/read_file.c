/* Reading a whole input file (or standard input for "-") into memory, for the commands that parse
 * their input at once (run's programs, pgo's profiles and assemblies). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

char *tool_read_file(const char *path, size_t *size) {
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n + 1 >= cap) { /* room for the NUL after the bytes */
            char *b = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
            if (b == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = b;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    int bad = buf == NULL || ferror(f);
    if (f != stdin)
        fclose(f);
    if (bad) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *size = n;
    return buf;
}
