/* bench_file.h - a whole file read into memory for the benchmark programs (NUL-terminated after
 * its *size bytes), or NULL. */
#ifndef MANTRA_BENCH_FILE_H
#define MANTRA_BENCH_FILE_H

#include <stdio.h>
#include <stdlib.h>

static inline char *bench_read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        *size = (size_t)n;
    }
    return buf;
}

#endif
