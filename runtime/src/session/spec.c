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
                if (spec[i] == ':') { /* filter arguments: accepted, ignored for now */
                    while (spec[i] && spec[i] != ',')
                        i++;
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
