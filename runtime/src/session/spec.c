/* Provider configuration in dotnet-trace syntax and the enable rule (mantra/session.h). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "mantra/session.h"
#include "session-internal.h"

static _Thread_local char g_err[256];

const char *mantra_session_last_error(void) { return g_err; }

void ss_set_error(const char *msg) { snprintf(g_err, sizeof g_err, "%s", msg); }

static int fail(size_t col, size_t *err_col, const char *msg) {
    snprintf(g_err, sizeof g_err, "providers:%zu: %s", col, msg);
    if (err_col)
        *err_col = col;
    return MANTRA_EINVAL;
}

/* ARGS: from spec[*i] (just after its ':') to the next ',' outside double quotes. */
static int parse_args(const char *spec, size_t *i, mantra_provider_spec *p, size_t *err_col) {
    size_t as = ++*i, quote = 0;
    int in_quote = 0;
    while (spec[*i] && (in_quote || spec[*i] != ',')) {
        if (spec[*i] == '"') {
            in_quote = !in_quote;
            quote = *i;
        }
        ++*i;
    }
    if (in_quote)
        return fail(quote + 1, err_col, "unterminated quote in provider arguments");
    if (*i - as >= sizeof p->args)
        return fail(as + 1, err_col, "provider arguments too long (at most 1023 bytes)");
    memcpy(p->args, spec + as, *i - as);
    p->args[*i - as] = 0;
    return MANTRA_OK;
}

/* The end of the `;`-separated pair that starts at s: the next ';' outside double quotes, or the
 * NUL; *eq becomes its first '=' outside quotes (or the end). */
static const char *pair_end(const char *s, const char **eq) {
    int in_quote = 0;
    *eq = NULL;
    for (; *s && (in_quote || *s != ';'); s++) {
        if (*s == '"')
            in_quote = !in_quote;
        else if (*s == '=' && !in_quote && !*eq)
            *eq = s;
    }
    if (!*eq)
        *eq = s;
    return s;
}

int mantra_provider_spec_arg(const mantra_provider_spec *spec, const char *key, char *out, size_t size) {
    if (!spec || !key || !out || size == 0)
        return MANTRA_EINVAL;
    out[0] = 0;
    size_t klen = strlen(key);
    for (const char *s = spec->args; *s;) {
        const char *eq, *end = pair_end(s, &eq);
        if ((size_t)(eq - s) == klen && memcmp(s, key, klen) == 0) {
            const char *v = eq < end ? eq + 1 : end;
            size_t n = (size_t)(end - v);
            if (n >= 2 && v[0] == '"' && v[n - 1] == '"') { /* a quoted value, without its quotes */
                v++;
                n -= 2;
            }
            if (n >= size)
                return MANTRA_ERANGE;
            memcpy(out, v, n);
            out[n] = 0;
            return 1;
        }
        if (!*end)
            break;
        s = end + 1;
    }
    return 0;
}

/* Appends n bytes to out at *len (NUL kept); 0, or MANTRA_ERANGE when they do not fit. */
static int append(char *out, size_t size, size_t *len, const char *s, size_t n) {
    if (*len + n >= size)
        return MANTRA_ERANGE;
    memcpy(out + *len, s, n);
    *len += n;
    out[*len] = 0;
    return MANTRA_OK;
}

int mantra_provider_spec_format(const char *name, uint64_t keywords, uint32_t level, const char *args, char *out,
                                size_t size) {
    if (!name || !out || size == 0)
        return ss_set_error("NULL argument"), MANTRA_EINVAL;
    out[0] = 0;
    if (!name[0] || strpbrk(name, ":,"))
        return ss_set_error("provider name empty or holding ':' or ','"), MANTRA_EINVAL;
    char head[192];
    int hn = snprintf(head, sizeof head, "%s:0x%llx:%u", name, (unsigned long long)keywords, level);
    size_t len = 0;
    if (hn < 0 || (size_t)hn >= sizeof head || append(out, size, &len, head, (size_t)hn))
        return ss_set_error("provider entry too long"), MANTRA_ERANGE;
    if (!args || !args[0])
        return (int)len;
    size_t args_at = len;
    int rc = append(out, size, &len, ":", 1);
    for (const char *s = args; !rc && *s;) {
        const char *eq, *end = pair_end(s, &eq);
        const char *v = eq < end ? eq + 1 : end;
        size_t vn = (size_t)(end - v);
        int quoted = vn >= 2 && v[0] == '"' && v[vn - 1] == '"';
        int comma = memchr(v, ',', vn) != NULL, quote = memchr(v, '"', vn) != NULL;
        if (memchr(s, '"', (size_t)(v - s)) || (quote && !quoted) || (quoted && memchr(v + 1, '"', vn - 2)))
            return ss_set_error("provider arguments: unbalanced or inner quote"), MANTRA_EINVAL;
        if (memchr(s, ',', (size_t)(v - s)))
            return ss_set_error("provider arguments: a key holds ','"), MANTRA_EINVAL;
        if (comma && !quoted) { /* key=value -> key="value" */
            rc = append(out, size, &len, s, (size_t)(v - s));
            if (!rc && eq == end)
                rc = append(out, size, &len, "=", 1);
            if (!rc)
                rc = append(out, size, &len, "\"", 1);
            if (!rc)
                rc = append(out, size, &len, v, vn);
            if (!rc)
                rc = append(out, size, &len, "\"", 1);
        } else {
            rc = append(out, size, &len, s, (size_t)(end - s));
        }
        if (!rc && *end)
            rc = append(out, size, &len, ";", 1);
        s = *end ? end + 1 : end;
    }
    if (!rc && len - args_at - 1 >= MANTRA_PROVIDER_ARGS_MAX)
        rc = MANTRA_ERANGE;
    if (rc) {
        out[0] = 0;
        ss_set_error("provider entry too long");
    }
    return rc ? rc : (int)len;
}

static const char *const LEVEL_NAMES[] = {"logalways", "critical", "error", "warning", "informational", "verbose"};

int mantra_provider_spec_parse(const char *spec, mantra_provider_spec *out, size_t cap, size_t *count,
                               size_t *err_col) {
    *count = 0;
    g_err[0] = 0;
    if (!spec)
        return fail(1, err_col, "no provider configuration");
    size_t i = 0, n = 0;
    for (;;) {
        size_t start = i;
        while (spec[i] && spec[i] != ':' && spec[i] != ',')
            i++;
        if (i == start)
            return fail(start + 1, err_col, "empty provider name");
        if (i - start >= sizeof out->name)
            return fail(start + 1, err_col, "provider name too long");
        if (n >= cap)
            return (void)fail(start + 1, err_col, "too many providers"), MANTRA_ERANGE;
        mantra_provider_spec *p = &out[n];
        memcpy(p->name, spec + start, i - start);
        p->name[i - start] = 0;
        p->args[0] = 0;
        int star = strcmp(p->name, "*") == 0;
        p->keywords = star ? UINT64_MAX : 0;
        p->level = star ? MANTRA_LEVEL_VERBOSE : MANTRA_LEVEL_INFORMATIONAL;
        if (spec[i] == ':') { /* keywords */
            i++;
            size_t ks = i;
            if (spec[i] == '0' && (spec[i + 1] == 'x' || spec[i + 1] == 'X'))
                i += 2;
            size_t digits = 0;
            uint64_t k = 0;
            while (isxdigit((unsigned char)spec[i])) {
                if (digits == 16)
                    return fail(ks + 1, err_col, "keywords wider than 64 bits");
                int c = tolower((unsigned char)spec[i]);
                k = (k << 4) | (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
                digits++;
                i++;
            }
            if (spec[i] && spec[i] != ':' && spec[i] != ',')
                return fail(i + 1, err_col, "keywords must be hexadecimal (0x...)");
            if (digits == 0 && i != ks)
                return fail(ks + 1, err_col, "keywords must be hexadecimal (0x...)");
            if (digits > 0)
                p->keywords = k;
            if (spec[i] == ':') { /* level */
                i++;
                size_t ls = i;
                while (spec[i] && spec[i] != ':' && spec[i] != ',')
                    i++;
                size_t len = i - ls;
                if (len > 0) {
                    int found = -1;
                    if (isdigit((unsigned char)spec[ls])) {
                        unsigned v = 0;
                        for (size_t j = ls; j < i; j++) {
                            if (!isdigit((unsigned char)spec[j]) || v > 25)
                                return fail(ls + 1, err_col, "level must be 0..255 or a level name");
                            v = v * 10 + (unsigned)(spec[j] - '0');
                        }
                        if (v > 255)
                            return fail(ls + 1, err_col, "level must be 0..255 or a level name");
                        found = (int)v;
                    } else {
                        for (int l = 0; l < 6; l++)
                            if (strlen(LEVEL_NAMES[l]) == len && strncasecmp(spec + ls, LEVEL_NAMES[l], len) == 0)
                                found = l;
                        if (found < 0)
                            return fail(ls + 1, err_col, "unknown level name");
                    }
                    p->level = (uint32_t)found;
                }
                if (spec[i] == ':') { /* filter arguments, kept as written */
                    int rc = parse_args(spec, &i, p, err_col);
                    if (rc)
                        return rc;
                }
            }
        }
        n++;
        if (spec[i] == 0)
            break;
        i++; /* ',' */
        if (spec[i] == 0)
            return fail(i + 1, err_col, "empty provider name");
    }
    *count = n;
    return MANTRA_OK;
}

int mantra_provider_spec_enables(const mantra_provider_spec *specs, size_t count, const char *provider,
                                 const mantra_event_desc *d) {
    const mantra_provider_spec *entry = NULL;
    for (size_t i = 0; i < count && !entry; i++) /* the catch-all shadows named entries */
        if (strcmp(specs[i].name, "*") == 0)
            entry = &specs[i];
    for (size_t i = 0; i < count && !entry; i++)
        if (strcmp(specs[i].name, provider) == 0)
            entry = &specs[i];
    if (!entry)
        return 0;
    uint64_t kw = d->keywords;
    if (kw != UINT64_MAX)
        kw &= ~UINT64_C(0xF00000000000); /* EventSource session bits 44..47 (PR #75248) */
    if (kw != 0 && (kw & entry->keywords) == 0)
        return 0;
    return d->level == 0 || entry->level == 0 || entry->level >= d->level;
}
