/* Helpers shared by the subcommands: opening traces, reporting errors, progress. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mantra/decode.h"
#include "tool.h"

#ifdef MANTRA_TOOL_HAVE_DOTNET
#include "dotnet_registry.h"

/* manifest/dotnet.yaml, embedded at build time (tools/embed_file.cmake) */
extern const unsigned char mantra_tool_dotnet_manifest[];
extern const size_t mantra_tool_dotnet_manifest_size;

/* The manifest the registry was generated from, loaded once (NULL without YAML support). */
static const mantra_manifest *registry_manifest(void) {
    static mantra_manifest *m;
    static int tried;
    if (!tried) {
        tried = 1;
        m = mantra_manifest_load_memory(mantra_tool_dotnet_manifest, mantra_tool_dotnet_manifest_size,
                                        "manifest/dotnet.yaml", NULL);
    }
    return m;
}
#endif

/* manifest/clr/runtime.yaml, additions.yaml and eventpipe.yaml, embedded at build time
 * (tools/embed_file.cmake): the .NET runtime's providers (docs/manifest.md). */
extern const unsigned char mantra_tool_clr_runtime[];
extern const size_t mantra_tool_clr_runtime_size;
extern const unsigned char mantra_tool_clr_additions[];
extern const size_t mantra_tool_clr_additions_size;
extern const unsigned char mantra_tool_clr_eventpipe[];
extern const size_t mantra_tool_clr_eventpipe_size;

/* The built-in manifests, loaded once (an entry stays NULL without YAML support), in their order of
 * precedence: ClrEtwAll's data, then the runtime's newer events, then the EventPipe providers. */
#define BUILTIN_COUNT 3
static const mantra_manifest *const *builtin_manifests(void) {
    static mantra_manifest *m[BUILTIN_COUNT];
    static int tried;
    if (!tried) {
        tried = 1;
        m[0] = mantra_manifest_load_memory(mantra_tool_clr_runtime, mantra_tool_clr_runtime_size,
                                           "manifest/clr/runtime.yaml", NULL);
        m[1] = mantra_manifest_load_memory(mantra_tool_clr_additions, mantra_tool_clr_additions_size,
                                           "manifest/clr/additions.yaml", NULL);
        m[2] = mantra_manifest_load_memory(mantra_tool_clr_eventpipe, mantra_tool_clr_eventpipe_size,
                                           "manifest/clr/eventpipe.yaml", NULL);
    }
    return (const mantra_manifest *const *)m;
}

mantra_reader *tool_reader(const char *cmd, unsigned flags, const tool_manifests *ms) {
    mantra_reader_options o = {flags, 0};
    mantra_reader *r = mantra_reader_new(&o);
    if (r == NULL) {
        fprintf(stderr, "mantra %s: out of memory\n", cmd);
        return NULL;
    }
    for (size_t i = 0; ms && i < ms->nloaded; i++)
        if (mantra_reader_add_manifest(r, ms->loaded[i]) < 0) {
            fprintf(stderr, "mantra %s: out of memory\n", cmd);
            mantra_reader_free(r);
            return NULL;
        }
    /* precedence: --manifest files, MANTRA_MANIFEST_PATH, the built-in data, the generated registry */
    const mantra_manifest *const *builtin = builtin_manifests();
    for (size_t i = 0; i < BUILTIN_COUNT; i++)
        if (builtin[i] && mantra_reader_add_manifest(r, builtin[i]) < 0) {
            fprintf(stderr, "mantra %s: out of memory\n", cmd);
            mantra_reader_free(r);
            return NULL;
        }
#ifdef MANTRA_TOOL_HAVE_DOTNET
    for (size_t i = 0; i < MANTRA_DOTNET_PROVIDER_COUNT; i++)
        mantra_reader_add_provider(r, mantra_dotnet_providers[i]);
    if (registry_manifest())
        mantra_reader_add_provider_manifest(r, registry_manifest());
#endif
    return r;
}

int tool_open(mantra_reader *r, const char *cmd, const char *path) {
    int rc = strcmp(path, "-") == 0 ? mantra_reader_open_fd(r, 0) : mantra_reader_open_file(r, path);
    if (rc < 0)
        tool_report(r, cmd, path);
    return rc;
}

void tool_report(const mantra_reader *r, const char *cmd, const char *path) {
    fprintf(stderr, "mantra %s: %s: %s\n", cmd, path, mantra_reader_last_error(r));
}

int tool_status(int rc) { return (rc >= 0 || rc == MANTRA_ETRUNCATED) ? TOOL_OK : TOOL_BAD_INPUT; }

int tool_usage_error(const char *cmd, const char *fmt, const char *arg) {
    fprintf(stderr, "mantra %s: ", cmd);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'mantra %s --help'.\n", cmd);
    return TOOL_USAGE;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void tool_progress(const mantra_reader *r, const char *cmd, int done) {
    static int tty = -1;
    static double start, last;
    static int shown;
    static unsigned calls;
    if (tty < 0) {
        tty = isatty(2);
        start = last = now();
    }
    if (!tty)
        return;
    if (done) {
        if (shown)
            fputs("\r\033[K", stderr);
        return;
    }
    if ((++calls & 4095) != 0)
        return;
    double t = now();
    if (t - start < 1.0 || t - last < 0.25)
        return;
    last = t;
    const mantra_reader_stats *s = mantra_reader_get_stats(r);
    if (s->total_bytes)
        fprintf(stderr, "\rmantra %s: %.1f of %.1f MB read (%d%%)", cmd, (double)s->bytes_read / 1e6,
                (double)s->total_bytes / 1e6, (int)(100.0 * (double)s->bytes_read / (double)s->total_bytes));
    else
        fprintf(stderr, "\rmantra %s: %.1f MB read", cmd, (double)s->bytes_read / 1e6);
    shown = 1;
}

/* ---- manifests ---------------------------------------------------------------------------- */

int tool_manifests_add(tool_manifests *ms, const char *cmd, const char *file) {
    const char **f = realloc(ms->files, (ms->nfiles + 1) * sizeof *f);
    if (f == NULL) {
        fprintf(stderr, "mantra %s: out of memory\n", cmd);
        return -1;
    }
    f[ms->nfiles++] = file;
    ms->files = f;
    return 0;
}

/* 1 when path looks like an ETW XML manifest (by its name, or a first character '<'). */
static int is_xml_manifest(const char *path) {
    size_t n = strlen(path);
    if ((n > 4 && (strcmp(path + n - 4, ".man") == 0 || strcmp(path + n - 4, ".xml") == 0)))
        return 1;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return 0;
    int c;
    do
        c = getc(f);
    while (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == 0xEF || c == 0xBB || c == 0xBF);
    fclose(f);
    return c == '<';
}

static int load_one(tool_manifests *ms, const char *path) {
    if (is_xml_manifest(path)) {
        fprintf(stderr,
                "%s:1:1: error: an ETW XML manifest; mantra reads the YAML spelling: convert it with "
                "`mantra-gen --emit-yaml %s > NAME.yaml` and pass that file\n",
                path, path);
        return -1;
    }
    mantra_manifest_error *err = NULL;
    mantra_manifest *m = mantra_manifest_load_file(path, &err);
    if (m == NULL) {
        if (err == NULL) {
            fprintf(stderr, "%s:1:1: error: out of memory\n", path);
            return -1;
        }
        char buf[1024];
        mantra_manifest_error_format(err, buf, sizeof buf);
        fprintf(stderr, "%s\n", buf);
        const char *note = mantra_manifest_error_note(err);
        if (note)
            fprintf(stderr, "%s:%u:%u: note: %s\n", mantra_manifest_error_file(err), mantra_manifest_error_line(err),
                    mantra_manifest_error_column(err), note);
        mantra_manifest_error_free(err);
        return -1;
    }
    mantra_manifest **l = realloc(ms->loaded, (ms->nloaded + 1) * sizeof *l);
    if (l == NULL) {
        mantra_manifest_free(m);
        fprintf(stderr, "%s:1:1: error: out of memory\n", path);
        return -1;
    }
    l[ms->nloaded++] = m;
    ms->loaded = l;
    return 0;
}

int tool_manifests_load(tool_manifests *ms) {
    for (size_t i = 0; i < ms->nfiles; i++)
        if (load_one(ms, ms->files[i]) < 0)
            return -1;
    const char *env = getenv("MANTRA_MANIFEST_PATH");
    if (env == NULL || env[0] == '\0')
        return 0;
    char *copy = strdup(env);
    if (copy == NULL) {
        fprintf(stderr, "mantra: out of memory\n");
        return -1;
    }
    int rc = 0;
    for (char *p = copy; rc == 0 && p != NULL;) {
        char *colon = strchr(p, ':');
        if (colon)
            *colon = '\0';
        if (p[0] != '\0')
            rc = load_one(ms, p);
        p = colon ? colon + 1 : NULL;
    }
    free(copy);
    return rc;
}

void tool_manifests_free(tool_manifests *ms) {
    for (size_t i = 0; i < ms->nloaded; i++)
        mantra_manifest_free(ms->loaded[i]);
    free(ms->loaded);
    free(ms->files);
    memset(ms, 0, sizeof *ms);
}

/* ---- payloads that do not match their template ---------------------------------------------- */

#define TOOL_DECODE_SHOWN 20

static unsigned long long decode_warnings;

void tool_decode_warning(const char *cmd, const char *path, const mantra_trace_event *ev) {
    if (++decode_warnings > TOOL_DECODE_SHOWN)
        return;
    const mantra_trace_metadata *m = ev->metadata;
    const char *what = ev->decode_status == MANTRA_DECODE_TRAILING ? "has bytes after the last field"
                       : ev->decode_status == MANTRA_DECODE_BAD_STRING ? "has a string without terminator"
                                                                       : "ends inside a field (too short)";
    fprintf(stderr, "mantra %s: %s: offset %llu: %s/%u/v%u: the payload (%zu bytes) %s of the %s template\n", cmd,
            path, (unsigned long long)ev->offset, m->provider, (unsigned)m->event_id, (unsigned)ev->version,
            ev->payload_size, what,
            m->fields_from_manifest    ? "manifest's"
            : m->fields_from_registry ? "registered provider's"
                                      : "trace metadata's");
}

void tool_decode_summary(const char *cmd, const char *path, const mantra_reader *r) {
    const mantra_reader_stats *s = mantra_reader_get_stats(r);
    if (s->decode_errors > TOOL_DECODE_SHOWN)
        fprintf(stderr, "mantra %s: %s: %llu events whose payload does not match their template (%d shown)\n", cmd,
                path, (unsigned long long)s->decode_errors, TOOL_DECODE_SHOWN);
}

int tool_common_arg(const char *cmd, int argc, char **argv, int *i, tool_manifests *ms, const char **path) {
    const char *a = argv[*i];
    if (strcmp(a, "--manifest") == 0 || strncmp(a, "--manifest=", 11) == 0) {
        const char *f = a[10] == '=' ? a + 11 : (*i + 1 < argc ? argv[++*i] : NULL);
        if (f == NULL || f[0] == '\0') {
            tool_manifests_free(ms);
            return tool_usage_error(cmd, "%s", "--manifest needs a FILE");
        }
        if (tool_manifests_add(ms, cmd, f) < 0) {
            tool_manifests_free(ms);
            return TOOL_BAD_INPUT;
        }
        return -1;
    }
    int option = a[0] == '-' && a[1] != '\0';
    if (option || *path) {
        tool_manifests_free(ms);
        if (!option)
            return tool_usage_error(cmd, "more than one trace given ('%s')", a);
        return tool_usage_error(cmd, "unknown option '%s'", a);
    }
    *path = a;
    return -1;
}
