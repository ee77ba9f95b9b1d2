/* yaml_scalars.c - the manifest loader's scalar conversion, as generator/mantra_gen/load_yaml.py
 * converts scalars: strings, integers (decimal or 0x, with their text as Python prints it), range
 * checks, booleans, levels (names or 0..5), field types (the names of docs/manifest.md, with or
 * without 'win:'), GUID text (checked with the one GUID parser, mantra_manifest_guid_parse) and
 * counts or lengths (a number or a field name). */
#include <stdio.h>
#include <string.h>

#if defined(MANTRA_HAVE_LIBYAML)

#include "manifest/loader-internal.h"

const char *mf_scalar(mf_loader *l, yaml_node_t *n, const char *key, const char *kind) {
    char dbuf_[256];
    if (n->type != YAML_SCALAR_NODE || mf_is_null(n))
        mf_fail(l, n, NULL, "expected %s for '%s', got %s", kind, key, MF_DESCRIBE(n));
    return mf_svalue(n);
}

const char *mf_string(mf_loader *l, yaml_node_t *n, const char *key) { return mf_scalar(l, n, key, "a string"); }

static int is_space(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

int mf_parse_int(const char *s, size_t len, mf_int *out) {
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

mf_int mf_integer(mf_loader *l, yaml_node_t *n, const char *key) {
    char dbuf_[256];
    mf_int v;
    if (n->type != YAML_SCALAR_NODE || mf_is_null(n) || mf_parse_int(mf_svalue(n), n->data.scalar.length, &v) != 0)
        mf_fail(l, n, NULL, "expected an integer for '%s', got %s", key, MF_DESCRIBE(n));
    return v;
}

void mf_hex_text(const mf_int *v, char *out, size_t size) {
    if (v->neg || v->big)
        snprintf(out, size, "%s", v->text);
    else
        snprintf(out, size, "0x%llx", (unsigned long long)v->mag);
}

uint64_t mf_in_range(mf_loader *l, const mf_int *v, const char *what, const char *owner, uint64_t hi, unsigned line,
                     unsigned col, const char *note) {
    if (!v->neg && !v->big && v->mag <= hi)
        return v->mag;
    char shown[32];
    if (hi >= 0xFFFFFFFFu)
        snprintf(shown, sizeof shown, "0x%llx", (unsigned long long)hi);
    else
        snprintf(shown, sizeof shown, "%llu", (unsigned long long)hi);
    mf_fail_at(l, line, col, note, "%s %s of %s is out of range 0..%s", what, v->text, owner, shown);
}

int mf_boolean(mf_loader *l, yaml_node_t *n, const char *key) {
    static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", NULL};
    static const char *const no[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", NULL};
    char dbuf_[256];
    if (n->type == YAML_SCALAR_NODE) {
        for (size_t i = 0; yes[i]; i++)
            if (strcmp(mf_svalue(n), yes[i]) == 0)
                return 1;
        for (size_t i = 0; no[i]; i++)
            if (strcmp(mf_svalue(n), no[i]) == 0)
                return 0;
    }
    mf_fail(l, n, NULL, "expected true or false for '%s', got %s", key, MF_DESCRIBE(n));
}

static const char *const LEVEL_NAMES[] = {"LogAlways", "Critical", "Error", "Warning", "Informational", "Verbose"};
#define LEVEL_HINT                                                                                                  \
    "valid levels: LogAlways, Critical, Error, Warning, Informational, Verbose (with or without 'win:'), or a "    \
    "number 0..5"

uint8_t mf_level(mf_loader *l, yaml_node_t *n, const char *key) {
    const char *text = mf_scalar(l, n, key, "a level");
    const char *bare = strncmp(text, "win:", 4) == 0 ? text + 4 : text;
    for (uint8_t i = 0; i < 6; i++)
        if (strcmp(bare, LEVEL_NAMES[i]) == 0)
            return i;
    mf_int v;
    if (mf_parse_int(text, n->data.scalar.length, &v) != 0)
        mf_fail(l, n, LEVEL_HINT, "unknown level '%s'", text);
    if (v.neg || v.big || v.mag > 5)
        mf_fail(l, n, LEVEL_HINT, "level %s is out of range 0..5", v.text);
    return (uint8_t)v.mag;
}

#define TYPE_HINT                                                                                                  \
    "valid types: Int8, UInt8, Int16, UInt16, Int32, UInt32, Int64, UInt64, Float, Double, Boolean, GUID, "        \
    "Pointer, FILETIME, UnicodeString, AnsiString, Binary, struct (scalar types also with 'win:')"

uint16_t mf_field_type(mf_loader *l, yaml_node_t *n, const char *key) {
    const char *text = mf_scalar(l, n, key, "a field type");
    for (unsigned i = 0; i < MF_FIELD_TYPE_COUNT; i++) {
        const mf_type_info *t = &mf_field_types[i];
        if (strcmp(text, t->name) == 0)
            return t->type;
        if (t->type != MANTRA_TYPE_OBJECT && strncmp(text, "win:", 4) == 0 && strcmp(text + 4, t->name) == 0)
            return t->type;
    }
    mf_fail(l, n, TYPE_HINT, "unknown field type '%s'", text);
}

const char *mf_guid_text(mf_loader *l, yaml_node_t *n, const char *key) {
    const char *text = mf_scalar(l, n, key, "a GUID");
    size_t a = 0, b = strlen(text);
    while (a < b && is_space((unsigned char)text[a]))
        a++;
    while (b > a && is_space((unsigned char)text[b - 1]))
        b--;
    if (b - a >= 2 && text[a] == '{' && text[b - 1] == '}') {
        a++;
        b--;
    }
    char *out = mf_scratch(l, b - a + 1, 1);
    for (size_t i = a; i < b; i++)
        out[i - a] = (char)(text[i] >= 'A' && text[i] <= 'Z' ? text[i] - 'A' + 'a' : text[i]);
    return out;
}

#define GUID_HINT "write xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx (hexadecimal digits)"

void mf_check_guid(mf_loader *l, const char *text, const char *owner_kind, const char *owner, yaml_node_t *at,
                   mantra_guid *out) {
    mantra_guid g;
    if (strlen(text) != 36 || mantra_manifest_guid_parse(text, &g) != 0)
        mf_fail(l, at, GUID_HINT, "invalid GUID '%s' of %s '%s'", text, owner_kind, owner);
    if (out != NULL)
        *out = g;
}

mf_size_ref mf_size_ref_of(mf_loader *l, yaml_node_t *n, const char *key) {
    mf_size_ref r;
    memset(&r, 0, sizeof r);
    const char *text = mf_scalar(l, n, key, "a number or a field name");
    r.given = 1;
    if (mf_parse_int(text, n->data.scalar.length, &r.num) != 0) {
        r.is_name = 1;
        r.name = text;
    } else if (strcmp(key, "count") == 0 && !r.num.neg && !r.num.big && r.num.mag == 1) {
        r.given = 0; /* count 1 is no count (the model normalises it away) */
    }
    return r;
}

#endif /* MANTRA_HAVE_LIBYAML */
