/* `mantra symbolize TRACE [--json] [--stacks] [ADDRESS@TIMESTAMP...]` (docs/cli.md "mantra
 * symbolize"): code addresses of a trace's process resolved with the trace's time-aware symbol map
 * (sym_trace.c, mantra/symbols.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym_trace.h"
#include "tool.h"

static const char usage[] =
    "Usage: mantra symbolize TRACE [--json] [--stacks] [--image PATH]... [ADDRESS@TIMESTAMP...]\n"
    "\n"
    "Resolves code addresses of the traced process to module, method and hot or cold part, with what\n"
    "was loaded at that address at that time (method load and unload events, start and end rundown).\n"
    "\n"
    "  ADDRESS@TIMESTAMP  an address (0x hex or decimal) at a time in the trace's ticks: one line each\n"
    "  (none)             a summary of the trace's samples: samples, frames, resolved, cold, unresolved\n"
    "  --stacks           every event with a stack, its frames resolved and their IL offsets (one\n"
    "                     JSON line per event; frames after the first are return addresses)\n"
    "  --image PATH       a ReadyToRun image of one of the trace's modules (matched by file name): its\n"
    "                     methods' hot and cold parts, placed where the trace saw its code; a module's\n"
    "                     own file is read when it is here (checked: PDB signature)\n"
    "  --json             JSON output\n"
    "\n"
    "Exit status: 0 success, 1 bad input, 2 usage error.\n";

static int parse_query(const char *s, uint64_t *address, int64_t *time) {
    const char *at = strchr(s, '@');
    if (at == NULL || at == s || at[1] == '\0')
        return -1;
    char *end;
    errno = 0;
    *address = strtoull(s, &end, 0);
    if (errno || end != at)
        return -1;
    *time = strtoll(at + 1, &end, 10);
    return errno || *end ? -1 : 0;
}

static void json_str(const char *s) { json_string(stdout, s, strlen(s)); }

static const char *part_name(int part) { return part == MANTRA_SYM_HOT ? "hot" : part == MANTRA_SYM_COLD ? "cold" : NULL; }

static void print_query(const sym_trace *st, const char *q, uint64_t address, int64_t time, int json) {
    mantra_sym_result r;
    mantra_symbols_resolve(st->map, address, time, 0, &r);
    if (!json) {
        char text[1024];
        sym_frame_text(&r, address, 1, text, sizeof text);
        if (r.part && r.il_offset >= 0)
            printf("%s %s %s +0x%" PRIx64 " IL_%04" PRIx64 "\n", q, text, part_name(r.part), r.offset, (uint64_t)r.il_offset);
        else if (r.part)
            printf("%s %s %s +0x%" PRIx64 "\n", q, text, part_name(r.part), r.offset);
        else
            printf("%s unresolved\n", q);
        return;
    }
    printf("{\"address\":\"0x%" PRIx64 "\",\"timestamp\":%" PRId64 ",\"module\":", address, time);
    if (r.part == MANTRA_SYM_NONE) {
        fputs("null,\"method\":null,\"part\":null,\"il_offset\":null}\n", stdout);
        return;
    }
    json_str(r.module_path);
    fputs(",\"method\":", stdout);
    char name[1024];
    snprintf(name, sizeof name, "%s%s%s", r.method->name_space, r.method->name_space[0] ? "." : "", r.method->name);
    json_str(name);
    fputs(",\"signature\":", stdout);
    json_str(r.method->signature);
    printf(",\"token\":\"0x%08" PRIx32 "\",\"part\":\"%s\",\"offset\":%" PRIu64 ",\"il_offset\":", r.method->token,
           part_name(r.part), r.offset);
    if (r.il_offset >= 0) /* the runtime's NO_MAPPING, PROLOG and EPILOG (-1, -2, -3) as null */
        printf("%" PRId64 "}\n", r.il_offset);
    else
        fputs("null}\n", stdout);
}

typedef struct walk_state {
    int stacks;
    uint64_t samples, frames, resolved, cold, unresolved;
} walk_state;

/* The second pass: the samples counted, or (--stacks) every event with a stack printed. */
static int on_stack(void *ctx, const mantra_trace_event *ev, const mantra_sym_result *frames) {
    walk_state *w = ctx;
    if (frames == NULL)
        return 0;
    if (sym_is_sample(ev)) {
        w->samples++;
        w->frames += ev->stack_count;
        for (size_t i = 0; i < ev->stack_count; i++) {
            w->resolved += frames[i].part != MANTRA_SYM_NONE;
            w->cold += frames[i].part == MANTRA_SYM_COLD;
        }
    }
    if (!w->stacks)
        return 0;
    char text[1024];
    fputs("{\"provider\":", stdout);
    json_str(ev->metadata->provider);
    fputs(",\"name\":", stdout);
    json_str(ev->metadata->name ? ev->metadata->name : "");
    printf(",\"thread_id\":%" PRIu64 ",\"timestamp\":%" PRId64 ",\"frames\":[", ev->thread_id, ev->timestamp);
    for (size_t i = 0; i < ev->stack_count; i++) {
        sym_frame_text(&frames[i], mantra_trace_event_ip(ev, i), 1, text, sizeof text);
        if (i)
            fputc(',', stdout);
        json_str(text);
    }
    /* each frame's IL offset (null: no map; -1 no mapping, -2 prolog, -3 epilog) */
    fputs("],\"il\":[", stdout);
    for (size_t i = 0; i < ev->stack_count; i++) {
        if (i)
            fputc(',', stdout);
        if (frames[i].il_mapped)
            printf("%" PRId64, frames[i].il_offset);
        else
            fputs("null", stdout);
    }
    fputs("]}\n", stdout);
    return 0;
}

int cmd_symbolize(int argc, char **argv) {
    int json = 0, stacks = 0;
    const char *path = NULL;
    int nq = 0;
    const char **images = calloc((size_t)argc, sizeof *images);
    size_t nimages = 0;
    if (images == NULL) {
        fputs("mantra symbolize: out of memory\n", stderr);
        return TOOL_BAD_INPUT;
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            free(images);
            return TOOL_OK;
        }
        if (strcmp(argv[i], "--image") == 0) {
            if (i + 1 >= argc) {
                free(images);
                return tool_usage_error("symbolize", "%s", "--image needs a PATH");
            }
            images[nimages++] = argv[++i];
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--stacks") == 0) {
            stacks = 1;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            free(images);
            return tool_usage_error("symbolize", "unknown option '%s'", argv[i]);
        } else if (path == NULL) {
            path = argv[i];
        } else {
            uint64_t a;
            int64_t t;
            if (parse_query(argv[i], &a, &t) < 0) {
                free(images);
                return tool_usage_error("symbolize", "'%s' is not ADDRESS@TIMESTAMP", argv[i]);
            }
            nq++;
        }
    }
    if (path == NULL || (stacks && nq)) {
        free(images);
        if (path == NULL) {
            fputs(usage, stderr);
            return TOOL_USAGE;
        }
        return tool_usage_error("symbolize", "%s", "--stacks takes no addresses");
    }
    sym_trace st;
    int rc = sym_trace_build(&st, "symbolize", path, images, nimages);
    free(images);
    if (rc < 0) {
        if (rc == -2)
            fputs("mantra symbolize: out of memory\n", stderr);
        sym_trace_free(&st);
        return TOOL_BAD_INPUT;
    }
    fprintf(stderr,
            "mantra symbolize: %s: %" PRIu64 " events; %" PRIu64 " modules (%" PRIu64 " unloaded), %" PRIu64
            " method loads (%" PRIu64 " unloaded), %" PRIu64 " rundown methods, %" PRIu64 " ReadyToRun entry points (%" PRIu64
            " without a size), %" PRIu64 " IL maps; %" PRIu64 " events not decoded; %" PRIu64 " ReadyToRun images placed (%" PRIu64
            " methods: %zu gave cold parts to the trace's, %zu known from the image alone), %" PRIu64 " not placed\n",
            path, st.events, st.modules, st.module_unloads, st.methods, st.method_unloads, st.rundown_methods,
            st.r2r_entries, st.r2r_without_size, st.il_maps, st.bad, st.images_placed, st.image_methods, st.image_cold_given,
            st.image_alone, st.images_unplaced);
    int status = TOOL_OK;
    if (nq) {
        int after_path = 0;
        for (int i = 1; i < argc; i++) {
            if (strcmp(argv[i], "--image") == 0) {
                i++;
                continue;
            }
            if (argv[i][0] == '-' && argv[i][1] != '\0')
                continue;
            if (!after_path) {
                after_path = 1;
                continue;
            }
            uint64_t a;
            int64_t t;
            parse_query(argv[i], &a, &t);
            print_query(&st, argv[i], a, t, json);
        }
    } else {
        walk_state w = {stacks, 0, 0, 0, 0, 0};
        rc = sym_trace_walk(&st, stacks ? sym_has_stack : NULL, on_stack, &w);
        w.unresolved = w.frames - w.resolved;
        if (rc < 0)
            status = TOOL_BAD_INPUT;
        else if (!stacks && json)
            printf("{\"samples\":%" PRIu64 ",\"frames\":%" PRIu64 ",\"resolved\":%" PRIu64 ",\"cold\":%" PRIu64
                   ",\"unresolved\":%" PRIu64 "}\n",
                   w.samples, w.frames, w.resolved, w.cold, w.unresolved);
        else if (!stacks)
            printf("%" PRIu64 " samples, %" PRIu64 " frames: %" PRIu64 " resolved (%" PRIu64 " in cold parts), %" PRIu64
                   " unresolved\n",
                   w.samples, w.frames, w.resolved, w.cold, w.unresolved);
    }
    sym_trace_free(&st);
    if (fflush(stdout) != 0)
        status = TOOL_BAD_INPUT;
    return st.truncated && status == TOOL_OK ? TOOL_OK : status;
}
