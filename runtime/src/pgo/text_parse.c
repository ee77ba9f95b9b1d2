/* Parsing the CLR's PGO text format as the CLR reads it (mantra/pgo.h). Facts: dotnet/runtime
 * src/coreclr/vm/pgo.cpp (PgoManager::ReadPgoData, @8b52e80): lines read with fgets into a
 * 16,384-byte buffer; line 1 must scan as the START header; then each line that scans as the @@@
 * header starts a method, the next two lines (MethodName, Signature) are skipped unread, then
 * `records` Schema lines each followed by Count data lines; any failure drops the method and
 * reading resumes with the line after the failing one; other lines are skipped. Numbers are
 * scanned as sscanf's %u / %X do (leading blanks, an optional sign, wrap-around to 32 bits);
 * handle lines must start with "TypeHandle: " / "MethodHandle: " and end with a newline; NULL and a
 * named handle are value 0 (the name is kept), UNKNOWN is value 1 (MANTRA_PGO_UNKNOWN_HANDLE_MIN). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/arena-internal.h"
#include "common/grow-internal.h"
#include "pgo-internal.h"

#define PG_LINE_MAX 16383 /* fgets with a 16,384-byte buffer reads at most this many bytes */
#define PG_MAX_ERRORS 1000

typedef struct pg_entry {
    mantra_pgo_text_entry pub;
    size_t schema_cap, values_cap, names_cap;
    const char **names;
} pg_entry;

struct mantra_pgo_text {
    pg_entry *entries;
    size_t count, cap;
    char **errors;
    size_t error_count, errors_kept, errors_cap;
    size_t skipped;
    cm_arena arena;
};

typedef struct line_reader {
    const char *text;
    size_t size, pos;
    size_t number; /* of the line last read */
} line_reader;

typedef struct line {
    const char *s; /* not NUL-terminated */
    size_t len;    /* without the newline */
    int newline;   /* ended by '\n' */
    int too_long;
} line;

static int read_line(line_reader *r, line *l) {
    if (r->pos >= r->size)
        return 0;
    const char *s = r->text + r->pos;
    const char *nl = memchr(s, '\n', r->size - r->pos);
    size_t len = nl != NULL ? (size_t)(nl - s) : r->size - r->pos;
    l->s = s;
    l->len = len;
    l->newline = nl != NULL;
    l->too_long = len + (nl != NULL) > PG_LINE_MAX;
    r->pos += len + (nl != NULL);
    r->number++;
    return 1;
}

/* ---- sscanf-like scanning over one line ---- */
typedef struct scan {
    const char *p, *end;
} scan;

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

/* A literal: a blank in the literal matches any run of blanks (also none), as in scanf formats. */
static int lit(scan *s, const char *text) {
    for (; *text; text++) {
        if (is_blank(*text)) {
            while (s->p < s->end && is_blank(*s->p))
                s->p++;
            continue;
        }
        if (s->p >= s->end || *s->p != *text)
            return 0;
        s->p++;
    }
    return 1;
}

static int digit_value(char c, int base) {
    int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 99;
    return v < base ? v : -1;
}

/* %u (base 10) or %X (base 16, optional 0x): strtoul's value (ULONG_MAX on overflow, negated
 * after a '-') cut to 32 bits. */
static int num(scan *s, int base, uint32_t *out) {
    while (s->p < s->end && is_blank(*s->p))
        s->p++;
    int neg = 0;
    if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
        neg = *s->p++ == '-';
    if (base == 16 && s->end - s->p >= 3 && s->p[0] == '0' && (s->p[1] == 'x' || s->p[1] == 'X') &&
        digit_value(s->p[2], 16) >= 0)
        s->p += 2;
    uint64_t v = 0;
    int any = 0, overflow = 0;
    for (int d; s->p < s->end && (d = digit_value(*s->p, base)) >= 0; s->p++) {
        any = 1;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            overflow = 1;
        else
            v = v * (uint64_t)base + (uint64_t)d;
    }
    if (!any)
        return 0;
    if (overflow)
        v = UINT64_MAX;
    else if (neg)
        v = (uint64_t)0 - v;
    *out = (uint32_t)v;
    return 1;
}

/* ---- results ---- */
static void add_error(mantra_pgo_text *t, const char *path, size_t line_no, const char *fmt, const char *arg) {
    t->error_count++;
    if (t->errors_kept >= PG_MAX_ERRORS ||
        cm_grow((void **)&t->errors, &t->errors_cap, t->errors_kept + 1, sizeof *t->errors, 16) != 0)
        return;
    char msg[256];
    snprintf(msg, sizeof msg, fmt, arg != NULL ? arg : "");
    size_t n = strlen(path) + strlen(msg) + 32;
    char *e = cm_arena_alloc(&t->arena, n);
    if (e == NULL)
        return;
    snprintf(e, n, "%s:%zu: %s", path, line_no, msg);
    t->errors[t->errors_kept++] = e;
}

static void drop_entry(pg_entry *e) {
    free(e->pub.data.schema);
    free(e->pub.data.values);
    free(e->names);
    memset(e, 0, sizeof *e);
}

/* Reads one method after its @@@ line. 0 (kept in *e), 1 (failed: error added, method dropped),
 * or MANTRA_ENOMEM. */
static int read_method(mantra_pgo_text *t, line_reader *r, const char *path, uint32_t records, pg_entry *e) {
    line l;
    const char *what[2] = {"MethodName", "Signature"};
    const char *kept[2];
    for (int k = 0; k < 2; k++) {
        if (!read_line(r, &l)) {
            add_error(t, path, r->number, "the file ends before the %s line of a method", what[k]);
            return 1;
        }
        kept[k] = cm_arena_strdup(&t->arena, l.s, l.len);
        if (kept[k] == NULL)
            return MANTRA_ENOMEM;
    }
    e->pub.method_line = kept[0];
    e->pub.signature_line = kept[1];
    mantra_pgo_data *d = &e->pub.data;
    for (uint32_t rec = 0; rec < records; rec++) {
        if (!read_line(r, &l)) {
            add_error(t, path, r->number, "the file ends before all Schema lines of the method%s", NULL);
            return 1;
        }
        scan s = {l.s, l.s + l.len};
        uint32_t f[4];
        if (l.too_long || !lit(&s, "Schema InstrumentationKind") || !num(&s, 10, &f[0]) || !lit(&s, " ILOffset") ||
            !num(&s, 10, &f[1]) || !lit(&s, " Count") || !num(&s, 10, &f[2]) || !lit(&s, " Other") ||
            !num(&s, 10, &f[3])) {
            add_error(t, path, r->number, "expected a Schema line; the method is dropped%s", NULL);
            return 1;
        }
        mantra_pgo_schema sc = {(int32_t)f[0], (int32_t)f[1], (int32_t)f[2], (int32_t)f[3]};
        if (!pg_elem_known(sc.kind)) {
            add_error(t, path, r->number, "unknown element type in InstrumentationKind; the method is dropped%s", NULL);
            return 1;
        }
        if (sc.count < 0) {
            add_error(t, path, r->number, "negative Count; the method is dropped%s", NULL);
            return 1;
        }
        if (cm_grow((void **)&d->schema, &e->schema_cap, d->records + 1, sizeof *d->schema, 8) != 0)
            return MANTRA_ENOMEM;
        d->schema[d->records++] = sc;
        int elem = pg_elem(sc.kind);
        for (int32_t k = 0; k < sc.count; k++) {
            if (!read_line(r, &l)) {
                add_error(t, path, r->number, "the file ends before all data lines of a Schema record%s", NULL);
                return 1;
            }
            scan v = {l.s, l.s + l.len};
            if (l.too_long) {
                add_error(t, path, r->number, "line longer than 16383 bytes; the method is dropped%s", NULL);
                return 1;
            }
            if (elem == MANTRA_PGO_None) {
                if (!lit(&v, "None")) {
                    add_error(t, path, r->number, "expected None; the method is dropped%s", NULL);
                    return 1;
                }
                continue;
            }
            int64_t value = 0;
            const char *name = NULL;
            uint32_t lo, hi;
            if (elem == MANTRA_PGO_FourByte) {
                if (!num(&v, 10, &lo)) {
                    add_error(t, path, r->number, "expected an unsigned 32-bit count; the method is dropped%s", NULL);
                    return 1;
                }
                value = (int64_t)(int32_t)lo;
            } else if (elem == MANTRA_PGO_EightByte) {
                if (!num(&v, 10, &lo) || !num(&v, 10, &hi)) {
                    add_error(t, path, r->number, "expected two unsigned 32-bit halves (low high); the method is dropped%s",
                              NULL);
                    return 1;
                }
                value = (int64_t)(((uint64_t)hi << 32) | lo);
            } else {
                const char *prefix = elem == MANTRA_PGO_TypeHandle ? "TypeHandle: " : "MethodHandle: ";
                size_t pl = strlen(prefix);
                if (l.len < pl || memcmp(l.s, prefix, pl) != 0 || !l.newline) {
                    if (!l.newline && l.len >= pl && memcmp(l.s, prefix, pl) == 0)
                        add_error(t, path, r->number, "a handle line must end with a newline; the method is dropped%s",
                                  NULL);
                    else
                        add_error(t, path, r->number, "expected a line starting with '%s'; the method is dropped",
                                  prefix);
                    return 1;
                }
                size_t nl = l.len - pl;
                const char *n = l.s + pl;
                /* The CLR sees the line as a C string, so a NUL byte hides the newline after it and
                 * the CLR drops the method (its newline check fails); so do we. */
                if (memchr(n, 0, nl) != NULL) {
                    add_error(t, path, r->number,
                              "a handle line holds a NUL byte, which hides its newline from the CLR; the method is "
                              "dropped%s",
                              NULL);
                    return 1;
                }
                if (nl == 7 && memcmp(n, "UNKNOWN", 7) == 0) {
                    value = MANTRA_PGO_UNKNOWN_HANDLE_MIN; /* an unnamed handle, as the runtime's 1..33 */
                } else if (!(nl == 4 && memcmp(n, "NULL", 4) == 0)) {
                    name = cm_arena_strdup(&t->arena, n, nl);
                    if (name == NULL)
                        return MANTRA_ENOMEM;
                }
            }
            if (cm_grow((void **)&d->values, &e->values_cap, d->value_count + 1, sizeof *d->values, 16) != 0 ||
                cm_grow((void **)&e->names, &e->names_cap, d->value_count + 1, sizeof *e->names, 16) != 0)
                return MANTRA_ENOMEM;
            e->names[d->value_count] = name;
            d->values[d->value_count++] = value;
        }
    }
    e->pub.handle_names = e->names;
    return 0;
}

int mantra_pgo_text_parse(const char *text, size_t size, const char *path, mantra_pgo_text **out) {
    if (out == NULL || (text == NULL && size > 0))
        return MANTRA_EINVAL;
    *out = NULL;
    if (path == NULL)
        path = "<text>";
    mantra_pgo_text *t = calloc(1, sizeof *t);
    if (t == NULL)
        return MANTRA_ENOMEM;
    line_reader r = {text, size, 0, 0};
    line l;
    scan s;
    uint32_t max_index;
    int ok = read_line(&r, &l);
    if (ok) {
        s = (scan){l.s, l.s + l.len};
        ok = !l.too_long && lit(&s, "*** START PGO Data, max index =") && num(&s, 10, &max_index);
    }
    if (!ok) {
        add_error(t, path, 1, "expected '*** START PGO Data, max index = N ***'; nothing is read%s", NULL);
        *out = t;
        return MANTRA_OK;
    }
    while (read_line(&r, &l)) {
        s = (scan){l.s, l.s + l.len};
        uint32_t h[4];
        if (l.too_long || !lit(&s, "@@@ codehash 0x") || !num(&s, 16, &h[0]) || !lit(&s, " methodhash 0x") ||
            !num(&s, 16, &h[1]) || !lit(&s, " ilSize 0x") || !num(&s, 16, &h[2]) || !lit(&s, " records 0x") ||
            !num(&s, 16, &h[3])) {
            t->skipped++;
            continue;
        }
        if (cm_grow((void **)&t->entries, &t->cap, t->count + 1, sizeof *t->entries, 16) != 0)
            goto nomem;
        pg_entry *e = &t->entries[t->count];
        memset(e, 0, sizeof *e);
        e->pub.codehash = h[0];
        e->pub.methodhash = h[1];
        e->pub.il_size = h[2];
        e->pub.line = r.number;
        int rc = read_method(t, &r, path, h[3], e);
        if (rc < 0) {
            drop_entry(e);
            goto nomem;
        }
        if (rc == 1)
            drop_entry(e);
        else
            t->count++;
    }
    *out = t;
    return MANTRA_OK;
nomem:
    mantra_pgo_text_free(t);
    return MANTRA_ENOMEM;
}

void mantra_pgo_text_free(mantra_pgo_text *t) {
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->count; i++)
        drop_entry(&t->entries[i]);
    free(t->entries);
    free(t->errors);
    cm_arena_free(&t->arena);
    free(t);
}

size_t mantra_pgo_text_method_count(const mantra_pgo_text *t) { return t != NULL ? t->count : 0; }

const mantra_pgo_text_entry *mantra_pgo_text_entry_at(const mantra_pgo_text *t, size_t i) {
    return t != NULL && i < t->count ? &t->entries[i].pub : NULL;
}

size_t mantra_pgo_text_error_count(const mantra_pgo_text *t) { return t != NULL ? t->error_count : 0; }

const char *mantra_pgo_text_error(const mantra_pgo_text *t, size_t i) {
    return t != NULL && i < t->errors_kept ? t->errors[i] : NULL;
}

size_t mantra_pgo_text_skipped_lines(const mantra_pgo_text *t) { return t != NULL ? t->skipped : 0; }
