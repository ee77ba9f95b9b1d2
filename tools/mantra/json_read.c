/* A JSON reader (RFC 8259) for the documents the tool writes and reads back (`mantra pgo --format
 * json` profiles): a tree of values in one allocation arena per document. Integers keep every bit
 * of a uint64 or an int64 (PGO counts and handles); strings are UTF-8 with their escapes decoded
 * (\uXXXX pairs for characters outside the BMP). Errors name the line and column. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"

typedef struct parser {
    const char *s, *end;
    const char *line_start;
    unsigned line;
    char *why; /* jr_doc.error */
    size_t why_size;
    int depth;
} parser;

static int fail(parser *p, const char *msg) {
    snprintf(p->why, p->why_size, "line %u, column %u: %s", p->line, (unsigned)(p->s - p->line_start) + 1, msg);
    return -1;
}

static void skip_ws(parser *p) {
    while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r')) {
        if (*p->s == '\n') {
            p->line++;
            p->line_start = p->s + 1;
        }
        p->s++;
    }
}

static jr_value *new_value(jr_type t) {
    jr_value *v = calloc(1, sizeof *v);
    if (v)
        v->type = t;
    return v;
}

void jr_free(jr_value *v) {
    if (v == NULL)
        return;
    for (size_t i = 0; i < v->count; i++) {
        jr_free(v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    free(v);
}

static int hex4(parser *p, uint32_t *out) {
    if (p->end - p->s < 4)
        return fail(p, "a \\u escape is cut");
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p->s[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (uint32_t)(c - 'A' + 10);
        else
            return fail(p, "a \\u escape with a character that is not a hex digit");
    }
    p->s += 4;
    *out = v;
    return 0;
}

static void put_utf8(char *o, size_t *n, uint32_t cp) {
    if (cp < 0x80) {
        o[(*n)++] = (char)cp;
    } else if (cp < 0x800) {
        o[(*n)++] = (char)(0xC0 | cp >> 6);
        o[(*n)++] = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        o[(*n)++] = (char)(0xE0 | cp >> 12);
        o[(*n)++] = (char)(0x80 | (cp >> 6 & 0x3F));
        o[(*n)++] = (char)(0x80 | (cp & 0x3F));
    } else {
        o[(*n)++] = (char)(0xF0 | cp >> 18);
        o[(*n)++] = (char)(0x80 | (cp >> 12 & 0x3F));
        o[(*n)++] = (char)(0x80 | (cp >> 6 & 0x3F));
        o[(*n)++] = (char)(0x80 | (cp & 0x3F));
    }
}

/* A string at p->s (after its opening quote): a new NUL-terminated copy in *out. */
static int parse_string(parser *p, char **out) {
    const char *start = p->s;
    size_t room = 0;
    while (p->s < p->end && *p->s != '"') { /* the decoded string is never longer than the raw one */
        if (*p->s == '\\')
            p->s++;
        p->s++;
        room++;
    }
    if (p->s >= p->end)
        return fail(p, "a string without its closing quote");
    char *o = malloc((size_t)(p->s - start) + 1);
    if (o == NULL)
        return fail(p, "out of memory");
    size_t n = 0;
    for (const char *c = start; c < p->s;) {
        if ((unsigned char)*c < 0x20) {
            free(o);
            p->s = c;
            return fail(p, "a control character inside a string");
        }
        if (*c != '\\') {
            o[n++] = *c++;
            continue;
        }
        c++;
        char e = *c++;
        switch (e) {
        case '"': o[n++] = '"'; break;
        case '\\': o[n++] = '\\'; break;
        case '/': o[n++] = '/'; break;
        case 'b': o[n++] = '\b'; break;
        case 'f': o[n++] = '\f'; break;
        case 'n': o[n++] = '\n'; break;
        case 'r': o[n++] = '\r'; break;
        case 't': o[n++] = '\t'; break;
        case 'u': {
            parser q = *p;
            q.s = c;
            uint32_t cp, lo;
            if (hex4(&q, &cp) < 0) {
                free(o);
                return -1;
            }
            c = q.s;
            if (cp >= 0xD800 && cp < 0xDC00 && q.end - c >= 6 && c[0] == '\\' && c[1] == 'u') {
                q.s = c + 2;
                if (hex4(&q, &lo) == 0 && lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    c = q.s;
                }
            }
            if (cp >= 0xD800 && cp < 0xE000)
                cp = 0xFFFD; /* a lone surrogate */
            put_utf8(o, &n, cp);
            break;
        }
        default:
            free(o);
            p->s = c - 1;
            return fail(p, "an unknown escape in a string");
        }
    }
    (void)room;
    o[n] = '\0';
    p->s++; /* the closing quote */
    *out = o;
    return 0;
}

static int parse_value(parser *p, jr_value **out);

static int add_item(parser *p, jr_value *v, jr_value *item, char *key) {
    if (v->count % 16 == 0) {
        jr_value **items = realloc(v->items, (v->count + 16) * sizeof *items);
        if (items)
            v->items = items;
        char **keys = v->type == JR_OBJECT ? realloc(v->keys, (v->count + 16) * sizeof *keys) : NULL;
        if (keys)
            v->keys = keys;
        if (items == NULL || (v->type == JR_OBJECT && keys == NULL)) {
            jr_free(item);
            free(key);
            return fail(p, "out of memory");
        }
    }
    v->items[v->count] = item;
    if (v->type == JR_OBJECT)
        v->keys[v->count] = key;
    v->count++;
    return 0;
}

static int parse_container(parser *p, jr_value *v, char close) {
    skip_ws(p);
    if (p->s < p->end && *p->s == close) {
        p->s++;
        return 0;
    }
    for (;;) {
        char *key = NULL;
        skip_ws(p);
        if (v->type == JR_OBJECT) {
            if (p->s >= p->end || *p->s != '"')
                return fail(p, "an object key that is not a string");
            p->s++;
            if (parse_string(p, &key) < 0)
                return -1;
            skip_ws(p);
            if (p->s >= p->end || *p->s != ':') {
                free(key);
                return fail(p, "a key without ':' after it");
            }
            p->s++;
        }
        jr_value *item;
        if (parse_value(p, &item) < 0) {
            free(key);
            return -1;
        }
        if (add_item(p, v, item, key) < 0)
            return -1;
        skip_ws(p);
        if (p->s < p->end && *p->s == ',') {
            p->s++;
            continue;
        }
        if (p->s < p->end && *p->s == close) {
            p->s++;
            return 0;
        }
        return fail(p, close == ']' ? "an array without ',' or ']' after an element" : "an object without ',' or '}' after a member");
    }
}

static int parse_number(parser *p, jr_value *v) {
    const char *start = p->s;
    int neg = 0;
    if (*p->s == '-') {
        neg = 1;
        p->s++;
    }
    uint64_t u = 0;
    int digits = 0, overflow = 0, frac = 0;
    while (p->s < p->end && *p->s >= '0' && *p->s <= '9') {
        unsigned d = (unsigned)(*p->s - '0');
        if (u > (UINT64_MAX - d) / 10)
            overflow = 1;
        u = u * 10 + d;
        p->s++;
        digits++;
    }
    if (digits == 0)
        return fail(p, "a number without digits");
    while (p->s < p->end && (*p->s == '.' || *p->s == 'e' || *p->s == 'E' || *p->s == '+' || *p->s == '-' ||
                             (*p->s >= '0' && *p->s <= '9'))) {
        frac = 1;
        p->s++;
    }
    char buf[64];
    size_t len = (size_t)(p->s - start);
    memcpy(buf, start, len < sizeof buf - 1 ? len : sizeof buf - 1);
    buf[len < sizeof buf - 1 ? len : sizeof buf - 1] = '\0';
    v->number = strtod(buf, NULL);
    v->is_integer = !frac && !overflow && (!neg || u <= (uint64_t)INT64_MAX + 1);
    v->negative = neg;
    v->magnitude = u;
    return 0;
}

static int parse_value(parser *p, jr_value **out) {
    skip_ws(p);
    *out = NULL;
    if (p->s >= p->end)
        return fail(p, "the document ends where a value should be");
    if (++p->depth > 256)
        return fail(p, "values nested more than 256 deep");
    jr_value *v = NULL;
    int rc = 0;
    char c = *p->s;
    if (c == '{' || c == '[') {
        p->s++;
        v = new_value(c == '{' ? JR_OBJECT : JR_ARRAY);
        rc = v ? parse_container(p, v, c == '{' ? '}' : ']') : fail(p, "out of memory");
    } else if (c == '"') {
        p->s++;
        v = new_value(JR_STRING);
        rc = v ? parse_string(p, &v->str) : fail(p, "out of memory");
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        v = new_value(JR_NUMBER);
        rc = v ? parse_number(p, v) : fail(p, "out of memory");
    } else if (p->end - p->s >= 4 && memcmp(p->s, "true", 4) == 0) {
        v = new_value(JR_BOOL);
        if (v)
            v->boolean = 1;
        p->s += 4;
    } else if (p->end - p->s >= 5 && memcmp(p->s, "false", 5) == 0) {
        v = new_value(JR_BOOL);
        p->s += 5;
    } else if (p->end - p->s >= 4 && memcmp(p->s, "null", 4) == 0) {
        v = new_value(JR_NULL);
        p->s += 4;
    } else {
        rc = fail(p, "not a JSON value");
    }
    p->depth--;
    if (v == NULL && rc == 0)
        rc = fail(p, "out of memory");
    if (rc < 0) {
        jr_free(v);
        return -1;
    }
    *out = v;
    return 0;
}

jr_value *jr_parse(const char *text, size_t size, char *error, size_t error_size) {
    parser p = {text, text + size, text, 1, error, error_size, 0};
    jr_value *v;
    if (parse_value(&p, &v) < 0)
        return NULL;
    skip_ws(&p);
    if (p.s != p.end) {
        fail(&p, "text after the document");
        jr_free(v);
        return NULL;
    }
    return v;
}

const jr_value *jr_get(const jr_value *obj, const char *key) {
    if (obj == NULL || obj->type != JR_OBJECT)
        return NULL;
    for (size_t i = 0; i < obj->count; i++)
        if (strcmp(obj->keys[i], key) == 0)
            return obj->items[i];
    return NULL;
}

int jr_int64(const jr_value *v, int64_t *out) {
    if (v == NULL || v->type != JR_NUMBER || !v->is_integer)
        return -1;
    if (v->negative)
        *out = v->magnitude == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v->magnitude;
    else
        *out = (int64_t)v->magnitude; /* a uint64 above INT64_MAX keeps its bits */
    return 0;
}
