/* sym_trace.c - building a trace's symbol map (sym_trace.h) from the runtime's events, read with the
 * generated readers (pgo_events.c): Microsoft-Windows-DotNETRuntime ModuleLoad (152) and
 * ModuleUnload (153), MethodLoadVerbose (143) and MethodUnloadVerbose (144), R2RGetEntryPoint (159:
 * mantra's version 1 carries the size; the .NET runtime's version 0 does not, so its methods are
 * known from the rundown only); Microsoft-Windows-DotNETRuntimeRundown ModuleDCStart/End (153, 154)
 * and MethodDCStart/EndVerbose (143, 144); the IL-to-native maps MethodILToNativeMap (190) and the
 * rundown's MethodDCStart/EndILToNativeMap (149, 150); mantra's R2RMethodLoad (1000) and its rundown
 * R2RMethodDCStart/End (1001, 1000) with cold parts. Event ids: ClrEtwAll.man, ../shared/reference/
 * clr-events.md. The rundown's methods take the meaning TraceLog gives them (mantra/symbols.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgo_tool.h"
#include "sym_trace.h"
#include "tool.h"

#define RUNTIME "Microsoft-Windows-DotNETRuntime"
#define RUNDOWN "Microsoft-Windows-DotNETRuntimeRundown"

/* Keeps a module's path and PDB signature for image placement (the first event that gives them). */
static int keep_module(sym_trace *st, const pgo_module_event *m) {
    for (size_t i = 0; i < st->nmods; i++)
        if (st->mods[i].id == m->module_id) {
            if (st->mods[i].path[0] == '\0' && m->il_path && m->il_path[0]) {
                char *p = pgo_strdup(m->il_path);
                if (p == NULL)
                    return -2;
                free(st->mods[i].path);
                st->mods[i].path = p;
            }
            return 0;
        }
    if (tool_grow((void **)&st->mods, &st->cap_mods, st->nmods + 1, sizeof *st->mods, 16) < 0)
        return -2;
    char *p = pgo_strdup(m->il_path ? m->il_path : "");
    if (p == NULL)
        return -2;
    st->mods[st->nmods++] = (sym_module){m->module_id, p, m->pdb_guid};
    return 0;
}

/* Keeps where a method's precompiled code began (image placement): rundown and R2R entries. */
static int keep_code(sym_trace *st, const pgo_method_event *e, int r2r_entry) {
    if (!r2r_entry && (e->flags & MANTRA_SYM_FLAG_JITTED))
        return 0;
    if (tool_grow((void **)&st->codes, &st->cap_codes, st->ncodes + 1, sizeof *st->codes, 256) < 0)
        return -2;
    sym_code c = {e->module_id, e->start, r2r_entry ? 0 : e->token, NULL, NULL};
    if (r2r_entry) {
        c.name_space = pgo_strdup(e->name_space);
        c.name = pgo_strdup(e->name);
        if (c.name_space == NULL || c.name == NULL) {
            free(c.name_space);
            free(c.name);
            return -2;
        }
    }
    st->codes[st->ncodes++] = c;
    return 0;
}

static int add_module(sym_trace *st, const mantra_trace_event *ev, int origin, int unload) {
    pgo_module_event m;
    const char *why = NULL;
    int rc = unload ? pgo_read_module_unload(ev, st->pointer_size, &m, &why)
                    : pgo_read_module(ev, st->pointer_size, origin != MANTRA_SYM_LOAD, &m, &why);
    if (rc == -1) {
        st->bad++;
        return 0;
    }
    if (rc == 0)
        rc = unload ? mantra_symbols_module_unload(st->map, ev->timestamp, m.module_id)
                    : mantra_symbols_module_load(st->map, ev->timestamp, origin, m.module_id, m.il_path);
    if (rc == 0 && !unload)
        rc = keep_module(st, &m);
    free(m.il_path);
    if (rc != 0)
        return -2;
    if (unload)
        st->module_unloads++;
    else
        st->modules++;
    return 0;
}

static int add_method(sym_trace *st, const mantra_trace_event *ev, int origin, int kind) {
    pgo_method_event e;
    const char *why = NULL;
    int rc = kind == 1   ? pgo_read_method_unload(ev, st->pointer_size, &e, &why)
             : kind == 2 ? pgo_read_r2r_entry(ev, st->pointer_size, &e, &why)
                         : pgo_read_method(ev, st->pointer_size, origin != MANTRA_SYM_LOAD, &e, &why);
    if (rc == -1) {
        st->bad++;
        return 0;
    }
    if (rc == 0 && kind == 1) {
        rc = mantra_symbols_method_unload(st->map, ev->timestamp, e.start);
        st->method_unloads++;
    } else if (rc == 0 && e.size == 0) {
        if (kind == 2) {
            st->r2r_without_size++;
            rc = keep_code(st, &e, 1);
        }
    } else if (rc == 0) {
        mantra_sym_method m = {e.module_id, e.method_id, e.token, e.flags, e.name_space, e.name, e.signature,
                               e.start, e.size, 0, 0};
        rc = mantra_symbols_method_load(st->map, ev->timestamp, origin, &m);
        if (rc == 0)
            rc = keep_code(st, &e, 0);
        if (kind == 2)
            st->r2r_entries++;
        else if (origin == MANTRA_SYM_LOAD)
            st->methods++;
        else
            st->rundown_methods++;
    }
    pgo_method_event_free(&e);
    return rc == 0 ? 0 : -2;
}

static int add_il_map(sym_trace *st, const mantra_trace_event *ev, int rundown) {
    pgo_il_map_event e;
    const char *why = NULL;
    if (pgo_read_il_map(ev, st->pointer_size, rundown, &e, &why) < 0) {
        st->bad++;
        return 0;
    }
    size_t n = e.il_offsets.count;
    uint32_t *native = malloc((n ? n : 1) * sizeof *native);
    int32_t *il = malloc((n ? n : 1) * sizeof *il);
    int rc = native && il ? 0 : -2;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        native[i] = mantra_array_u32(e.native_offsets, i);
        il[i] = (int32_t)mantra_array_u32(e.il_offsets, i);
    }
    if (rc == 0 && mantra_symbols_il_map(st->map, e.method_id, rundown, native, il, n) != MANTRA_OK)
        rc = -2;
    st->il_maps += rc == 0;
    free(native);
    free(il);
    return rc;
}

/* mantra's R2RMethodLoad / R2RMethodDCStart/End complete the method fact just before them with the
 * same MethodID (its R2RGetEntryPoint or MethodDCStart/EndVerbose): module, token, cold part. */
static int add_cold(sym_trace *st, const mantra_trace_event *ev, int which) {
    pgo_r2r_method_event e;
    const char *why = NULL;
    if (pgo_read_r2r_method(ev, st->pointer_size, which, &e, &why) < 0) {
        st->bad++;
        return 0;
    }
    st->r2r_methods++;
    int rc = mantra_symbols_method_r2r(st->map, e.method_id, e.module_id, e.token, e.cold_start, e.cold_size);
    if (rc == MANTRA_ENOENT) {
        st->cold_without_method++;
        return 0;
    }
    st->cold_parts += rc == MANTRA_OK && e.cold_size != 0;
    return rc == MANTRA_ENOMEM ? -2 : 0;
}

static int on_event(sym_trace *st, const mantra_trace_event *ev) {
    const char *prov = ev->metadata->provider;
    uint32_t id = ev->metadata->event_id;
    if (strcmp(prov, RUNTIME) == 0) {
        switch (id) {
        case 152: return add_module(st, ev, MANTRA_SYM_LOAD, 0);
        case 153: return add_module(st, ev, MANTRA_SYM_LOAD, 1);
        case 143: return add_method(st, ev, MANTRA_SYM_LOAD, 0);
        case 144: return add_method(st, ev, MANTRA_SYM_LOAD, 1);
        case 159: return add_method(st, ev, MANTRA_SYM_LOAD, 2);
        case 190: return add_il_map(st, ev, 0);
        case 1000: return add_cold(st, ev, 0);
        default: return 0;
        }
    }
    if (strcmp(prov, RUNDOWN) == 0) {
        switch (id) {
        case 153: return add_module(st, ev, MANTRA_SYM_START_RUNDOWN, 0);
        case 154: return add_module(st, ev, MANTRA_SYM_END_RUNDOWN, 0);
        case 143: return add_method(st, ev, MANTRA_SYM_START_RUNDOWN, 0);
        case 144: return add_method(st, ev, MANTRA_SYM_END_RUNDOWN, 0);
        case 149: case 150: return add_il_map(st, ev, 1);
        case 1001: return add_cold(st, ev, 1);
        case 1000: return add_cold(st, ev, 2);
        default: return 0;
        }
    }
    return 0;
}

int sym_trace_build(sym_trace *st, const char *cmd, const char *path, const char *const *images, size_t nimages) {
    memset(st, 0, sizeof *st);
    st->cmd = cmd;
    st->path = path;
    if (mantra_symbols_new(&st->map) != MANTRA_OK)
        return -2;
    mantra_reader *r = mantra_reader_new(NULL);
    if (r == NULL)
        return -2;
    int rc = mantra_reader_open_file(r, path);
    if (rc < 0) {
        fprintf(stderr, "mantra %s: %s: cannot read the trace: %s\n", cmd, path, mantra_reader_last_error(r));
        mantra_reader_free(r);
        return -1;
    }
    st->pointer_size = mantra_reader_info(r)->pointer_size == 4 ? 4 : 8;
    st->freq = mantra_reader_info(r)->qpc_frequency > 0 ? mantra_reader_info(r)->qpc_frequency : 1000000000;
    const mantra_trace_event *ev;
    int status = 0;
    while ((rc = mantra_reader_next(r, &ev)) > 0) {
        st->events++;
        if (on_event(st, ev) == -2) {
            status = -2;
            break;
        }
    }
    if (status == 0 && rc < 0) {
        fprintf(stderr, "mantra %s: %s: %s (%s): reading what came before\n", cmd, path,
                rc == MANTRA_ETRUNCATED ? "the trace is truncated" : "unreadable from here on", mantra_reader_last_error(r));
        st->truncated = 1;
    }
    mantra_reader_free(r);
    if (status == 0)
        status = sym_images_place(st, images, nimages);
    if (status == 0 && mantra_symbols_finish(st->map) != MANTRA_OK)
        status = -2;
    if (status == 0)
        mantra_symbols_image_counts(st->map, &st->image_cold_given, &st->image_alone);
    return status;
}

void sym_trace_free(sym_trace *st) {
    mantra_symbols_free(st->map);
    st->map = NULL;
    for (size_t i = 0; i < st->nmods; i++)
        free(st->mods[i].path);
    for (size_t i = 0; i < st->ncodes; i++) {
        free(st->codes[i].name_space);
        free(st->codes[i].name);
    }
    free(st->mods);
    free(st->codes);
    st->mods = NULL;
    st->codes = NULL;
    st->nmods = st->ncodes = 0;
}

int sym_trace_walk(const sym_trace *st, sym_resolve_fn resolve, sym_walk_fn fn, void *ctx) {
    mantra_reader *r = mantra_reader_new(NULL);
    if (r == NULL)
        return -2;
    if (mantra_reader_open_file(r, st->path) < 0) {
        fprintf(stderr, "mantra %s: %s: cannot read the trace: %s\n", st->cmd, st->path, mantra_reader_last_error(r));
        mantra_reader_free(r);
        return -1;
    }
    mantra_sym_result *frames = NULL;
    size_t cap = 0;
    const mantra_trace_event *ev;
    int rc = 0;
    while (rc == 0 && mantra_reader_next(r, &ev) > 0) {
        int resolved = ev->stack_count > 0 && (sym_is_sample(ev) || (resolve != NULL && resolve(ev)));
        if (resolved && tool_grow((void **)&frames, &cap, ev->stack_count, sizeof *frames, 64) < 0) {
            rc = -2;
            break;
        }
        for (size_t i = 0; resolved && i < ev->stack_count; i++)
            mantra_symbols_resolve(st->map, mantra_trace_event_ip(ev, i), ev->timestamp, i > 0, &frames[i]);
        rc = fn(ctx, ev, resolved ? frames : NULL);
    }
    free(frames);
    mantra_reader_free(r);
    return rc;
}

void sym_frame_text(const mantra_sym_result *r, uint64_t address, int cold_mark, char *buf, size_t size) {
    if (r->part == MANTRA_SYM_NONE) {
        snprintf(buf, size, "0x%" PRIx64, address);
        return;
    }
    const char *path = r->module_path, *base = path;
    for (const char *p = path; *p; p++)
        if (*p == '/' || *p == '\\')
            base = p + 1;
    /* TraceLog's short name: the file name without a .dll or .exe extension (others stay, as it
     * shows them: "a.img", "lib.so") */
    size_t blen = strlen(base);
    char ext[5] = "";
    for (size_t i = 0; blen > 4 && i < 4; i++)
        ext[i] = (char)(base[blen - 4 + i] | (i ? 0x20 : 0)); /* ASCII lower case */
    int exe = strcmp(ext, ".dll") == 0 || strcmp(ext, ".exe") == 0;
    int mlen = (int)(exe ? blen - 4 : blen);
    const char *params = strchr(r->method->signature, '(');
    /* a method whose module no event names: TraceLog's name for it */
    snprintf(buf, size, "%.*s!%s%s%s%s%s", mlen ? mlen : 13, mlen ? base : "ManagedModule", r->method->name_space,
             r->method->name_space[0] ? "." : "", r->method->name, cold_mark && r->part == MANTRA_SYM_COLD ? "[cold]" : "",
             params ? params : "");
}

int sym_is_sample(const mantra_trace_event *ev) {
    return ev->stack_count > 0 && strcmp(ev->metadata->provider, SYM_SAMPLE_PROVIDER) == 0;
}

int sym_has_stack(const mantra_trace_event *ev) {
    return ev->stack_count > 0;
}
