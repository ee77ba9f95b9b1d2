/* manifest_load: time and memory to load a manifest with the run-time loader (mantra/manifest.h).
 *
 *   manifest_load PATH [-n LOADS]
 *
 * PATH is a YAML manifest, or an ETW XML manifest (*.man, *.xml) that is first converted in memory
 * with `$MANTRA_PYTHON tools/mantra-gen --emit-yaml` (run from the source root, as bench-run does).
 * Prints the median, min and max of LOADS loads from memory (parse + build + free), one load from the
 * file, the loaded form's arena size and the peak RSS growth of one load, then `summary:` lines. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "mantra/manifest.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static long max_rss_kb(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static char *read_stream(FILE *f, size_t *len) {
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
        if (n == cap) {
            char *nb = realloc(buf, cap * 2);
            if (nb == NULL) {
                free(buf);
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
    }
    *len = n;
    return buf;
}

static int ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

int main(int argc, char **argv) {
    const char *path = NULL;
    long loads = 50;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
            loads = (long)strtod(argv[++i], NULL);
        else if (path == NULL)
            path = argv[i];
        else {
            fprintf(stderr, "usage: manifest_load PATH [-n LOADS]\n");
            return 2;
        }
    }
    if (path == NULL || loads < 1) {
        fprintf(stderr, "usage: manifest_load PATH [-n LOADS]\n");
        return 2;
    }
    if (!mantra_manifest_supported()) {
        printf("manifest_load: skipped: libmantra was built without libyaml\n");
        return 0;
    }
    FILE *probe = fopen(path, "rb");
    if (probe == NULL) {
        printf("manifest_load: skipped: %s not found\n", path);
        return 0;
    }
    fclose(probe);

    char *text;
    size_t len;
    if (ends_with(path, ".man") || ends_with(path, ".xml")) {
        const char *py = getenv("MANTRA_PYTHON");
        char cmd[8192];
        snprintf(cmd, sizeof cmd, "'%s' tools/mantra-gen --emit-yaml '%s'", py && *py ? py : "python3", path);
        FILE *p = popen(cmd, "r");
        if (p == NULL) {
            perror("popen");
            return 1;
        }
        text = read_stream(p, &len);
        if (pclose(p) != 0 || text == NULL) {
            fprintf(stderr, "manifest_load: `%s` failed\n", cmd);
            free(text);
            return 1;
        }
    } else {
        FILE *f = fopen(path, "rb");
        text = f ? read_stream(f, &len) : NULL;
        if (f)
            fclose(f);
        if (text == NULL) {
            perror(path);
            return 1;
        }
    }

    /* one load first: its peak RSS growth and the loaded form's size */
    long rss0 = max_rss_kb();
    mantra_manifest_error *err = NULL;
    mantra_manifest *m = mantra_manifest_load_memory(text, len, path, &err);
    if (m == NULL) {
        char buf[1024];
        mantra_manifest_error_format(err, buf, sizeof buf);
        fprintf(stderr, "%s\n", buf);
        mantra_manifest_error_free(err);
        free(text);
        return 1;
    }
    long rss1 = max_rss_kb();
    size_t arena = mantra_manifest_memory_size(m);
    uint32_t providers = mantra_manifest_provider_count(m), events = mantra_manifest_event_count(m);
    mantra_manifest_free(m);

    double *t = malloc((size_t)loads * sizeof *t);
    if (t == NULL)
        return 1;
    for (long i = 0; i < loads; i++) {
        double a = now_ms();
        m = mantra_manifest_load_memory(text, len, path, NULL);
        mantra_manifest_free(m);
        t[i] = now_ms() - a;
    }
    qsort(t, (size_t)loads, sizeof *t, cmp_double);
    double median = t[loads / 2], min = t[0], max = t[loads - 1];
    double file_ms = 0;
    if (!(ends_with(path, ".man") || ends_with(path, ".xml"))) {
        double a = now_ms();
        m = mantra_manifest_load_file(path, NULL);
        file_ms = now_ms() - a;
        mantra_manifest_free(m);
    }
    printf("manifest_load: %s: %zu bytes of YAML, %u providers, %u events\n", path, len, providers, events);
    printf("manifest_load: %ld loads from memory: median %.3f ms, min %.3f, max %.3f\n", loads, median, min, max);
    if (file_ms > 0)
        printf("manifest_load: one load from the file: %.3f ms\n", file_ms);
    printf("manifest_load: loaded form %zu bytes (%.1f KiB); peak RSS growth of the first load %ld KiB\n", arena,
           (double)arena / 1024.0, rss1 - rss0);
    printf("summary: manifest_load %u events: median %.3f ms per load (min %.3f, max %.3f, %ld loads)\n", events,
           median, min, max, loads);
    printf("summary: manifest_load %u events: loaded form %.1f KiB, peak RSS growth %ld KiB\n", events,
           (double)arena / 1024.0, rss1 - rss0);
    free(t);
    free(text);
    return 0;
}
