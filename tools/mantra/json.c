/* JSON output of events (docs/dump-json.md). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mantra/decode.h"
#include "tool.h"

void json_string(FILE *out, const char *str, size_t len) {
    const unsigned char *s = (const unsigned char *)str;
    putc('"', out);
    for (size_t i = 0; i < len;) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\') {
            putc('\\', out);
            putc(c, out);
            i++;
        } else if (c < 0x20) {
            switch (c) {
            case '\n': fputs("\\n", out); break;
            case '\t': fputs("\\t", out); break;
            case '\r': fputs("\\r", out); break;
            case '\b': fputs("\\b", out); break;
            case '\f': fputs("\\f", out); break;
            default: fprintf(out, "\\u%04x", c); break;
            }
            i++;
        } else if (c < 0x80) {
            putc(c, out);
            i++;
        } else {
            uint32_t cp_;
            size_t k = mantra_utf8_decode(s + i, len - i, &cp_);
            if (k == 0) {
                fputs("\xEF\xBF\xBD", out); /* U+FFFD */
                i++;
            } else {
                fwrite(s + i, 1, k, out);
                i += k;
            }
        }
    }
    putc('"', out);
}

void json_utf16(FILE *out, const uint8_t *data, size_t units) {
    mantra_str16 s = {data, units};
    char small[512];
    size_t need = mantra_str16_to_utf8(s, small, sizeof small);
    if (need < sizeof small) {
        json_string(out, small, need);
        return;
    }
    char *big = malloc(need + 1);
    if (big == NULL) {
        json_string(out, small, strlen(small));
        return;
    }
    mantra_str16_to_utf8(s, big, need + 1);
    json_string(out, big, need);
    free(big);
}

/* ---- the field printer ---- */
#define MAX_NEST 80

typedef struct printer {
    FILE *out;
    int depth;
    int first[MAX_NEST];
    char close[MAX_NEST];
    int skip_depth; /* >0: inside a byte array printed as hex */
    /* the path of the current value ("Field", "Array[2].Member"), for the names of map values */
    char path[1024];
    size_t plen[MAX_NEST]; /* path length of each open level */
    size_t index[MAX_NEST]; /* next element index of each open array */
    size_t cur;            /* path length of the value being printed */
} printer;

/* Map names of the last json_fields() call: "path\0text\0" pairs. */
static char *g_maps;
static size_t g_maps_len, g_maps_cap, g_maps_count;

static void maps_add(const char *path, size_t plen, const char *text) {
    size_t tlen = strlen(text), need = g_maps_len + plen + tlen + 2;
    if (need > g_maps_cap) {
        size_t ncap = g_maps_cap ? g_maps_cap * 2 : 256;
        while (ncap < need)
            ncap *= 2;
        char *n = realloc(g_maps, ncap);
        if (n == NULL)
            return; /* out of memory: the name is left out */
        g_maps = n;
        g_maps_cap = ncap;
    }
    memcpy(g_maps + g_maps_len, path, plen);
    g_maps[g_maps_len + plen] = '\0';
    memcpy(g_maps + g_maps_len + plen + 1, text, tlen + 1);
    g_maps_len = need;
    g_maps_count++;
}

void json_maps(FILE *out) {
    putc('{', out);
    size_t pos = 0;
    for (size_t i = 0; i < g_maps_count; i++) {
        const char *k = g_maps + pos;
        size_t kl = strlen(k);
        const char *t = k + kl + 1;
        size_t tl = strlen(t);
        if (i)
            putc(',', out);
        json_string(out, k, kl);
        putc(':', out);
        json_string(out, t, tl);
        pos += kl + tl + 2;
    }
    putc('}', out);
}

size_t json_map_count(void) { return g_maps_count; }

static void key(printer *p, const mantra_value *v) {
    if (!p->first[p->depth])
        putc(',', p->out);
    p->first[p->depth] = 0;
    size_t n = p->plen[p->depth];
    if (p->close[p->depth] == '}') {
        json_string(p->out, v->name, strlen(v->name)), putc(':', p->out);
        int k = snprintf(p->path + n, sizeof p->path - n, "%s%s", n ? "." : "", v->name);
        n = k < 0 ? n : n + (size_t)k;
    } else {
        int k = snprintf(p->path + n, sizeof p->path - n, "[%zu]", p->index[p->depth]++);
        n = k < 0 ? n : n + (size_t)k;
    }
    p->cur = n < sizeof p->path ? n : sizeof p->path - 1;
    if (v->map_text)
        maps_add(p->path, p->cur, v->map_text);
}

static void print_double(FILE *out, double d, int single) {
    if (isnan(d))
        fputs("\"NaN\"", out);
    else if (isinf(d))
        fputs(d > 0 ? "\"Infinity\"" : "\"-Infinity\"", out);
    else
        fprintf(out, single ? "%.9g" : "%.17g", d);
}

static void print_char(FILE *out, uint32_t cu) {
    uint8_t b[2] = {(uint8_t)cu, (uint8_t)(cu >> 8)};
    json_utf16(out, b, 1);
}

/* A GUID as "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (docs/dump-json.md). */
static void json_guid(FILE *out, const mantra_guid *g) {
    fprintf(out, "\"%08" PRIx32 "-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x\"", g->data1, g->data2, g->data3,
            g->data4[0], g->data4[1], g->data4[2], g->data4[3], g->data4[4], g->data4[5], g->data4[6], g->data4[7]);
}

static int on_scalar(void *ctx, const mantra_value *v) {
    printer *p = ctx;
    FILE *out = p->out;
    key(p, v);
    switch (v->type) {
    case MANTRA_TYPE_BOOLEAN:
    case MANTRA_TYPE_BOOLEAN8:
        fputs(v->u ? "true" : "false", out);
        break;
    case MANTRA_TYPE_CHAR:
        print_char(out, (uint32_t)v->u);
        break;
    case MANTRA_TYPE_UTF8_CODE_UNIT: {
        char c = (char)v->u;
        json_string(out, &c, 1);
        break;
    }
    case MANTRA_TYPE_SBYTE:
    case MANTRA_TYPE_INT16:
    case MANTRA_TYPE_INT32:
    case MANTRA_TYPE_INT64:
    case MANTRA_TYPE_VARINT:
        fprintf(out, "%" PRId64, v->i);
        break;
    case MANTRA_TYPE_BYTE:
    case MANTRA_TYPE_UINT16:
    case MANTRA_TYPE_UINT32:
    case MANTRA_TYPE_UINT64:
    case MANTRA_TYPE_VARUINT:
    case MANTRA_TYPE_DATETIME:
        fprintf(out, "%" PRIu64, v->u);
        break;
    case MANTRA_TYPE_SINGLE:
        print_double(out, v->d, 1);
        break;
    case MANTRA_TYPE_DOUBLE:
        print_double(out, v->d, 0);
        break;
    case MANTRA_TYPE_GUID:
        json_guid(out, &v->guid);
        break;
    case MANTRA_TYPE_STRING:
        json_utf16(out, v->data, v->count);
        break;
    case MANTRA_TYPE_STRING8:
        json_string(out, (const char *)v->data, v->size);
        break;
    default: /* Decimal and anything else: the raw bytes in hex */
        putc('"', out);
        for (size_t i = 0; i < v->size; i++)
            fprintf(out, "%02x", v->data[i]);
        putc('"', out);
        break;
    }
    return 0;
}

static int push(printer *p, char open, char close) {
    if (p->depth + 1 >= MAX_NEST)
        return -1;
    putc(open, p->out);
    p->depth++;
    p->first[p->depth] = 1;
    p->close[p->depth] = close;
    p->plen[p->depth] = p->cur;
    p->index[p->depth] = 0;
    return 0;
}

static int pop(printer *p) {
    putc(p->close[p->depth], p->out);
    p->depth--;
    return 0;
}

static int on_begin_object(void *ctx, const mantra_value *v) {
    printer *p = ctx;
    key(p, v);
    return push(p, '{', '}');
}

static int on_end(void *ctx, const mantra_value *v) {
    printer *p = ctx;
    (void)v;
    if (p->skip_depth) {
        p->skip_depth = 0;
        return 0;
    }
    return pop(p);
}

static int on_begin_array(void *ctx, const mantra_value *v) {
    printer *p = ctx;
    key(p, v);
    const mantra_field_desc *e = v->field->element;
    if (e && e->type == MANTRA_TYPE_BYTE) {
        putc('"', p->out);
        for (size_t i = 0; i < v->count; i++)
            fprintf(p->out, "%02x", v->data[i]);
        putc('"', p->out);
        p->skip_depth = 1;
        return 1;
    }
    return push(p, '[', ']');
}

static const mantra_field_visitor json_visitor = {on_scalar, on_begin_object, on_end, on_begin_array, on_end};

int json_fields(FILE *out, const mantra_trace_event *ev) {
    printer p;
    memset(&p, 0, sizeof p);
    p.out = out;
    putc('{', out);
    p.first[0] = 1;
    p.close[0] = '}';
    g_maps_len = g_maps_count = 0;
    int rc = mantra_decode_event(ev, &json_visitor, &p);
    if (p.skip_depth)
        p.skip_depth = 0;
    while (p.depth > 0) /* a payload that ends inside a field: close what is open */
        pop(&p);
    putc('}', out);
    return rc;
}

void json_event(FILE *out, const mantra_trace_event *ev) {
    const mantra_trace_metadata *m = ev->metadata;
    fprintf(out, "{\"timestamp\":%" PRId64 ",\"provider\":", ev->timestamp);
    json_string(out, m->provider, strlen(m->provider));
    fprintf(out, ",\"event_id\":%" PRIu32 ",\"version\":%" PRIu32 ",\"name\":", m->event_id, ev->version);
    json_string(out, m->name, strlen(m->name));
    if (m->task_name) { /* docs/dump-json.md: only when a manifest names them */
        fputs(",\"task\":", out);
        json_string(out, m->task_name, strlen(m->task_name));
    }
    if (m->opcode_name) {
        fputs(",\"opcode\":", out);
        json_string(out, m->opcode_name, strlen(m->opcode_name));
    }
    fprintf(out, ",\"thread_id\":%" PRIu64 ",\"sequence\":%" PRIu32 ",\"fields\":", ev->thread_id, ev->sequence);
    json_fields(out, ev);
    fprintf(out, ",\"field_source\":\"%s\"", json_field_source(ev));
    if (ev->decode_status != 0) /* docs/dump-json.md: only for a payload that does not match */
        fprintf(out, ",\"decode_error\":\"%s\"",
                ev->decode_status == MANTRA_DECODE_TRAILING ? "trailing"
                : ev->decode_status == MANTRA_DECODE_BAD_STRING ? "bad_string"
                                                                 : "short");
    fputs(",\"maps\":", out);
    json_maps(out);
    fputs(",\"stack\":[", out);
    for (size_t i = 0; i < ev->stack_count; i++)
        fprintf(out, "%s\"0x%" PRIx64 "\"", i ? "," : "", mantra_trace_event_ip(ev, i));
    fputs("],\"activity_id\":", out);
    json_guid(out, &ev->activity_id);
    fputs(",\"related_activity_id\":", out);
    json_guid(out, &ev->related_activity_id);
    fputs("}\n", out);
}

const char *json_field_source(const mantra_trace_event *ev) {
    const mantra_trace_metadata *m = ev->metadata;
    if (m->fields_from_manifest || m->fields_from_registry)
        return "manifest";
    return m->field_count ? "metadata" : "none";
}
