/* The YAML manifest loader (docs/manifest.md, "YAML spelling"), built on libyaml.
 *
 * It mirrors generator/mantra_gen/load_yaml.py (shape, keys, scalar conversion, messages) and the
 * parts of validate.py that a decoder or a lookup relies on. The input is composed into a libyaml
 * document (nodes with start marks), walked once, and the compact form is built directly in the
 * manifest's arena; temporaries (name tables) live in a scratch arena freed at the end. The first
 * problem found stops the load (longjmp back to the entry point; everything allocated so far is in
 * the two arenas and the libyaml document, all freed there).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest/manifest-internal.h"

int mantra_manifest_supported(void) {
#if defined(MANTRA_HAVE_LIBYAML)
    return 1;
#else
    return 0;
#endif
}

/* ---- reading the input -------------------------------------------------------------------------- */

static mantra_manifest *load_bytes(const uint8_t *data, size_t size, const char *name, mantra_manifest_error **err);

mantra_manifest *mantra_manifest_load_file(const char *path, mantra_manifest_error **err) {
    if (err != NULL)
        *err = NULL;
    FILE *f = fopen(path, "rb");
    char msg[512];
    if (f == NULL) {
        snprintf(msg, sizeof msg, "cannot read the file: %s", strerror(errno));
        if (err != NULL)
            *err = mf_error_new(path, 1, 1, msg, NULL);
        return NULL;
    }
    size_t cap = 65536, len = 0;
    uint8_t *buf = malloc(cap);
    int failed = buf == NULL;
    while (!failed) {
        if (len == cap) {
            uint8_t *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
            if (nb == NULL) {
                failed = 1;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0) {
            if (ferror(f)) {
                snprintf(msg, sizeof msg, "cannot read the file: %s", strerror(errno ? errno : EIO));
                free(buf);
                fclose(f);
                if (err != NULL)
                    *err = mf_error_new(path, 1, 1, msg, NULL);
                return NULL;
            }
            break;
        }
    }
    fclose(f);
    if (failed) {
        free(buf);
        if (err != NULL)
            *err = mf_error_new(path, 1, 1, "out of memory", NULL);
        return NULL;
    }
    mantra_manifest *m = load_bytes(buf, len, path, err);
    free(buf);
    return m;
}

mantra_manifest *mantra_manifest_load_memory(const void *data, size_t size, const char *name,
                                             mantra_manifest_error **err) {
    if (err != NULL)
        *err = NULL;
    if (data == NULL && size != 0) {
        if (err != NULL)
            *err = mf_error_new(name, 1, 1, "no input", NULL);
        return NULL;
    }
    return load_bytes(data != NULL ? data : "", size, name != NULL ? name : "<memory>", err);
}

#if !defined(MANTRA_HAVE_LIBYAML)

static mantra_manifest *load_bytes(const uint8_t *data, size_t size, const char *name, mantra_manifest_error **err) {
    (void)data;
    (void)size;
    if (err != NULL)
        *err = mf_error_new(name, 1, 1, "libmantra was built without libyaml: manifests cannot be loaded",
                            "install libyaml (pkg-config yaml-0.1) and rebuild");
    return NULL;
}

#else /* MANTRA_HAVE_LIBYAML */

#include <setjmp.h>
#include <stdarg.h>
#include <yaml.h>

/* ---- the loader state ------------------------------------------------------------------------------ */

typedef struct mf_names mf_names;

typedef struct L {
    const char *file;
    yaml_document_t *doc;
    mantra_manifest *m;
    cm_arena *arena;   /* the manifest's */
    cm_arena scratch;  /* freed at the end */
    jmp_buf jump;
    int oom;
    unsigned line, column;
    char message[1024];
    char note[1024];
    int has_note;
} L;

#if defined(__GNUC__)
#define MF_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define MF_NORETURN __attribute__((noreturn))
#else
#define MF_PRINTF(f, a)
#define MF_NORETURN
#endif

static void MF_NORETURN fail_v(L *l, unsigned line, unsigned col, const char *note, const char *fmt, va_list ap) {
    l->line = line;
    l->column = col;
    vsnprintf(l->message, sizeof l->message, fmt, ap);
    l->has_note = note != NULL;
    if (note != NULL)
        snprintf(l->note, sizeof l->note, "%s", note);
    longjmp(l->jump, 1);
}

static void MF_NORETURN MF_PRINTF(5, 6) fail_at(L *l, unsigned line, unsigned col, const char *note, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fail_v(l, line, col, note, fmt, ap);
}

static unsigned node_line(const yaml_node_t *n) { return (unsigned)n->start_mark.line + 1; }
static unsigned node_col(const yaml_node_t *n) { return (unsigned)n->start_mark.column + 1; }

static void MF_NORETURN MF_PRINTF(4, 5) fail(L *l, const yaml_node_t *at, const char *note, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fail_v(l, node_line(at), node_col(at), note, fmt, ap);
}

static void MF_NORETURN fail_oom(L *l) {
    l->oom = 1;
    longjmp(l->jump, 1);
}

static void *alloc(L *l, size_t n, size_t size) {
    if (size != 0 && n > SIZE_MAX / size)
        fail_oom(l);
    void *p = cm_arena_alloc(l->arena, n * size);
    if (p == NULL)
        fail_oom(l);
    return p;
}

static void *scratch(L *l, size_t n, size_t size) {
    if (size != 0 && n > SIZE_MAX / size)
        fail_oom(l);
    void *p = cm_arena_alloc(&l->scratch, n * size);
    if (p == NULL)
        fail_oom(l);
    return p;
}

static const char *keep(L *l, const char *s) {
    char *p = cm_arena_strdup(l->arena, s, strlen(s));
    if (p == NULL)
        fail_oom(l);
    return p;
}

/* ---- name tables (open addressing, in the scratch arena) ---------------------------------------------- */

struct mf_names {
    const char **names;
    const void **items;
    size_t cap; /* power of two */
    size_t count;
};

static uint64_t hash_name(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void names_init(L *l, mf_names *t, size_t expected) {
    size_t cap = 8;
    while (cap < expected * 2 + 1)
        cap *= 2;
    t->names = scratch(l, cap, sizeof *t->names);
    t->items = scratch(l, cap, sizeof *t->items);
    t->cap = cap;
    t->count = 0;
}

static const void *names_get(const mf_names *t, const char *name) {
    if (t->cap == 0)
        return NULL;
    for (size_t i = (size_t)hash_name(name) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        if (t->names[i] == NULL)
            return NULL;
        if (strcmp(t->names[i], name) == 0)
            return t->items[i];
    }
}

/* Adds name -> item unless present; returns the item already there, or NULL when added. */
static const void *names_add(L *l, mf_names *t, const char *name, const void *item) {
    if ((t->count + 1) * 2 > t->cap) {
        mf_names bigger;
        names_init(l, &bigger, t->count + 1);
        for (size_t i = 0; i < t->cap; i++)
            if (t->names[i] != NULL)
                names_add(l, &bigger, t->names[i], t->items[i]);
        *t = bigger;
    }
    size_t i = (size_t)hash_name(name) & (t->cap - 1);
    for (; t->names[i] != NULL; i = (i + 1) & (t->cap - 1))
        if (strcmp(t->names[i], name) == 0)
            return t->items[i];
    t->names[i] = name;
    t->items[i] = item;
    t->count++;
    return NULL;
}

/* ---- node helpers ------------------------------------------------------------------------------------ */

#define NULL_TAG "tag:yaml.org,2002:null"
#define MERGE_TAG "tag:yaml.org,2002:merge"

static yaml_node_t *node_at(L *l, int index) {
    yaml_node_t *n = yaml_document_get_node(l->doc, index);
    if (n == NULL) /* cannot happen with a document libyaml built */
        fail_at(l, 1, 1, NULL, "internal error: dangling YAML node");
    return n;
}

static const char *svalue(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

static int is_plain_default(const yaml_node_t *n) {
    const char *tag = (const char *)n->tag;
    return n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
           (tag == NULL || strcmp(tag, YAML_DEFAULT_SCALAR_TAG) == 0 || strcmp(tag, NULL_TAG) == 0);
}

static int is_null(const yaml_node_t *n) {
    if (n->type != YAML_SCALAR_NODE || !is_plain_default(n))
        return 0;
    const char *v = svalue(n);
    return n->data.scalar.length == strlen(v) &&
           (strcmp(v, "") == 0 || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 || strcmp(v, "Null") == 0 ||
            strcmp(v, "NULL") == 0);
}

/* describe(): "a mapping", "a sequence", "nothing", "null" or the quoted text (at most 40 characters). */
static const char *describe(const yaml_node_t *n, char *buf, size_t size) {
    if (n->type == YAML_MAPPING_NODE)
        return "a mapping";
    if (n->type == YAML_SEQUENCE_NODE)
        return "a sequence";
    if (is_null(n))
        return svalue(n)[0] == '\0' ? "nothing" : "null";
    const unsigned char *s = n->data.scalar.value;
    size_t len = n->data.scalar.length, chars = 0, cut = len;
    for (size_t i = 0; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            if (chars == 37)
                cut = i;
            chars++;
        }
    }
    int truncate = chars > 40;
    size_t end = truncate ? cut : len, o = 0;
    buf[o++] = '\'';
    for (size_t i = 0; i < end && o + 8 < size; i++) {
        if (s[i] == '\n') {
            buf[o++] = '\\';
            buf[o++] = 'n';
        } else {
            buf[o++] = (char)s[i];
        }
    }
    if (truncate && o + 8 < size) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o++] = '\'';
    buf[o] = '\0';
    return buf;
}

#define DESCRIBE(n) describe((n), dbuf_, sizeof dbuf_)

/* ---- mappings ---------------------------------------------------------------------------------------- */

#define MAX_KEYS 12

typedef struct pairs {
    yaml_node_t *key[MAX_KEYS];
    yaml_node_t *val[MAX_KEYS];
} pairs;

enum { K_NAME = 0 };

static const char *const MANIFEST_KEYS[] = {"providers", "pgo_kinds", NULL};
static const char *const PROVIDER_KEYS[] = {"name",    "guid",  "prefix", "symbol", "message", "keywords",
                                            "opcodes", "tasks", "maps",   "templates", "events", NULL};
static const char *const KEYWORD_KEYS[] = {"name", "mask", "symbol", "message", NULL};
static const char *const OPCODE_KEYS[] = {"name", "value", "symbol", "message", NULL};
static const char *const TASK_KEYS[] = {"name", "value", "symbol", "guid", "message", "opcodes", NULL};
static const char *const MAP_KEYS[] = {"name", "kind", "entries", NULL};
static const char *const ENTRY_KEYS[] = {"value", "message", NULL};
static const char *const TEMPLATE_KEYS[] = {"name", "fields", NULL};
static const char *const FIELD_KEYS[] = {"name", "type", "out", "map", "length", "count", "fields", NULL};
static const char *const EVENT_KEYS[] = {"name", "id",       "version", "level",  "keywords", "task",
                                         "opcode", "template", "fields", "symbol", "stack",   "message", NULL};
static const char *const PGO_KEYS[] = {"name", "value", "size", NULL};

/* Index of key k in keys (for readable code below). */
static size_t key_index(const char *const *keys, const char *k) {
    for (size_t i = 0; keys[i] != NULL; i++)
        if (strcmp(keys[i], k) == 0)
            return i;
    return MAX_KEYS; /* never: callers use their own keys */
}

static int mark_before(unsigned la, unsigned ca, unsigned lb, unsigned cb) { return la < lb || (la == lb && ca < cb); }

/* Checks the shape and keys of a mapping and fills p; `required`: bit i = keys[i] is required. */
static void mapping(L *l, yaml_node_t *node, const char *what, const char *const *keys, unsigned required, pairs *p) {
    char dbuf_[256];
    memset(p, 0, sizeof *p);
    if (node->type != YAML_MAPPING_NODE)
        fail(l, node, NULL, "expected a mapping for %s, got %s", what, DESCRIBE(node));
    /* Keys come in document order: the first key problem is the earliest one, unless a required key
     * is missing (reported at the mapping's start, which comes first). */
    for (yaml_node_pair_t *pr = node->data.mapping.pairs.start; pr < node->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = node_at(l, pr->key), *v = node_at(l, pr->value);
        const char *problem = NULL;
        char msg[600], note[600];
        note[0] = '\0';
        if (k->type != YAML_SCALAR_NODE) {
            snprintf(msg, sizeof msg, "expected a string key in %s, got %s", what, DESCRIBE(k));
            problem = msg;
        } else if (strcmp(svalue(k), "<<") == 0 && k->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
            snprintf(msg, sizeof msg, "merge key '<<' is not supported in %s", what);
            problem = msg;
        } else {
            size_t i = 0;
            while (keys[i] != NULL && strcmp(keys[i], svalue(k)) != 0)
                i++;
            if (keys[i] == NULL) {
                snprintf(msg, sizeof msg, "unknown key '%.200s' in %s", svalue(k), what);
                size_t o = (size_t)snprintf(note, sizeof note, "valid keys: ");
                for (size_t j = 0; keys[j] != NULL && o < sizeof note; j++)
                    o += (size_t)snprintf(note + o, sizeof note - o, "%s%s", j ? ", " : "", keys[j]);
                problem = msg;
            } else if (p->key[i] != NULL) {
                snprintf(msg, sizeof msg, "duplicate key '%s' in %s", keys[i], what);
                snprintf(note, sizeof note, "first given at line %u", node_line(p->key[i]));
                problem = msg;
            } else {
                p->key[i] = k;
                p->val[i] = v;
            }
        }
        if (problem != NULL) {
            /* a missing key is located at the mapping's start, before any key problem */
            for (size_t i = 0; keys[i] != NULL; i++) {
                if (!(required >> i & 1u))
                    continue;
                int present = 0;
                for (yaml_node_pair_t *q = node->data.mapping.pairs.start; q < node->data.mapping.pairs.top; q++) {
                    yaml_node_t *qk = node_at(l, q->key);
                    if (qk->type == YAML_SCALAR_NODE && strcmp(svalue(qk), keys[i]) == 0)
                        present = 1;
                }
                if (!present && mark_before(node_line(node), node_col(node), node_line(k), node_col(k)))
                    fail(l, node, NULL, "missing key '%s' in %s", keys[i], what);
            }
            fail(l, k, note[0] ? note : NULL, "%s", problem);
        }
    }
    for (size_t i = 0; keys[i] != NULL; i++)
        if ((required >> i & 1u) && p->key[i] == NULL)
            fail(l, node, NULL, "missing key '%s' in %s", keys[i], what);
}

/* A present value that is not null (an optional key given as `key:` or `key: ~` means the default). */
static yaml_node_t *given(const pairs *p, size_t i) {
    if (p->val[i] == NULL || is_null(p->val[i]))
        return NULL;
    return p->val[i];
}

/* The items of a sequence value (absent or null: none). */
static yaml_node_item_t *sequence(L *l, const pairs *p, size_t i, const char *key, size_t *count) {
    char dbuf_[256];
    *count = 0;
    yaml_node_t *n = p->val[i];
    if (n == NULL || is_null(n))
        return NULL;
    if (n->type != YAML_SEQUENCE_NODE)
        fail(l, n, NULL, "expected a sequence for '%s', got %s", key, DESCRIBE(n));
    *count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    return n->data.sequence.items.start;
}

/* ---- scalar converters ---------------------------------------------------------------------------------- */

static const char *scalar(L *l, yaml_node_t *n, const char *key, const char *kind) {
    char dbuf_[256];
    if (n->type != YAML_SCALAR_NODE || is_null(n))
        fail(l, n, NULL, "expected %s for '%s', got %s", kind, key, DESCRIBE(n));
    return svalue(n);
}

static const char *string(L *l, yaml_node_t *n, const char *key) { return scalar(l, n, key, "a string"); }

/* An integer as written: [-+]?(0x[0-9a-f]+|[0-9]+) after stripping white space. */
typedef struct mf_int {
    int neg;
    int big;       /* magnitude does not fit 64 bits */
    uint64_t mag;
    char text[48]; /* decimal text of the value (as Python prints it), or the input when big */
} mf_int;

static int is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

static int parse_int(const char *s, size_t len, mf_int *out) {
    size_t a = 0, b = len;
    while (a < b && is_space((unsigned char)s[a]))
        a++;
    while (b > a && is_space((unsigned char)s[b - 1]))
        b--;
    memset(out, 0, sizeof *out);
    size_t i = a;
    if (i < b && (s[i] == '-' || s[i] == '+')) {
        out->neg = s[i] == '-';
        i++;
    }
    unsigned base = 10;
    if (b - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
        base = 16;
        i += 2;
    }
    if (i >= b)
        return -1;
    for (; i < b; i++) {
        unsigned d;
        char c = s[i];
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (base == 16 && c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else if (base == 16 && c >= 'A' && c <= 'F')
            d = (unsigned)(c - 'A' + 10);
        else
            return -1;
        if (out->mag > (UINT64_MAX - d) / base)
            out->big = 1;
        out->mag = out->mag * base + d;
    }
    if (out->mag == 0)
        out->neg = 0;
    if (out->big)
        snprintf(out->text, sizeof out->text, "%.*s", (int)(b - a < 40 ? b - a : 40), s + a);
    else
        snprintf(out->text, sizeof out->text, "%s%llu", out->neg ? "-" : "", (unsigned long long)out->mag);
    return 0;
}

static mf_int integer(L *l, yaml_node_t *n, const char *key) {
    char dbuf_[256];
    mf_int v;
    if (n->type != YAML_SCALAR_NODE || is_null(n) || parse_int(svalue(n), n->data.scalar.length, &v) != 0)
        fail(l, n, NULL, "expected an integer for '%s', got %s", key, DESCRIBE(n));
    return v;
}

/* hex(value) as Python prints it (for non-negative values), else decimal. */
static void hex_text(const mf_int *v, char *out, size_t size) {
    if (v->neg || v->big)
        snprintf(out, size, "%s", v->text);
    else
        snprintf(out, size, "0x%llx", (unsigned long long)v->mag);
}

/* validate.in_range(): "{what} {value} of {owner} is out of range {lo}..{hi}". */
static uint64_t in_range(L *l, const mf_int *v, const char *what, const char *owner, uint64_t hi, unsigned line,
                         unsigned col, const char *note) {
    if (!v->neg && !v->big && v->mag <= hi)
        return v->mag;
    char shown[32];
    if (hi >= 0xFFFFFFFFu)
        snprintf(shown, sizeof shown, "0x%llx", (unsigned long long)hi);
    else
        snprintf(shown, sizeof shown, "%llu", (unsigned long long)hi);
    fail_at(l, line, col, note, "%s %s of %s is out of range 0..%s", what, v->text, owner, shown);
}

static int boolean(L *l, yaml_node_t *n, const char *key) {
    static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", NULL};
    static const char *const no[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", NULL};
    char dbuf_[256];
    if (n->type == YAML_SCALAR_NODE) {
        for (size_t i = 0; yes[i]; i++)
            if (strcmp(svalue(n), yes[i]) == 0)
                return 1;
        for (size_t i = 0; no[i]; i++)
            if (strcmp(svalue(n), no[i]) == 0)
                return 0;
    }
    fail(l, n, NULL, "expected true or false for '%s', got %s", key, DESCRIBE(n));
}

static const char *const LEVEL_NAMES[] = {"LogAlways", "Critical", "Error", "Warning", "Informational", "Verbose"};
#define LEVEL_HINT                                                                                                  \
    "valid levels: LogAlways, Critical, Error, Warning, Informational, Verbose (with or without 'win:'), or a "    \
    "number 0..5"

static uint8_t level(L *l, yaml_node_t *n, const char *key) {
    const char *text = scalar(l, n, key, "a level");
    const char *bare = strncmp(text, "win:", 4) == 0 ? text + 4 : text;
    for (uint8_t i = 0; i < 6; i++)
        if (strcmp(bare, LEVEL_NAMES[i]) == 0)
            return i;
    mf_int v;
    if (parse_int(text, n->data.scalar.length, &v) != 0)
        fail(l, n, LEVEL_HINT, "unknown level '%s'", text);
    if (v.neg || v.big || v.mag > 5)
        fail(l, n, LEVEL_HINT, "level %s is out of range 0..5", v.text);
    return (uint8_t)v.mag;
}

static const char *const TYPE_NAMES[] = {NULL,     "Int8",    "UInt8",    "Int16",         "UInt16",     "Int32",
                                         "UInt32", "Int64",   "UInt64",   "Float",         "Double",     "Boolean",
                                         "GUID",   "Pointer", "FILETIME", "UnicodeString", "AnsiString", "Binary",
                                         "struct"};
static const uint8_t TYPE_SIZES[] = {0, 1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 4, 16, 0, 8, 0, 0, 0, 0};
#define TYPE_HINT                                                                                                  \
    "valid types: Int8, UInt8, Int16, UInt16, Int32, UInt32, Int64, UInt64, Float, Double, Boolean, GUID, "        \
    "Pointer, FILETIME, UnicodeString, AnsiString, Binary, struct (scalar types also with 'win:')"

static uint8_t field_type(L *l, yaml_node_t *n, const char *key) {
    const char *text = scalar(l, n, key, "a field type");
    for (uint8_t i = 1; i <= MANTRA_MANIFEST_TYPE_STRUCT; i++) {
        if (strcmp(text, TYPE_NAMES[i]) == 0)
            return i;
        if (i != MANTRA_MANIFEST_TYPE_STRUCT && strncmp(text, "win:", 4) == 0 && strcmp(text + 4, TYPE_NAMES[i]) == 0)
            return i;
    }
    fail(l, n, TYPE_HINT, "unknown field type '%s'", text);
}

static int is_integer_type(uint8_t t) { return t >= MANTRA_MANIFEST_TYPE_INT8 && t <= MANTRA_MANIFEST_TYPE_UINT64; }

/* A GUID value as the Python loader keeps it: stripped, without braces, lower case. */
static const char *guid_text(L *l, yaml_node_t *n, const char *key) {
    const char *text = scalar(l, n, key, "a GUID");
    size_t a = 0, b = strlen(text);
    while (a < b && is_space((unsigned char)text[a]))
        a++;
    while (b > a && is_space((unsigned char)text[b - 1]))
        b--;
    if (b - a >= 2 && text[a] == '{' && text[b - 1] == '}') {
        a++;
        b--;
    }
    char *out = scratch(l, b - a + 1, 1);
    for (size_t i = a; i < b; i++)
        out[i - a] = (char)(text[i] >= 'A' && text[i] <= 'Z' ? text[i] - 'A' + 'a' : text[i]);
    return out;
}

#define GUID_HINT "write xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx (hexadecimal digits)"

static void check_guid(L *l, const char *text, const char *owner_kind, const char *owner, yaml_node_t *at,
                       mantra_guid *out) {
    mantra_guid g;
    if (strlen(text) != 36 || mantra_manifest_guid_parse(text, &g) != 0)
        fail(l, at, GUID_HINT, "invalid GUID '%s' of %s '%s'", text, owner_kind, owner);
    if (out != NULL)
        *out = g;
}

/* `count` / `length`: a number or a field name. */
typedef struct size_ref {
    int given;
    int is_name;
    const char *name;
    mf_int num;
} size_ref;

static size_ref size_ref_of(L *l, yaml_node_t *n, const char *key) {
    size_ref r;
    memset(&r, 0, sizeof r);
    const char *text = scalar(l, n, key, "a number or a field name");
    r.given = 1;
    if (parse_int(text, n->data.scalar.length, &r.num) != 0) {
        r.is_name = 1;
        r.name = text;
    } else if (strcmp(key, "count") == 0 && !r.num.neg && !r.num.big && r.num.mag == 1) {
        r.given = 0; /* count 1 is no count (the model normalises it away) */
    }
    return r;
}

/* ---- model nodes -------------------------------------------------------------------------------------- */

typedef struct prov_ctx {
    mantra_manifest_provider *p;
    mf_names keywords, tasks, popcodes, maps, templates;
    const struct task_def *task_defs;
    size_t task_count;
} prov_ctx;

static const char *first_line(unsigned line, char *buf, size_t size) {
    snprintf(buf, size, "first defined at line %u", line);
    return buf;
}

static void keywords(L *l, prov_ctx *c, const pairs *pp) {
    size_t n;
    yaml_node_item_t *items = sequence(l, pp, key_index(PROVIDER_KEYS, "keywords"), "keywords", &n);
    mantra_manifest_keyword *out = alloc(l, n ? n : 1, sizeof *out);
    yaml_node_t **where = scratch(l, n ? n : 1, sizeof *where);
    names_init(l, &c->keywords, n);
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *node = node_at(l, items[i]);
        pairs p;
        mapping(l, node, "keyword", KEYWORD_KEYS, 0x3, &p);
        const char *name = string(l, p.val[0], "name");
        mf_int mask = integer(l, p.val[1], "mask");
        if (given(&p, 2))
            string(l, p.val[2], "symbol");
        if (given(&p, 3))
            string(l, p.val[3], "message");
        const mantra_manifest_keyword *first = names_add(l, &c->keywords, name, &out[i]);
        where[i] = node;
        if (first != NULL) {
            char nb[64];
            size_t j = (size_t)(first - out);
            fail(l, node, first_line(node_line(where[j]), nb, sizeof nb), "keyword '%s' is defined twice", name);
        }
        if (mask.neg || mask.big || mask.mag == 0 || (mask.mag & (mask.mag - 1)) != 0) {
            char hx[64];
            hex_text(&mask, hx, sizeof hx);
            fail(l, node, "a keyword mask is one of the 64 bits 0x1 .. 0x8000000000000000",
                 "mask %s of keyword '%s' is not a single bit", hx, name);
        }
        for (size_t j = 0; j < i; j++) {
            if (out[j].mask == mask.mag) {
                char hx[64], nb[64];
                hex_text(&mask, hx, sizeof hx);
                fail(l, node, first_line(node_line(where[j]), nb, sizeof nb),
                     "keyword '%s' reuses the mask %s of keyword '%s'", name, hx, out[j].name);
            }
        }
        out[i].name = keep(l, name);
        out[i].mask = mask.mag;
    }
    c->p->keywords = out;
    c->p->keyword_count = (uint32_t)n;
}

typedef struct opcode_def {
    const char *name;
    uint8_t value;
} opcode_def;

/* Opcode definitions (of a task or of the provider) into a name table (items: opcode_def). */
static void opcodes(L *l, yaml_node_item_t *items, size_t n, mf_names *table, const char *where) {
    opcode_def *defs = scratch(l, n ? n : 1, sizeof *defs);
    yaml_node_t **nodes = scratch(l, n ? n : 1, sizeof *nodes);
    names_init(l, table, n);
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *node = node_at(l, items[i]);
        pairs p;
        mapping(l, node, "opcode", OPCODE_KEYS, 0x3, &p);
        const char *name = string(l, p.val[0], "name");
        mf_int value = integer(l, p.val[1], "value");
        if (given(&p, 2))
            string(l, p.val[2], "symbol");
        if (given(&p, 3))
            string(l, p.val[3], "message");
        nodes[i] = node;
        const opcode_def *first = names_add(l, table, name, &defs[i]);
        if (first != NULL) {
            char nb[64];
            fail(l, node, first_line(node_line(nodes[first - defs]), nb, sizeof nb), "opcode '%s' is defined twice%s",
                 name, where);
        }
        char owner[300];
        snprintf(owner, sizeof owner, "opcode '%.280s'", name);
        defs[i].name = keep(l, name);
        defs[i].value = (uint8_t)in_range(l, &value, "value", owner, 0xFF, node_line(node), node_col(node), NULL);
    }
}

typedef struct task_def {
    const char *name;
    uint16_t value;
    mf_names opcodes;
} task_def;

static void tasks(L *l, prov_ctx *c, const pairs *pp) {
    size_t n;
    yaml_node_item_t *items = sequence(l, pp, key_index(PROVIDER_KEYS, "tasks"), "tasks", &n);
    task_def *defs = scratch(l, n ? n : 1, sizeof *defs);
    yaml_node_t **nodes = scratch(l, n ? n : 1, sizeof *nodes);
    names_init(l, &c->tasks, n);
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *node = node_at(l, items[i]);
        pairs p;
        mapping(l, node, "task", TASK_KEYS, 0x3, &p);
        const char *name = string(l, p.val[0], "name");
        mf_int value = integer(l, p.val[1], "value");
        if (given(&p, 2))
            string(l, p.val[2], "symbol");
        const char *guid = given(&p, 3) ? guid_text(l, p.val[3], "guid") : NULL;
        if (given(&p, 4))
            string(l, p.val[4], "message");
        nodes[i] = node;
        const task_def *first = names_add(l, &c->tasks, name, &defs[i]);
        if (first != NULL) {
            char nb[64];
            fail(l, node, first_line(node_line(nodes[first - defs]), nb, sizeof nb), "task '%s' is defined twice", name);
        }
        char owner[300];
        snprintf(owner, sizeof owner, "task '%.280s'", name);
        defs[i].name = keep(l, name);
        defs[i].value = (uint16_t)in_range(l, &value, "value", owner, 0xFFFF, node_line(node), node_col(node), NULL);
        if (guid != NULL)
            check_guid(l, guid, "task", name, node, NULL);
        size_t on;
        yaml_node_item_t *oitems = sequence(l, &p, 5, "opcodes", &on);
        char where[300];
        snprintf(where, sizeof where, " in task '%.280s'", name);
        opcodes(l, oitems, on, &defs[i].opcodes, where);
    }
    c->task_defs = defs;
    c->task_count = n;
}

static int cmp_entry(const void *a, const void *b) {
    const mantra_manifest_map_entry *x = a, *y = b;
    return x->value < y->value ? -1 : x->value > y->value;
}

static void maps(L *l, prov_ctx *c, const pairs *pp) {
    size_t n;
    yaml_node_item_t *items = sequence(l, pp, key_index(PROVIDER_KEYS, "maps"), "maps", &n);
    mantra_manifest_map *out = alloc(l, n ? n : 1, sizeof *out);
    yaml_node_t **nodes = scratch(l, n ? n : 1, sizeof *nodes);
    names_init(l, &c->maps, n);
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *node = node_at(l, items[i]);
        pairs p;
        mapping(l, node, "map", MAP_KEYS, 0x3, &p);
        const char *name = string(l, p.val[0], "name");
        const char *kind = scalar(l, p.val[1], "kind", "a map kind");
        if (strcmp(kind, "value") != 0 && strcmp(kind, "bitmap") != 0)
            fail(l, p.val[1], "valid kinds: value, bitmap", "unknown map kind '%s'", kind);
        size_t en;
        yaml_node_item_t *eitems = sequence(l, &p, 2, "entries", &en);
        mantra_manifest_map_entry *entries = alloc(l, en ? en : 1, sizeof *entries);
        yaml_node_t **enodes = scratch(l, en ? en : 1, sizeof *enodes);
        mf_int *values = scratch(l, en ? en : 1, sizeof *values);
        for (size_t j = 0; j < en; j++) {
            yaml_node_t *enode = node_at(l, eitems[j]);
            pairs ep;
            mapping(l, enode, "map entry", ENTRY_KEYS, 0x3, &ep);
            values[j] = integer(l, ep.val[0], "value");
            entries[j].message = keep(l, string(l, ep.val[1], "message"));
            enodes[j] = enode;
        }
        nodes[i] = node;
        const mantra_manifest_map *first = names_add(l, &c->maps, name, &out[i]);
        if (first != NULL) {
            char nb[64];
            fail(l, node, first_line(node_line(nodes[first - out]), nb, sizeof nb), "map '%s' is defined twice", name);
        }
        char owner[300];
        snprintf(owner, sizeof owner, "map '%.280s'", name);
        for (size_t j = 0; j < en; j++) {
            entries[j].value = in_range(l, &values[j], "value", owner, UINT64_MAX, node_line(enodes[j]),
                                        node_col(enodes[j]), NULL);
            for (size_t k = 0; k < j; k++) {
                if (entries[k].value == entries[j].value) {
                    char nb[64], hx[64];
                    hex_text(&values[j], hx, sizeof hx);
                    fail(l, enodes[j], first_line(node_line(enodes[k]), nb, sizeof nb),
                         "map '%s' defines value %s twice", name, hx);
                }
            }
        }
        qsort(entries, en, sizeof *entries, cmp_entry);
        out[i].name = keep(l, name);
        out[i].entries = entries;
        out[i].entry_count = (uint32_t)en;
        out[i].is_bitmap = strcmp(kind, "bitmap") == 0;
    }
    c->p->maps = out;
    c->p->map_count = (uint32_t)n;
}

/* ---- fields --------------------------------------------------------------------------------------------- */

typedef struct field_src {
    yaml_node_t *node;
    yaml_node_t *members; /* struct members (a sequence, null or NULL) */
    size_ref count, length;
    const char *map;
} field_src;

static void fields(L *l, prov_ctx *c, yaml_node_item_t *items, size_t n, const char *where,
                   const mantra_manifest_field *parent, const mantra_manifest_field *outer, size_t outer_n,
                   mantra_manifest_field **out_fields, uint16_t *slot_count, uint16_t *struct_slots);

/* The reference of field list[i] by its count or length (validate.reference); fills *kind, *value
 * and gives the named field a slot. `outer`: the template's fields when list are a struct's members. */
static void reference(L *l, const char *what, const size_ref *r, mantra_manifest_field *list, size_t n, size_t i,
                      yaml_node_t *node, const mantra_manifest_field *outer, size_t outer_n, uint8_t *kind,
                      uint32_t *value, uint16_t *slots) {
    mantra_manifest_field *f = &list[i];
    if (!r->given)
        return;
    if (!r->is_name) {
        if (r->num.neg || r->num.mag < 1) {
            char note[64];
            snprintf(note, sizeof note, "a fixed %s is at least 1", what);
            fail(l, node, note, "%s %s of field '%s' is out of range", what, r->num.text, f->name);
        }
        *kind = MANTRA_MANIFEST_REF_FIXED;
        *value = r->num.big || r->num.mag > UINT32_MAX ? UINT32_MAX : (uint32_t)r->num.mag;
        return;
    }
    char note[300];
    const char *hint = NULL;
    size_t j = i;
    while (j > 0 && strcmp(list[j - 1].name, r->name) != 0)
        j--;
    if (j > 0) {
        mantra_manifest_field *t = &list[j - 1];
        if (is_integer_type(t->type) && t->count_kind == MANTRA_MANIFEST_REF_NONE) {
            if (t->slot == MANTRA_MANIFEST_NO_SLOT) {
                if (*slots >= MANTRA_MANIFEST_MAX_SLOTS)
                    fail(l, node, NULL, "more than %u fields of one template or struct give a count or length",
                         MANTRA_MANIFEST_MAX_SLOTS);
                t->slot = (*slots)++;
            }
            *kind = MANTRA_MANIFEST_REF_FIELD;
            *value = (uint32_t)(j - 1);
            return;
        }
        if (is_integer_type(t->type))
            snprintf(note, sizeof note, "'%.200s' is an array", r->name);
        else
            snprintf(note, sizeof note, "'%.200s' has type '%s'", r->name, TYPE_NAMES[t->type]);
        hint = note;
    } else {
        int later = 0, in_outer = 0;
        for (size_t k = i; k < n; k++)
            later |= strcmp(list[k].name, r->name) == 0;
        for (size_t k = 0; k < outer_n; k++)
            in_outer |= strcmp(outer[k].name, r->name) == 0;
        if (later) {
            if (strcmp(r->name, f->name) != 0) {
                snprintf(note, sizeof note, "'%.140s' comes after '%.140s'", r->name, f->name);
                hint = note;
            }
        } else if (in_outer) {
            snprintf(note, sizeof note, "a struct member's %s must name a member of the same struct", what);
            hint = note;
        }
    }
    fail(l, node, hint, "%s '%s' of field '%s' does not name an earlier integer field", what, r->name, f->name);
}

/* Bytes of a payload known without its arguments (validate.fixed_size), saturating. */
static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
static uint64_t sat_mul(uint64_t a, uint64_t b) { return (a != 0 && b > UINT64_MAX / a) ? UINT64_MAX : a * b; }

static uint64_t fixed_size(const mantra_manifest_field *f, size_t n) {
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t elem = f[i].type == MANTRA_MANIFEST_TYPE_POINTER ? 8 : TYPE_SIZES[f[i].type];
        if (f[i].type == MANTRA_MANIFEST_TYPE_BINARY)
            elem = f[i].length_kind == MANTRA_MANIFEST_REF_FIXED ? f[i].length : 0;
        if (f[i].type == MANTRA_MANIFEST_TYPE_STRUCT)
            elem = fixed_size(f[i].members, f[i].member_count);
        uint64_t count = f[i].count_kind == MANTRA_MANIFEST_REF_FIXED ? f[i].count
                         : f[i].count_kind == MANTRA_MANIFEST_REF_FIELD ? 0
                                                                         : 1;
        total = sat_add(total, sat_mul(elem, count));
    }
    return total;
}

static void fields(L *l, prov_ctx *c, yaml_node_item_t *items, size_t n, const char *where,
                   const mantra_manifest_field *parent, const mantra_manifest_field *outer, size_t outer_n,
                   mantra_manifest_field **out_fields, uint16_t *slot_count, uint16_t *struct_slots) {
    mantra_manifest_field *out = alloc(l, n ? n : 1, sizeof *out);
    field_src *src = scratch(l, n ? n : 1, sizeof *src);
    mf_names seen;
    names_init(l, &seen, n);
    *slot_count = 0;
    /* pass 1: shape and scalar values of every field (Python: the loader) */
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *node = node_at(l, items[i]);
        pairs p;
        mapping(l, node, "field", FIELD_KEYS, 0x3, &p);
        mantra_manifest_field *f = &out[i];
        field_src *s = &src[i];
        s->node = node;
        f->name = keep(l, string(l, p.val[0], "name"));
        f->type = field_type(l, p.val[1], "type");
        if (given(&p, 2))
            f->out_type = keep(l, string(l, p.val[2], "out"));
        if (given(&p, 3))
            s->map = string(l, p.val[3], "map");
        if (given(&p, 4))
            s->length = size_ref_of(l, p.val[4], "length");
        if (given(&p, 5))
            s->count = size_ref_of(l, p.val[5], "count");
        if (p.key[6] != NULL && f->type != MANTRA_MANIFEST_TYPE_STRUCT) {
            char note[300];
            snprintf(note, sizeof note, "field '%.200s' has type '%s'", f->name, TYPE_NAMES[f->type]);
            fail(l, p.key[6], note, "only a struct field can have 'fields'");
        }
        f->line = node_line(node);
        f->column = node_col(node);
        f->size = TYPE_SIZES[f->type];
        f->slot = MANTRA_MANIFEST_NO_SLOT;
        if (f->type == MANTRA_MANIFEST_TYPE_STRUCT) {
            if (parent != NULL)
                fail(l, node, "a struct cannot contain structs", "struct '%s' is nested in struct '%s'", f->name,
                     parent->name);
            size_t mn;
            sequence(l, &p, 6, "fields", &mn); /* a sequence (or nothing); members are built below */
            s->members = p.val[6];
        }
    }
    /* pass 2: the rules of validate.fields, field by field */
    for (size_t i = 0; i < n; i++) {
        mantra_manifest_field *f = &out[i];
        field_src *s = &src[i];
        const mantra_manifest_field *first = names_add(l, &seen, f->name, f);
        if (first != NULL) {
            char nb[64];
            fail(l, s->node, first_line(first->line, nb, sizeof nb), "field '%s' is defined twice%s", f->name, where);
        }
        if (f->type == MANTRA_MANIFEST_TYPE_STRUCT) {
            if (!s->count.given)
                fail(l, s->node, "a struct is an array: give it a count (an earlier integer field or a number)",
                     "struct '%s' has no count", f->name);
            size_t mn = 0;
            yaml_node_item_t *mitems = NULL;
            if (s->members != NULL && s->members->type == YAML_SEQUENCE_NODE) {
                mn = (size_t)(s->members->data.sequence.items.top - s->members->data.sequence.items.start);
                mitems = s->members->data.sequence.items.start;
            }
            if (mn == 0)
                fail(l, s->node, NULL, "struct '%s' has no fields", f->name);
            char swhere[300];
            snprintf(swhere, sizeof swhere, " in struct '%.280s'", f->name);
            mantra_manifest_field *members;
            uint16_t mslots, unused;
            fields(l, c, mitems, mn, swhere, f, out, n, &members, &mslots, &unused);
            f->members = members;
            f->member_count = (uint32_t)mn;
            if (mslots > *struct_slots)
                *struct_slots = mslots;
        }
        int array_ok = f->type != MANTRA_MANIFEST_TYPE_UNICODE_STRING && f->type != MANTRA_MANIFEST_TYPE_ANSI_STRING &&
                       f->type != MANTRA_MANIFEST_TYPE_BINARY;
        int count_given = s->count.given;
        if (s->length.given && count_given)
            fail(l, s->node, NULL, "field '%s' has both a count and a length", f->name);
        else if (count_given && !array_ok)
            fail(l, s->node, "arrays of strings and of Binary cannot be written", "field '%s' of type '%s' cannot have a count",
                 f->name, TYPE_NAMES[f->type]);
        else if (s->length.given && f->type != MANTRA_MANIFEST_TYPE_BINARY)
            fail(l, s->node, "only Binary fields take a length", "field '%s' of type '%s' cannot have a length", f->name,
                 TYPE_NAMES[f->type]);
        else if (f->type == MANTRA_MANIFEST_TYPE_BINARY && !s->length.given)
            fail(l, s->node, "give it a length: an earlier integer field or a number",
                 "field '%s' of type 'Binary' has no length", f->name);
        reference(l, "length", &s->length, out, n, i, s->node, outer, outer_n, &f->length_kind, &f->length,
                  slot_count);
        reference(l, "count", &s->count, out, n, i, s->node, outer, outer_n, &f->count_kind, &f->count, slot_count);
        if (s->map != NULL) {
            const mantra_manifest_map *mp = names_get(&c->maps, s->map);
            if (mp == NULL)
                fail(l, s->node, NULL, "undefined map '%s'", s->map);
            if (!is_integer_type(f->type))
                fail(l, s->node, "maps apply to integer fields", "field '%s' of type '%s' cannot have a map", f->name,
                     TYPE_NAMES[f->type]);
            f->map = mp;
        }
    }
    *out_fields = out;
}

static void template_of(L *l, prov_ctx *c, mantra_manifest_template *t, const char *name, yaml_node_t *fields_node,
                        yaml_node_t *at) {
    size_t n = 0;
    yaml_node_item_t *items = NULL;
    char dbuf_[256];
    if (fields_node != NULL && !is_null(fields_node)) {
        if (fields_node->type != YAML_SEQUENCE_NODE)
            fail(l, fields_node, NULL, "expected a sequence for 'fields', got %s", DESCRIBE(fields_node));
        n = (size_t)(fields_node->data.sequence.items.top - fields_node->data.sequence.items.start);
        items = fields_node->data.sequence.items.start;
    }
    char where[300];
    snprintf(where, sizeof where, " in template '%.280s'", name);
    mantra_manifest_field *f;
    fields(l, c, items, n, where, NULL, NULL, 0, &f, &t->slot_count, &t->struct_slot_count);
    t->name = keep(l, name);
    t->fields = f;
    t->field_count = (uint32_t)n;
    t->line = node_line(at);
    t->column = node_col(at);
}

static const char *const STANDARD_OPCODES[] = {"win:Info",   "win:Start",  "win:Stop",    "win:DC_Start",
                                               "win:DC_Stop", "win:Extension", "win:Reply", "win:Resume",
                                               "win:Suspend", "win:Send",   "win:Receive"};
static const uint8_t STANDARD_OPCODE_VALUES[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 240};

static int cmp_event_key(const void *a, const void *b) {
    const mantra_manifest_event *x = *(const mantra_manifest_event *const *)a;
    const mantra_manifest_event *y = *(const mantra_manifest_event *const *)b;
    uint64_t kx = (uint64_t)x->id << 8 | x->version, ky = (uint64_t)y->id << 8 | y->version;
    if (kx != ky)
        return kx < ky ? -1 : 1;
    return x < y ? -1 : x > y; /* manifest order among duplicates */
}

static void provider(L *l, yaml_node_t *node, mantra_manifest_provider *out, mf_names *by_name, mf_names *by_guid,
                     yaml_node_t **provider_nodes, size_t index) {
    pairs pp;
    mapping(l, node, "provider", PROVIDER_KEYS, 0x1, &pp);
    prov_ctx cx;
    memset(&cx, 0, sizeof cx);
    cx.p = out;
    const char *name = string(l, pp.val[0], "name");
    const char *guid = given(&pp, 1) ? guid_text(l, pp.val[1], "guid") : NULL;
    for (size_t i = 2; i <= 4; i++)
        if (given(&pp, i))
            string(l, pp.val[i], PROVIDER_KEYS[i]);
    out->name = keep(l, name);
    const mantra_manifest_provider *dup = names_add(l, by_name, out->name, out);
    if (dup != NULL) {
        char nb[64];
        fail(l, node, first_line(node_line(provider_nodes[(size_t)(dup - (out - index))]), nb, sizeof nb),
             "provider '%s' is defined twice", name);
    }
    if (guid != NULL) {
        check_guid(l, guid, "provider", name, node, &out->guid);
    } else {
        if (mantra_manifest_eventsource_guid(name, &out->guid) != 0)
            fail(l, node, NULL, "provider name '%s' is not valid UTF-8", name);
        out->guid_derived = 1;
    }
    char gtext[37];
    mantra_manifest_guid_format(&out->guid, gtext);
    char *gkey = scratch(l, 37, 1);
    memcpy(gkey, gtext, 37);
    const mantra_manifest_provider *gdup = names_add(l, by_guid, gkey, out);
    if (gdup != NULL) {
        char nb[64];
        fail(l, node, first_line(node_line(provider_nodes[(size_t)(gdup - (out - index))]), nb, sizeof nb),
             "provider '%s' reuses the GUID '%s' of provider '%s'", name, gtext, gdup->name);
    }

    keywords(l, &cx, &pp);
    tasks(l, &cx, &pp);
    {
        size_t n;
        yaml_node_item_t *items = sequence(l, &pp, key_index(PROVIDER_KEYS, "opcodes"), "opcodes", &n);
        opcodes(l, items, n, &cx.popcodes, "");
    }
    maps(l, &cx, &pp);

    /* templates: the named ones, then one per event with inline fields */
    size_t tn, en;
    yaml_node_item_t *titems = sequence(l, &pp, key_index(PROVIDER_KEYS, "templates"), "templates", &tn);
    yaml_node_item_t *eitems = sequence(l, &pp, key_index(PROVIDER_KEYS, "events"), "events", &en);
    size_t inline_n = 0;
    for (size_t i = 0; i < en; i++) {
        yaml_node_t *e = node_at(l, eitems[i]);
        if (e->type != YAML_MAPPING_NODE)
            continue;
        for (yaml_node_pair_t *pr = e->data.mapping.pairs.start; pr < e->data.mapping.pairs.top; pr++) {
            yaml_node_t *k = node_at(l, pr->key);
            if (k->type == YAML_SCALAR_NODE && strcmp(svalue(k), "fields") == 0 && !is_null(node_at(l, pr->value))) {
                inline_n++;
                break;
            }
        }
    }
    mantra_manifest_template *tpls = alloc(l, tn + inline_n ? tn + inline_n : 1, sizeof *tpls);
    yaml_node_t **tnodes = scratch(l, tn ? tn : 1, sizeof *tnodes);
    names_init(l, &cx.templates, tn + inline_n);
    for (size_t i = 0; i < tn; i++) {
        yaml_node_t *tnode = node_at(l, titems[i]);
        pairs tp;
        mapping(l, tnode, "template", TEMPLATE_KEYS, 0x1, &tp);
        const char *tname = string(l, tp.val[0], "name");
        tnodes[i] = tnode;
        const mantra_manifest_template *first = names_add(l, &cx.templates, tname, &tpls[i]);
        if (first != NULL) {
            char nb[64];
            fail(l, tnode, first_line(node_line(tnodes[first - tpls]), nb, sizeof nb), "template '%s' is defined twice",
                 tname);
        }
        template_of(l, &cx, &tpls[i], tname, tp.val[1], tnode);
    }
    size_t tcount = tn;

    /* events */
    mantra_manifest_event *events = alloc(l, en ? en : 1, sizeof *events);
    uint8_t *used = scratch(l, tn + inline_n ? tn + inline_n : 1, 1);
    const char **tnames = scratch(l, en ? en : 1, sizeof *tnames);
    for (size_t i = 0; i < en; i++) {
        yaml_node_t *enode = node_at(l, eitems[i]);
        mantra_manifest_event *e = &events[i];
        pairs p;
        mapping(l, enode, "event", EVENT_KEYS, 0x3, &p);
        e->provider = out;
        e->line = node_line(enode);
        e->column = node_col(enode);
        const char *ename = string(l, p.val[0], "name");
        mf_int id = integer(l, p.val[1], "id");
        mf_int version;
        memset(&version, 0, sizeof version);
        snprintf(version.text, sizeof version.text, "0");
        if (given(&p, 2))
            version = integer(l, p.val[2], "version");
        e->level = MANTRA_LEVEL_INFORMATIONAL;
        if (given(&p, 3))
            e->level = level(l, p.val[3], "level");
        yaml_node_t *kw = given(&p, 4);
        if (kw != NULL) {
            char dbuf_[256];
            if (kw->type != YAML_SEQUENCE_NODE)
                fail(l, kw, NULL, "expected a sequence for 'keywords', got %s", DESCRIBE(kw));
            for (yaml_node_item_t *it = kw->data.sequence.items.start; it < kw->data.sequence.items.top; it++) {
                yaml_node_t *k = node_at(l, *it);
                if (k->type != YAML_SCALAR_NODE || is_null(k))
                    fail(l, k, NULL, "expected a name in 'keywords', got %s", DESCRIBE(k));
            }
        }
        const char *task = given(&p, 5) ? string(l, p.val[5], "task") : NULL;
        const char *opcode = given(&p, 6) ? string(l, p.val[6], "opcode") : NULL;
        const char *tname = given(&p, 7) ? string(l, p.val[7], "template") : NULL;
        const char *symbol = given(&p, 9) ? string(l, p.val[9], "symbol") : NULL;
        e->stack = 1;
        if (given(&p, 10))
            e->stack = (uint8_t)boolean(l, p.val[10], "stack");
        if (given(&p, 11))
            string(l, p.val[11], "message");
        int inline_fields = given(&p, 8) != NULL;
        e->name = keep(l, ename);
        /* the symbol: given, or name plus _V<version> when version > 0 */
        if (symbol != NULL) {
            e->symbol = keep(l, symbol);
        } else if (!version.neg && !version.big && version.mag > 0) {
            char sym[600];
            snprintf(sym, sizeof sym, "%.500s_V%s", ename, version.text);
            e->symbol = keep(l, sym);
        } else {
            e->symbol = e->name;
        }
        if (inline_fields) {
            if (p.key[7] != NULL)
                fail(l, p.key[8], NULL, "an event cannot have both 'fields' and 'template'");
            if (names_get(&cx.templates, e->symbol) != NULL)
                fail(l, p.key[8], NULL, "inline fields would create template '%s', which already exists", e->symbol);
            mantra_manifest_template *t = &tpls[tcount];
            names_add(l, &cx.templates, e->symbol, t);
            template_of(l, &cx, t, e->symbol, p.val[8], p.key[8]);
            e->tpl = t;
            used[tcount] = 1;
            tcount++;
        }
        /* validate.events */
        char owner[300];
        snprintf(owner, sizeof owner, "event '%.280s'", ename);
        e->id = (uint32_t)in_range(l, &id, "id", owner, 0xFFFF, e->line, e->column, NULL);
        e->version = (uint8_t)in_range(l, &version, "version", owner, 0xFF, e->line, e->column, NULL);
        for (size_t j = 0; j < i; j++) {
            if (events[j].id == e->id && events[j].version == e->version) {
                char nb[64];
                first_line(events[j].line, nb, sizeof nb);
                if (strcmp(events[j].name, e->name) == 0)
                    fail(l, enode, nb, "event '%s' (id %u, version %u) is defined twice", ename, (unsigned)e->id,
                         (unsigned)e->version);
                fail(l, enode, nb, "event '%s' (id %u, version %u) reuses the id and version of event '%s'", ename,
                     (unsigned)e->id, (unsigned)e->version, events[j].name);
            }
        }
        if (kw != NULL) {
            for (yaml_node_item_t *it = kw->data.sequence.items.start; it < kw->data.sequence.items.top; it++) {
                const char *kname = svalue(node_at(l, *it));
                const mantra_manifest_keyword *k = names_get(&cx.keywords, kname);
                if (k == NULL)
                    fail(l, enode, NULL, "undefined keyword '%s'", kname);
                e->keywords |= k->mask;
            }
        }
        const task_def *td = NULL;
        if (task != NULL) {
            td = names_get(&cx.tasks, task);
            if (td == NULL)
                fail(l, enode, NULL, "undefined task '%s'", task);
            e->task = td->value;
            e->task_name = td->name;
        }
        if (opcode != NULL) {
            const opcode_def *od = td != NULL ? names_get(&td->opcodes, opcode) : NULL;
            if (od == NULL)
                od = names_get(&cx.popcodes, opcode);
            if (od != NULL) {
                e->opcode = od->value;
                e->opcode_name = od->name;
            } else {
                size_t s = 0;
                while (s < sizeof STANDARD_OPCODES / sizeof STANDARD_OPCODES[0] && strcmp(STANDARD_OPCODES[s], opcode) != 0)
                    s++;
                if (s == sizeof STANDARD_OPCODES / sizeof STANDARD_OPCODES[0]) {
                    /* an opcode of another task? */
                    char note[600];
                    const char *hint = NULL;
                    for (size_t ti = 0; ti < cx.task_count && hint == NULL; ti++) {
                        const task_def *other = &cx.task_defs[ti];
                        if (names_get(&other->opcodes, opcode) != NULL) {
                            snprintf(note, sizeof note,
                                     "opcode '%.200s' belongs to task '%.200s'; an event can use its own task's "
                                     "opcodes, provider opcodes and win: opcodes",
                                     opcode, other->name);
                            hint = note;
                        }
                    }
                    fail(l, enode, hint, "undefined opcode '%s'", opcode);
                }
                e->opcode = STANDARD_OPCODE_VALUES[s];
                e->opcode_name = STANDARD_OPCODES[s];
            }
        }
        tnames[i] = tname;
    }
    /* template references (an inline template may be named by another event, as in the model) */
    for (size_t i = 0; i < en; i++) {
        if (tnames[i] == NULL)
            continue;
        const mantra_manifest_template *t = names_get(&cx.templates, tnames[i]);
        if (t == NULL)
            fail_at(l, events[i].line, events[i].column, NULL, "undefined template '%s'", tnames[i]);
        events[i].tpl = t;
        used[t - tpls] = 1;
    }
    /* the fixed part of a used template fits an event */
    for (size_t i = 0; i < tcount; i++) {
        if (!used[i])
            continue;
        uint64_t size = fixed_size(tpls[i].fields, tpls[i].field_count);
        if (size > 0xFFFF)
            fail_at(l, tpls[i].line, tpls[i].column, "an event payload must stay below 64 KiB",
                    "template '%s' has %llu bytes of fixed payload, more than 65535", tpls[i].name,
                    (unsigned long long)size);
    }
    const mantra_manifest_event **sorted = alloc(l, en ? en : 1, sizeof *sorted);
    for (size_t i = 0; i < en; i++)
        sorted[i] = &events[i];
    qsort(sorted, en, sizeof *sorted, cmp_event_key);
    out->templates = tpls;
    out->template_count = (uint32_t)tcount;
    out->events = events;
    out->event_count = (uint32_t)en;
    out->events_by_key = sorted;
}

static void pgo_kinds(L *l, const pairs *mp) {
    size_t n;
    yaml_node_item_t *items = sequence(l, mp, 1, "pgo_kinds", &n);
    mantra_manifest_pgo_kind *out = alloc(l, n ? n : 1, sizeof *out);
    yaml_node_t **nodes = scratch(l, n ? n : 1, sizeof *nodes);
    mf_names names;
    names_init(l, &names, n);
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *node = node_at(l, items[i]);
        pairs p;
        mapping(l, node, "pgo kind", PGO_KEYS, 0x7, &p);
        const char *name = string(l, p.val[0], "name");
        mf_int value = integer(l, p.val[1], "value");
        mf_int size = integer(l, p.val[2], "size");
        nodes[i] = node;
        const mantra_manifest_pgo_kind *first = names_add(l, &names, name, &out[i]);
        if (first != NULL) {
            char nb[64];
            fail(l, node, first_line(node_line(nodes[first - out]), nb, sizeof nb), "pgo kind '%s' is defined twice",
                 name);
        }
        char owner[300];
        snprintf(owner, sizeof owner, "pgo kind '%.280s'", name);
        out[i].name = keep(l, name);
        out[i].value = (uint32_t)in_range(l, &value, "value", owner, 0xFFFFFFFFu, node_line(node), node_col(node), NULL);
        for (size_t j = 0; j < i; j++) {
            if (out[j].value == out[i].value) {
                char nb[64];
                fail(l, node, first_line(node_line(nodes[j]), nb, sizeof nb),
                     "pgo kind '%s' reuses the value 0x%lx of pgo kind '%s'", name, (unsigned long)out[i].value,
                     out[j].name);
            }
        }
        int ok = !size.big && ((size.neg && size.mag == 1) ||
                               (!size.neg && (size.mag == 0 || size.mag == 1 || size.mag == 2 || size.mag == 4 ||
                                              size.mag == 8)));
        if (!ok)
            fail(l, node, "bytes per element: 1, 2, 4 or 8; 0 for none; -1 for pointer size",
                 "size %s of pgo kind '%s' is not one of -1, 0, 1, 2, 4, 8", size.text, name);
        out[i].size = size.neg ? -1 : (int32_t)size.mag;
    }
    l->m->pgo_kinds = out;
    l->m->pgo_kind_count = (uint32_t)n;
}

static void manifest(L *l, yaml_node_t *root) {
    pairs mp;
    mapping(l, root, "manifest", MANIFEST_KEYS, 0x1, &mp);
    size_t n;
    yaml_node_item_t *items = sequence(l, &mp, 0, "providers", &n);
    if (n == 0)
        fail(l, mp.val[0], NULL, "expected at least one provider in 'providers'");
    mantra_manifest_provider *providers = alloc(l, n, sizeof *providers);
    yaml_node_t **nodes = scratch(l, n, sizeof *nodes);
    mf_names by_name, by_guid;
    names_init(l, &by_name, n);
    names_init(l, &by_guid, n);
    l->m->providers = providers;
    for (size_t i = 0; i < n; i++) {
        nodes[i] = node_at(l, items[i]);
        provider(l, nodes[i], &providers[i], &by_name, &by_guid, nodes, i);
        l->m->event_count += providers[i].event_count;
    }
    l->m->provider_count = (uint32_t)n;
    pgo_kinds(l, &mp);
}

/* ---- input checks (as load_yaml._read / _check_depth) --------------------------------------------------------- */

/* Line and column (characters) of a byte offset. */
static void byte_loc(const uint8_t *data, size_t offset, unsigned *line, unsigned *col) {
    unsigned ln = 1, c = 1;
    for (size_t i = 0; i < offset; i++) {
        if (data[i] == '\n') {
            ln++;
            c = 1;
        } else if ((data[i] & 0xC0) != 0x80) {
            c++;
        }
    }
    *line = ln;
    *col = c;
}

/* Offset of the first byte that is not strict UTF-8, or SIZE_MAX. */
static size_t utf8_invalid_at(const uint8_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len;
        uint8_t lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF)
            len = 2;
        else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            if (c == 0xE0)
                lo = 0xA0;
            if (c == 0xED)
                hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            if (c == 0xF0)
                lo = 0x90;
            if (c == 0xF4)
                hi = 0x8F;
        } else
            return i;
        if (i + 1 >= n || s[i + 1] < lo || s[i + 1] > hi)
            return i;
        for (size_t k = 2; k < len; k++)
            if (i + k >= n || (s[i + k] & 0xC0) != 0x80)
                return i;
        i += len;
    }
    return SIZE_MAX;
}

/* UTF-16 (with BOM) to UTF-8 in a malloc'd buffer; NULL + reason when invalid. */
static uint8_t *utf16_to_utf8(const uint8_t *d, size_t n, size_t *out_n, const char **reason) {
    int le = d[0] == 0xFF;
    d += 2;
    n -= 2;
    if (n % 2 != 0) {
        *reason = "truncated data";
        return NULL;
    }
    uint8_t *out = malloc(n / 2 * 3 + 1);
    if (out == NULL) {
        *reason = "out of memory";
        return NULL;
    }
    size_t o = 0;
    for (size_t i = 0; i < n; i += 2) {
        unsigned u = le ? (unsigned)(d[i] | d[i + 1] << 8) : (unsigned)(d[i] << 8 | d[i + 1]);
        unsigned long cp = u;
        if (u >= 0xD800 && u <= 0xDBFF) {
            if (i + 2 >= n) {
                *reason = "unexpected end of data";
                free(out);
                return NULL;
            }
            unsigned v = le ? (unsigned)(d[i + 2] | d[i + 3] << 8) : (unsigned)(d[i + 2] << 8 | d[i + 3]);
            if (v < 0xDC00 || v > 0xDFFF) {
                *reason = "illegal UTF-16 surrogate";
                free(out);
                return NULL;
            }
            cp = 0x10000 + ((unsigned long)(u - 0xD800) << 10) + (v - 0xDC00);
            i += 2;
        } else if (u >= 0xDC00 && u <= 0xDFFF) {
            *reason = "illegal encoding";
            free(out);
            return NULL;
        }
        if (cp < 0x80) {
            out[o++] = (uint8_t)cp;
        } else if (cp < 0x800) {
            out[o++] = (uint8_t)(0xC0 | cp >> 6);
            out[o++] = (uint8_t)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out[o++] = (uint8_t)(0xE0 | cp >> 12);
            out[o++] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
            out[o++] = (uint8_t)(0x80 | (cp & 0x3F));
        } else {
            out[o++] = (uint8_t)(0xF0 | cp >> 18);
            out[o++] = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
            out[o++] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
            out[o++] = (uint8_t)(0x80 | (cp & 0x3F));
        }
    }
    *out_n = o;
    return out;
}

#define MAX_DEPTH 1000

/* libyaml itself copes with deep nesting, but the manifest loaders refuse more than MAX_DEPTH levels
 * (as load_yaml does): a cheap bound first, the parse events only when it is high. Returns 0, or 1
 * with the error set. */
static int check_depth(L *l, const uint8_t *data, size_t n) {
    size_t depth = 0, deepest = 0, line = 0, longest = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = data[i];
        if (c == '[' || c == '{') {
            if (++depth > deepest)
                deepest = depth;
        } else if (c == ']' || c == '}') {
            if (depth > 0)
                depth--;
        }
        if (c == '\n') {
            if (line > longest)
                longest = line;
            line = 0;
        } else {
            line++;
        }
    }
    if (line > longest)
        longest = line;
    if (deepest + 2 * longest + 2 <= MAX_DEPTH)
        return 0;
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return 0;
    yaml_parser_set_input_string(&parser, data, n);
    size_t d = 0;
    int result = 0;
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev))
            break; /* the loader reports it */
        yaml_event_type_t t = ev.type;
        if (t == YAML_MAPPING_START_EVENT || t == YAML_SEQUENCE_START_EVENT) {
            if (++d > MAX_DEPTH) {
                l->line = (unsigned)ev.start_mark.line + 1;
                l->column = (unsigned)ev.start_mark.column + 1;
                snprintf(l->message, sizeof l->message, "the YAML is nested too deeply (more than %d levels)", MAX_DEPTH);
                l->has_note = 0;
                result = 1;
            }
        } else if (t == YAML_MAPPING_END_EVENT || t == YAML_SEQUENCE_END_EVENT) {
            d--;
        }
        yaml_event_delete(&ev);
        if (result || t == YAML_STREAM_END_EVENT)
            break;
    }
    yaml_parser_delete(&parser);
    return result;
}

/* The libyaml error as load_yaml._compose words it. */
static void yaml_error(L *l, const yaml_parser_t *parser, const uint8_t *data, size_t n) {
    l->has_note = 0;
    if (parser->error == YAML_MEMORY_ERROR) {
        l->oom = 1;
        return;
    }
    if (parser->error == YAML_READER_ERROR) {
        size_t off = parser->problem_offset <= n ? parser->problem_offset : n;
        byte_loc(data, off, &l->line, &l->column);
        snprintf(l->message, sizeof l->message, "YAML syntax error: unacceptable character #x%04x: %s",
                 (unsigned)parser->problem_value, parser->problem ? parser->problem : "invalid input");
        return;
    }
    const char *problem = parser->problem, *context = parser->context;
    yaml_mark_t mark = parser->problem_mark;
    if (problem == NULL) {
        mark = parser->context_mark;
        if (context == NULL) {
            mark.line = 0;
            mark.column = 0;
        }
    }
    l->line = (unsigned)mark.line + 1;
    l->column = (unsigned)mark.column + 1;
    const char *text = problem ? problem : context ? context : "invalid YAML";
    if (context != NULL && problem != NULL && strncmp(problem, "but ", 4) == 0) {
        snprintf(l->message, sizeof l->message, "YAML syntax error: %s, %s", context, problem);
    } else {
        snprintf(l->message, sizeof l->message, "YAML syntax error: %s", text);
        if (context != NULL && problem != NULL) {
            l->has_note = 1;
            snprintf(l->note, sizeof l->note, "%s (started at line %u, column %u)", context,
                     (unsigned)parser->context_mark.line + 1, (unsigned)parser->context_mark.column + 1);
        }
    }
}

static mantra_manifest_error *error_of(L *l) {
    if (l->oom)
        return mf_error_new(l->file, 1, 1, "out of memory", NULL);
    return mf_error_new(l->file, l->line, l->column, l->message, l->has_note ? l->note : NULL);
}

/* The part after setjmp: builds the manifest from a loaded document. Returns 0, or 1 on error. */
static int build(L *l, yaml_node_t *root) {
    if (setjmp(l->jump) != 0)
        return 1;
    manifest(l, root);
    if (mf_build_indexes(l->m) != 0)
        fail_oom(l);
    return 0;
}

static mantra_manifest *load_bytes(const uint8_t *data, size_t size, const char *name, mantra_manifest_error **err) {
    L l;
    memset(&l, 0, sizeof l);
    l.file = name;
    uint8_t *converted = NULL;
    mantra_manifest *result = NULL;
    yaml_parser_t parser;
    yaml_document_t doc;
    int have_parser = 0, have_doc = 0;

    if (size >= 2 && ((data[0] == 0xFF && data[1] == 0xFE) || (data[0] == 0xFE && data[1] == 0xFF))) {
        const char *reason = NULL;
        size_t n = 0;
        converted = utf16_to_utf8(data, size, &n, &reason);
        if (converted == NULL) {
            snprintf(l.message, sizeof l.message, "invalid UTF-16: %s", reason);
            l.line = l.column = 1;
            l.oom = strcmp(reason, "out of memory") == 0;
            goto fail;
        }
        data = converted;
        size = n;
    } else if (size >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF) {
        data += 3;
        size -= 3;
    }
    size_t bad = utf8_invalid_at(data, size);
    if (bad != SIZE_MAX) {
        byte_loc(data, bad, &l.line, &l.column);
        snprintf(l.message, sizeof l.message, "the file is not valid UTF-8 (byte 0x%02x)", data[bad]);
        goto fail;
    }
    if (check_depth(&l, data, size))
        goto fail;

    if (!yaml_parser_initialize(&parser)) {
        l.oom = 1;
        goto fail;
    }
    have_parser = 1;
    yaml_parser_set_input_string(&parser, data, size);
    yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
    if (!yaml_parser_load(&parser, &doc)) {
        yaml_error(&l, &parser, data, size);
        goto fail;
    }
    have_doc = 1;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root == NULL) {
        l.line = l.column = 1;
        snprintf(l.message, sizeof l.message, "an empty file is not a manifest");
        goto fail;
    }
    {
        yaml_document_t next;
        if (!yaml_parser_load(&parser, &next)) {
            yaml_error(&l, &parser, data, size);
            goto fail;
        }
        yaml_node_t *other = yaml_document_get_root_node(&next);
        if (other != NULL) {
            l.line = (unsigned)next.start_mark.line + 1;
            l.column = (unsigned)next.start_mark.column + 1;
            snprintf(l.message, sizeof l.message,
                     "YAML syntax error: expected a single document in the stream, but found another document");
            yaml_document_delete(&next);
            goto fail;
        }
        yaml_document_delete(&next);
    }

    l.doc = &doc;
    {
        cm_arena arena = {NULL, 0};
        mantra_manifest *m = cm_arena_alloc(&arena, sizeof *m);
        if (m == NULL) {
            l.oom = 1;
            goto fail;
        }
        m->arena = arena;
        l.m = m;
        l.arena = &m->arena;
    }
    if (build(&l, root) != 0) {
        cm_arena built = l.m->arena;
        cm_arena_free(&built);
        l.m = NULL;
        goto fail;
    }
    result = l.m;
    goto done;

fail:
    if (err != NULL)
        *err = error_of(&l);
done:
    cm_arena_free(&l.scratch);
    if (have_doc)
        yaml_document_delete(&doc);
    if (have_parser)
        yaml_parser_delete(&parser);
    free(converted);
    return result;
}

#endif /* MANTRA_HAVE_LIBYAML */
