/* fuzz-main.c - replay driver for fuzz targets built without libFuzzer.
 *
 * Calls LLVMFuzzerTestOneInput() once for each file named on the command line; folders are
 * walked (one level deep, entries in directory order). libFuzzer-style options ("-runs=0")
 * are ignored. Exit status 0 when every input ran; a crash is the sanitizers' business.
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int run_file(const char *path, unsigned long *count)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, size = 0;
    uint8_t *buf = malloc(cap);
    if (buf == NULL) {
        fclose(f);
        return -1;
    }
    for (;;) {
        if (size == cap) {
            uint8_t *bigger = realloc(buf, cap * 2);
            if (bigger == NULL) {
                free(buf);
                fclose(f);
                return -1;
            }
            buf = bigger;
            cap *= 2;
        }
        size_t n = fread(buf + size, 1, cap - size, f);
        if (n == 0)
            break;
        size += n;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        fprintf(stderr, "%s: read error\n", path);
        free(buf);
        return -1;
    }
    /* An exact-size copy, so that ASan sees reads past the end of the input. */
    uint8_t *exact = malloc(size ? size : 1);
    if (exact == NULL) {
        free(buf);
        return -1;
    }
    if (size)
        memcpy(exact, buf, size);
    free(buf);
    (void)LLVMFuzzerTestOneInput(exact, size);
    free(exact);
    ++*count;
    return 0;
}

static int run_path(const char *path, unsigned long *count)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        perror(path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return run_file(path, count);
    DIR *d = opendir(path);
    if (d == NULL) {
        perror(path);
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        size_t len = strlen(path) + 1 + strlen(e->d_name) + 1;
        char *child = malloc(len);
        if (child == NULL) {
            rc = -1;
            break;
        }
        snprintf(child, len, "%s/%s", path, e->d_name);
        struct stat cst;
        if (stat(child, &cst) == 0 && S_ISREG(cst.st_mode) && run_file(child, count) != 0)
            rc = -1;
        free(child);
    }
    closedir(d);
    return rc;
}

int main(int argc, char **argv)
{
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    unsigned long count = 0;
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-')
            continue;
        if (run_path(argv[i], &count) != 0)
            rc = 1;
    }
    printf("%s: ran %lu input(s)\n", argv[0], count);
    return rc;
}
