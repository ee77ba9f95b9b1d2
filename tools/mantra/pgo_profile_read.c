/* `mantra pgo` inputs that are profiles rather than traces: the CLR's text format (what
 * DOTNET_WritePGOData and `mantra pgo` write) and mantra's JSON (`--format json`). Each method is added
 * to the profile and merged like a trace's (pgo_profile.c):
 *   JSON keeps a method's identity whole (module, PDB signature, token, names, signature, method type
 *     arguments), so it merges with the same method from a trace or a .mibc;
 *   text has only the MethodName and Signature lines (and the hashes, 0 in ours): its methods merge
 *     with text methods of the same lines only.
 * Handles come back by name: NULL is 0, UNKNOWN 1 (the runtime's unnamed handle), a named handle a
 * value of its own (PGO_NAMED_HANDLE) with its name. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"
#include "pgo_tool.h"
#include "tool.h"


/* ---- text -------------------------------------------------------------------------------------- */

static const char *after(const char *line, const char *prefix) {
    size_t n = strlen(prefix);
    return line && strncmp(line, prefix, n) == 0 ? line + n : (line ? line : "");
}

int pgo_read_text(pgo_profile *p, const char *path) {
    size_t size = 0;
    char *text = tool_read_file(path, &size);
    if (text == NULL) {
        pgo_errf("%s: cannot read the profile\n", path);
        return -1;
    }
    mantra_pgo_text *t = NULL;
    int rc = mantra_pgo_text_parse(text, size, path, &t);
    free(text);
    if (rc < 0) {
        pgo_errf("%s: %s\n", path, mantra_strerror(rc));
        return rc == MANTRA_ENOMEM ? -2 : -1;
    }
    for (size_t i = 0; mantra_pgo_text_error(t, i); i++)
        fprintf(stderr, "%s\n", mantra_pgo_text_error(t, i));
    int status = mantra_pgo_text_error_count(t) ? -1 : 0;
    pgo_strmap seen = {0}; /* lines -> how many methods of the file had them before */
    for (size_t i = 0; i < mantra_pgo_text_method_count(t); i++) {
        const mantra_pgo_text_entry *e = mantra_pgo_text_entry_at(t, i);
        pgo_method m;
        memset(&m, 0, sizeof m);
        size_t nv = e->data.value_count, nr = e->data.records;
        m.module = pgo_strdup("");
        m.module_path = pgo_strdup("");
        m.pdb_guid = pgo_strdup("");
        /* MethodName is CLASS.METHOD: split so that the writer gives the same line back (".ctor" and
         * ".cctor" keep their dot: "C..ctor" splits before it; else at the last dot) */
        const char *line = after(e->method_line, "MethodName: ");
        const char *dots = strstr(line, ".."), *dot = dots ? dots : strrchr(line, '.');
        m.name_space = dot ? pgo_strf("%.*s", (int)(dot - line), line) : pgo_strdup("");
        m.name = pgo_strdup(dot ? dot + 1 : line);
        m.signature = pgo_strdup(after(e->signature_line, "Signature: "));
        m.il_size = e->il_size;
        m.runs = 1;
        m.data.schema = malloc((nr ? nr : 1) * sizeof *m.data.schema);
        m.data.values = malloc((nv ? nv : 1) * sizeof *m.data.values);
        m.handle_names = calloc(nv ? nv : 1, sizeof *m.handle_names);
        int ok = m.module && m.module_path && m.pdb_guid && m.name_space && m.name && m.signature && m.data.schema &&
                 m.data.values && m.handle_names;
        if (ok) {
            memcpy(m.data.schema, e->data.schema, nr * sizeof *m.data.schema);
            memcpy(m.data.values, e->data.values, nv * sizeof *m.data.values);
            m.data.records = nr;
            m.data.value_count = nv;
            for (size_t v = 0; v < nv && ok; v++)
                if (e->handle_names[v]) {
                    ok = (m.handle_names[v] = pgo_strdup(e->handle_names[v])) != NULL;
                    m.data.values[v] = PGO_NAMED_HANDLE;
                    p->counts.handles++;
                }
        }
        /* the CLR keys a text method by its hashes; ours are 0, and a generic method's instantiations
         * share their lines: the k-th method of the file with the same lines is one identity */
        char *lines = ok ? pgo_strf("text|%08x|%08x|%s|%s", e->codehash, e->methodhash,
                                    e->method_line ? e->method_line : "", e->signature_line ? e->signature_line : "")
                         : NULL;
        size_t k = lines ? pgo_strmap_get(&seen, lines) : 0;
        k = k == (size_t)-1 ? 0 : k + 1;
        char *id = lines && pgo_strmap_put(&seen, lines, k) == 0 ? pgo_strf("%s|#%zu", lines, k) : NULL;
        free(lines);
        p->counts.methods_read++;
        if (id == NULL || pgo_profile_add(p, &m, id) < 0) {
            free(id);
            pgo_method_free(&m);
            mantra_pgo_text_free(t);
            pgo_strmap_free(&seen);
            return -2;
        }
        free(id);
    }
    mantra_pgo_text_free(t);
    pgo_strmap_free(&seen);
    p->counts.profiles++;
    return status;
}

/* ---- JSON -------------------------------------------------------------------------------------- */

typedef struct jctx {
    const char *path;
    size_t method, record; /* where, for messages */
    int in_record;
} jctx;

static int jfail(const jctx *c, const char *what) {
    if (c->in_record)
        pgo_errf("%s: methods[%zu].records[%zu]: %s\n", c->path, c->method, c->record, what);
    else
        pgo_errf("%s: methods[%zu]: %s\n", c->path, c->method, what);
    return -1;
}

static int jstring(const jctx *c, const jr_value *o, const char *key, char **out, int optional) {
    const jr_value *v = jr_get(o, key);
    if (v == NULL && optional) {
        *out = pgo_strdup("");
        return *out ? 0 : -2;
    }
    if (v == NULL || v->type != JR_STRING) {
        char msg[96];
        snprintf(msg, sizeof msg, "'%s' is not a string", key);
        return jfail(c, msg);
    }
    *out = pgo_strdup(v->str);
    return *out ? 0 : -2;
}

static int jint(const jctx *c, const jr_value *o, const char *key, int64_t min, int64_t max, int64_t *out,
                int64_t fallback) {
    const jr_value *v = jr_get(o, key);
    if (v == NULL && fallback != INT64_MIN) {
        *out = fallback;
        return 0;
    }
    if (jr_int64(v, out) < 0 || *out < min || *out > max) {
        char msg[128];
        snprintf(msg, sizeof msg, "'%s' is not an integer from %" PRId64 " to %" PRId64, key, min, max);
        return jfail(c, msg);
    }
    return 0;
}

static int json_record(jctx *c, const jr_value *rec, pgo_method *m, size_t *nv, pgo_counts *counts) {
    int64_t kind, il, count, other;
    if (rec->type != JR_OBJECT)
        return jfail(c, "not an object");
    if (jint(c, rec, "kind", INT32_MIN, INT32_MAX, &kind, INT64_MIN) < 0 ||
        jint(c, rec, "il_offset", INT32_MIN, INT32_MAX, &il, INT64_MIN) < 0 ||
        jint(c, rec, "count", 0, INT32_MAX, &count, INT64_MIN) < 0 ||
        jint(c, rec, "other", INT32_MIN, INT32_MAX, &other, INT64_MIN) < 0)
        return -1;
    mantra_pgo_schema s = {(int32_t)kind, (int32_t)il, (int32_t)count, (int32_t)other};
    if (!mantra_pgo_has_data(s.kind) && s.count > MANTRA_PGO_NONE_COUNT_MAX)
        return jfail(c, "a record without data with a Count above 65,536");
    mantra_pgo_schema *sch = realloc(m->data.schema, (m->data.records + 1) * sizeof *sch);
    if (sch == NULL)
        return -2;
    m->data.schema = sch;
    m->data.schema[m->data.records++] = s;
    if (!mantra_pgo_has_data(s.kind))
        return 0;
    const jr_value *values = jr_get(rec, "values");
    if (values == NULL || values->type != JR_ARRAY || values->count != (size_t)count)
        return jfail(c, "'values' is not an array of 'count' elements");
    int64_t *vals = realloc(m->data.values, (*nv + (size_t)count + 1) * sizeof *vals);
    char **names = realloc(m->handle_names, (*nv + (size_t)count + 1) * sizeof *names);
    if (vals)
        m->data.values = vals;
    if (names)
        m->handle_names = names;
    if (vals == NULL || names == NULL)
        return -2;
    int elem = s.kind & MANTRA_PGO_MARSHAL_MASK;
    for (size_t k = 0; k < (size_t)count; k++) {
        const jr_value *v = values->items[k];
        int64_t x = 0;
        m->handle_names[*nv] = NULL;
        if (elem == MANTRA_PGO_TypeHandle || elem == MANTRA_PGO_MethodHandle) {
            if (v->type != JR_STRING)
                return jfail(c, "a handle value that is not a string");
            if (strcmp(v->str, "NULL") == 0) {
                x = 0;
            } else if (strcmp(v->str, "UNKNOWN") == 0) {
                x = MANTRA_PGO_UNKNOWN_HANDLE_MIN;
            } else {
                x = PGO_NAMED_HANDLE;
                if ((m->handle_names[*nv] = pgo_strdup(v->str)) == NULL)
                    return -2;
                counts->handles++;
            }
        } else if (jr_int64(v, &x) < 0 || (elem == MANTRA_PGO_FourByte && (x < 0 || x > (int64_t)UINT32_MAX))) {
            return jfail(c, elem == MANTRA_PGO_FourByte ? "a FourByte value that is not an unsigned 32-bit integer"
                                                        : "an EightByte value that is not an unsigned 64-bit integer");
        } else if (elem == MANTRA_PGO_FourByte) {
            x = (int32_t)(uint32_t)x; /* as the runtime's serializer sees a FourByte slot */
        }
        m->data.values[(*nv)++] = x;
    }
    m->data.value_count = *nv;
    return 0;
}

static int json_method(jctx *c, const jr_value *o, pgo_profile *p) {
    pgo_method m;
    memset(&m, 0, sizeof m);
    int64_t token, il_size, runs;
    int rc = 0;
    if (o->type != JR_OBJECT)
        return jfail(c, "not an object");
    if ((rc = jstring(c, o, "module", &m.module, 0)) < 0 || (rc = jstring(c, o, "module_path", &m.module_path, 1)) < 0 ||
        (rc = jstring(c, o, "pdb_guid", &m.pdb_guid, 1)) < 0 || (rc = jstring(c, o, "namespace", &m.name_space, 0)) < 0 ||
        (rc = jstring(c, o, "name", &m.name, 0)) < 0 || (rc = jstring(c, o, "signature", &m.signature, 0)) < 0 ||
        (rc = jint(c, o, "token", 0, UINT32_MAX, &token, INT64_MIN)) < 0 ||
        (rc = jint(c, o, "il_size", 0, UINT32_MAX, &il_size, 0)) < 0 || (rc = jint(c, o, "runs", 1, UINT32_MAX, &runs, 1)) < 0)
        goto out;
    m.token = (uint32_t)token;
    m.il_size = (uint32_t)il_size;
    m.runs = (unsigned)runs;
    const jr_value *type = jr_get(o, "type"), *args = jr_get(o, "method_args"), *recs = jr_get(o, "records");
    if (type && type->type == JR_STRING && (m.owner_type = pgo_strdup(type->str)) == NULL) {
        rc = -2;
        goto out;
    }
    if (args && args->type == JR_ARRAY && args->count) {
        if ((m.method_args = calloc(args->count, sizeof *m.method_args)) == NULL) {
            rc = -2;
            goto out;
        }
        for (size_t i = 0; i < args->count; i++) {
            if (args->items[i]->type != JR_STRING) {
                rc = jfail(c, "'method_args' holds something else than strings");
                goto out;
            }
            if ((m.method_args[m.nmethod_args++] = pgo_strdup(args->items[i]->str)) == NULL) {
                rc = -2;
                goto out;
            }
        }
    }
    if (recs == NULL || recs->type != JR_ARRAY) {
        rc = jfail(c, "'records' is not an array");
        goto out;
    }
    if ((m.data.schema = calloc(1, sizeof *m.data.schema)) == NULL) {
        rc = -2;
        goto out;
    }
    size_t nv = 0;
    c->in_record = 1;
    for (size_t r = 0; r < recs->count && rc == 0; r++) {
        c->record = r;
        rc = json_record(c, recs->items[r], &m, &nv, &p->counts);
    }
    c->in_record = 0;
    if (rc < 0)
        goto out;
    char *id = pgo_method_identity(&m);
    p->counts.methods_read++;
    if (id == NULL || pgo_profile_add(p, &m, id) < 0)
        rc = -2;
    free(id);
    return rc;
out:
    pgo_method_free(&m);
    return rc;
}

int pgo_read_json(pgo_profile *p, const char *path) {
    size_t size = 0;
    char *text = tool_read_file(path, &size);
    if (text == NULL) {
        pgo_errf("%s: cannot read the profile\n", path);
        return -1;
    }
    char why[160];
    jr_value *doc = jr_parse(text, size, why, sizeof why);
    free(text);
    if (doc == NULL) {
        pgo_errf("%s: not JSON: %s\n", path, why);
        return -1;
    }
    const jr_value *methods = jr_get(doc, "methods");
    int rc = 0;
    if (methods == NULL || methods->type != JR_ARRAY) {
        pgo_errf("%s: no \"methods\" array: not a profile of `mantra pgo --format json`\n", path);
        rc = -1;
    }
    jctx c = {path, 0, 0, 0};
    for (size_t i = 0; rc == 0 && i < methods->count; i++) {
        c.method = i;
        rc = json_method(&c, methods->items[i], p);
    }
    jr_free(doc);
    if (rc == 0)
        p->counts.profiles++;
    return rc;
}
