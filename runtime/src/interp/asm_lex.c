/* asm_lex.c - the assembler's tokens (identifiers, numbers, strings, GUIDs) and its diagnostics
 * ("FILE:LINE:COL: error: MESSAGE"). Works on one line at a time (ip_asm_state.ls/le/p). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "interp/asm-internal.h"

int ip_asm_error(ip_asm_state *st, ip_asm_loc loc, const char *fmt, ...) {
    if (st->diag != NULL) {
        mantra_interp_diag *d = st->diag;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(d->message, sizeof d->message, fmt, ap);
        va_end(ap);
        d->line = loc.line;
        d->col = loc.col;
        snprintf(d->text, sizeof d->text, "%s:%u:%u: error: %s", st->file, (unsigned)loc.line, (unsigned)loc.col,
                 d->message);
    }
    return MANTRA_EFORMAT;
}

int ip_asm_nomem(ip_asm_state *st) {
    ip_asm_error(st, ip_asm_here(st), "out of memory");
    return MANTRA_ENOMEM;
}

ip_asm_loc ip_asm_here(const ip_asm_state *st) {
    ip_asm_loc l = {st->line, (uint32_t)(st->p - st->ls) + 1};
    return l;
}

char *ip_asm_strndup(const char *s, size_t n) {
    char *d = malloc(n + 1);
    if (d != NULL) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

void ip_asm_skip_blanks(ip_asm_state *st) {
    while (st->p < st->le && (*st->p == ' ' || *st->p == '\t' || *st->p == '\r'))
        st->p++;
}

int ip_asm_at_end(ip_asm_state *st) {
    ip_asm_skip_blanks(st);
    return st->p >= st->le || *st->p == ';';
}

int ip_asm_expect_end(ip_asm_state *st) {
    if (ip_asm_at_end(st))
        return 0;
    unsigned char c = (unsigned char)*st->p;
    if (c >= 0x20 && c < 0x7f)
        return ip_asm_error(st, ip_asm_here(st), "unexpected '%c' at the end of the line", c);
    return ip_asm_error(st, ip_asm_here(st), "unexpected byte 0x%02x at the end of the line", c);
}

static int ident_start(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
}
static int ident_char(int c) {
    return ident_start(c) || (c >= '0' && c <= '9') || c == '.' || c == '<' || c == '>' || c == '`';
}

void ip_asm_ident(ip_asm_state *st, const char **s, size_t *len) {
    ip_asm_skip_blanks(st);
    *s = st->p;
    *len = 0;
    if (st->p >= st->le || !ident_start((unsigned char)*st->p))
        return;
    while (st->p < st->le && ident_char((unsigned char)*st->p))
        st->p++;
    *len = (size_t)(st->p - *s);
}

/* The extent of a number-like token: up to a blank, ',', ';', ')' or the end of the line. */
static size_t token_len(const ip_asm_state *st) {
    const char *q = st->p;
    while (q < st->le && *q != ' ' && *q != '\t' && *q != '\r' && *q != ',' && *q != ';' && *q != ')')
        q++;
    return (size_t)(q - st->p);
}

static int bad_token(ip_asm_state *st, const char *what, size_t n) {
    if (n == 0)
        return ip_asm_error(st, ip_asm_here(st), "expected %s", what);
    if (n > 40)
        n = 40;
    char buf[48];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)st->p[i];
        buf[k++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    buf[k] = '\0';
    return ip_asm_error(st, ip_asm_here(st), "bad %s '%s'", what, buf);
}

int ip_asm_int64(ip_asm_state *st, const char *what, int64_t *out) {
    ip_asm_skip_blanks(st);
    size_t n = token_len(st);
    const char *s = st->p, *e = s + n;
    int neg = 0;
    if (s < e && (*s == '-' || *s == '+')) {
        neg = *s == '-';
        s++;
    }
    unsigned base = 10;
    if (e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    if (s >= e)
        return bad_token(st, what, n);
    uint64_t v = 0;
    for (; s < e; s++) {
        unsigned d;
        char c = *s;
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (base == 16 && c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else if (base == 16 && c >= 'A' && c <= 'F')
            d = (unsigned)(c - 'A' + 10);
        else
            return bad_token(st, what, n);
        if (v > (UINT64_MAX - d) / base)
            return ip_asm_error(st, ip_asm_here(st), "%s out of range", what);
        v = v * base + d;
    }
    /* decimal: the int64 range; hexadecimal: any 64-bit pattern (0xFFFFFFFFFFFFFFFF is -1) */
    if (base == 10 && v > (neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX))
        return ip_asm_error(st, ip_asm_here(st), "%s out of range", what);
    if (neg)
        v = 0u - v;
    memcpy(out, &v, sizeof v);
    st->p += n;
    return 0;
}

int ip_asm_double(ip_asm_state *st, double *out) {
    ip_asm_skip_blanks(st);
    size_t n = token_len(st);
    if (n == 0 || n > 63)
        return bad_token(st, "floating-point number", n);
    char buf[64];
    memcpy(buf, st->p, n);
    buf[n] = '\0';
    /* only digits, signs, '.', 'e'/'E', and the words inf/nan (strtod also takes hex floats; we
     * do not, so that the syntax does not depend on the C library) */
    for (size_t i = 0; i < n; i++) {
        char c = buf[i];
        if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E' ||
              c == 'i' || c == 'n' || c == 'f' || c == 'a'))
            return bad_token(st, "floating-point number", n);
    }
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (end != buf + n || (errno == ERANGE && isinf(v)))
        return bad_token(st, "floating-point number", n);
    *out = v;
    st->p += n;
    return 0;
}

int ip_asm_string(ip_asm_state *st, char **out, uint32_t *len) {
    ip_asm_skip_blanks(st);
    if (st->p >= st->le || *st->p != '"')
        return ip_asm_error(st, ip_asm_here(st), "expected a string literal \"...\"");
    ip_asm_loc start = ip_asm_here(st);
    const char *q = st->p + 1;
    char *buf = malloc((size_t)(st->le - st->p) + 1);
    if (buf == NULL)
        return ip_asm_nomem(st);
    size_t k = 0;
    for (;;) {
        if (q >= st->le) {
            free(buf);
            return ip_asm_error(st, start, "unterminated string literal");
        }
        char c = *q;
        if (c == '"')
            break;
        if (c == '\\') {
            if (q + 1 >= st->le) {
                free(buf);
                return ip_asm_error(st, start, "unterminated string literal");
            }
            char e = q[1];
            switch (e) {
            case 'n': buf[k++] = '\n'; break;
            case 't': buf[k++] = '\t'; break;
            case 'r': buf[k++] = '\r'; break;
            case '0': buf[k++] = '\0'; break;
            case '\\': buf[k++] = '\\'; break;
            case '"': buf[k++] = '"'; break;
            default: {
                ip_asm_loc l = {st->line, (uint32_t)(q - st->ls) + 1};
                free(buf);
                if ((unsigned char)e >= 0x20 && (unsigned char)e < 0x7f)
                    return ip_asm_error(st, l, "unknown escape '\\%c' in a string literal", e);
                return ip_asm_error(st, l, "unknown escape in a string literal");
            }
            }
            q += 2;
            continue;
        }
        buf[k++] = c;
        q++;
    }
    buf[k] = '\0';
    st->p = q + 1;
    *out = buf;
    *len = (uint32_t)k;
    return 0;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, optionally in braces; stored in the .NET layout:
 * Data1 (4 bytes), Data2, Data3 (2 each) little-endian, then the last 8 bytes in text order. */
int ip_asm_guid(ip_asm_state *st, uint8_t guid[16]) {
    ip_asm_skip_blanks(st);
    ip_asm_loc at = ip_asm_here(st);
    const char *q = st->p;
    int brace = q < st->le && *q == '{';
    if (brace)
        q++;
    static const int groups[5] = {8, 4, 4, 4, 12};
    uint8_t raw[16];
    size_t nb = 0;
    for (int g = 0; g < 5; g++) {
        if (g > 0) {
            if (q >= st->le || *q != '-')
                return ip_asm_error(st, at, "bad GUID (expected xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)");
            q++;
        }
        for (int i = 0; i < groups[g]; i += 2) {
            int h = q + 1 < st->le ? hexval(q[0]) : -1, l = q + 1 < st->le ? hexval(q[1]) : -1;
            if (h < 0 || l < 0)
                return ip_asm_error(st, at, "bad GUID (expected xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)");
            raw[nb++] = (uint8_t)(h * 16 + l);
            q += 2;
        }
    }
    if (brace) {
        if (q >= st->le || *q != '}')
            return ip_asm_error(st, at, "bad GUID (expected '}')");
        q++;
    }
    static const uint8_t order[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
    for (int i = 0; i < 16; i++)
        guid[i] = raw[order[i]];
    st->p = q;
    return 0;
}
