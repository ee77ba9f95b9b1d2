/* Helpers shared by the tests of the run-time manifest loader. */
#include "manifest/manifest_test_util.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *mt_source_path(const char *rel) {
    static char buf[4096];
    const char *root = getenv("MANTRA_SOURCE_DIR");
    snprintf(buf, sizeof buf, "%s/%s", root != NULL && root[0] ? root : ".", rel);
    return buf;
}

mantra_manifest *mt_load_file(const char *path) {
    mantra_manifest_error *err = NULL;
    mantra_manifest *m = mantra_manifest_load_file(path, &err);
    if (m == NULL) {
        char buf[2048];
        mantra_manifest_error_format(err, buf, sizeof buf);
        mantra_manifest_error_free(err);
        ck_abort_msg("%s does not load: %s", path, buf);
    }
    ck_assert_ptr_null(err);
    return m;
}

const char *mt_load_error(const char *text, const char *name) {
    static char buf[4096];
    mantra_manifest_error *err = NULL;
    mantra_manifest *m = mantra_manifest_load_memory(text, strlen(text), name, &err);
    if (m != NULL) {
        mantra_manifest_free(m);
        ck_abort_msg("expected an error from:\n%s", text);
    }
    ck_assert_ptr_nonnull(err);
    size_t n = mantra_manifest_error_format(err, buf, sizeof buf);
    ck_assert_uint_lt(n, sizeof buf);
    ck_assert_uint_eq(n, strlen(buf));
    if (mantra_manifest_error_note(err) != NULL)
        snprintf(buf + n, sizeof buf - n, "\n%s:%u:%u: note: %s", mantra_manifest_error_file(err),
                 mantra_manifest_error_line(err), mantra_manifest_error_column(err), mantra_manifest_error_note(err));
    mantra_manifest_error_free(err);
    return buf;
}

/* field := NAME ":" TYPE ["[" COUNT "]"] ["<" LENGTH ">"] ["=" MAP] ["/" OUT] ["@c"] ["{" field,... "}"]
 * (@c: a struct with layout c)
 * COUNT and LENGTH: a number, or the name of the field they refer to. */
static void put_ref(char *buf, size_t size, size_t *o, const mantra_manifest_field *list, uint8_t kind,
                    uint32_t value, const char *open, const char *close) {
    if (kind == MANTRA_MANIFEST_REF_FIXED)
        *o += (size_t)snprintf(buf + *o, size - *o, "%s%u%s", open, (unsigned)value, close);
    else if (kind == MANTRA_MANIFEST_REF_FIELD)
        *o += (size_t)snprintf(buf + *o, size - *o, "%s%s%s", open, list[value].name, close);
}

static void put_fields(char *buf, size_t size, size_t *o, const mantra_manifest_field *f, uint32_t n) {
    for (uint32_t i = 0; i < n && *o < size; i++) {
        *o += (size_t)snprintf(buf + *o, size - *o, "%s%s:%s", i ? ", " : "", f[i].name,
                               mantra_manifest_type_name(f[i].type));
        put_ref(buf, size, o, f, f[i].count_kind, f[i].count, "[", "]");
        put_ref(buf, size, o, f, f[i].length_kind, f[i].length, "<", ">");
        if (f[i].map != NULL && *o < size)
            *o += (size_t)snprintf(buf + *o, size - *o, "=%s", f[i].map->name);
        if (f[i].out_type != NULL && *o < size)
            *o += (size_t)snprintf(buf + *o, size - *o, "/%s", f[i].out_type);
        if (f[i].layout == MANTRA_MANIFEST_LAYOUT_C && *o < size)
            *o += (size_t)snprintf(buf + *o, size - *o, "@c");
        if (f[i].members != NULL && *o < size) {
            *o += (size_t)snprintf(buf + *o, size - *o, "{");
            put_fields(buf, size, o, f[i].members, f[i].member_count);
            if (*o < size)
                *o += (size_t)snprintf(buf + *o, size - *o, "}");
        }
    }
}

const char *mt_fields(const mantra_manifest_template *t) {
    static char buf[16384];
    size_t o = 0;
    buf[0] = '\0';
    if (t != NULL)
        put_fields(buf, sizeof buf, &o, t->fields, t->field_count);
    ck_assert_uint_lt(o, sizeof buf);
    return buf;
}

char *mt_describe_events(const mantra_manifest *m) {
    size_t cap = 1 << 20, o = 0;
    char *out = malloc(cap);
    ck_assert_ptr_nonnull(out);
    out[0] = '\0';
    for (uint32_t i = 0; i < mantra_manifest_provider_count(m); i++) {
        const mantra_manifest_provider *p = mantra_manifest_provider_at(m, i);
        for (uint32_t j = 0; j < p->event_count; j++) {
            const mantra_manifest_event *e = &p->events[j];
            char line[20000];
            int n = snprintf(line, sizeof line, "%s/%u/v%u %s %s level=%u keywords=0x%llx task=%u opcode=%u stack=%u tpl=%s: %s\n",
                             p->name, (unsigned)e->id, (unsigned)e->version, e->name, e->symbol, (unsigned)e->level,
                             (unsigned long long)e->keywords, (unsigned)e->task, (unsigned)e->opcode,
                             (unsigned)e->stack, e->tpl ? e->tpl->name : "-", mt_fields(e->tpl));
            ck_assert_int_lt(n, (int)sizeof line);
            while (o + (size_t)n + 1 > cap) {
                cap *= 2;
                out = realloc(out, cap);
                ck_assert_ptr_nonnull(out);
            }
            memcpy(out + o, line, (size_t)n + 1);
            o += (size_t)n;
        }
    }
    return out;
}
