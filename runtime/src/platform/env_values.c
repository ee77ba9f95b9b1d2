/* env_values.c - environment values as libmantra reads them, the same for every port (through
 * mantra_pal_getenv of platform_posix.c or platform_wasi.c): set or not (an empty value counts as
 * unset), unsigned numbers in one strict spelling, and the temporary directory. */
#include "mantra/status.h"
#include "platform-internal.h"

const char *mantra_pal_getenv_set(const char *name) {
    const char *v = mantra_pal_getenv(name);
    return v && v[0] ? v : NULL;
}

static int digit_value(char c, unsigned base) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (base == 16 && c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (base == 16 && c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int mantra_pal_parse_uint(const char *s, unsigned base, uint64_t max, uint64_t *out) {
    if (!s || !s[0] || (base != 10 && base != 16))
        return MANTRA_EINVAL;
    uint64_t n = 0;
    int over = 0;
    /* every character is looked at, also past an overflow: a bad character makes it not a number */
    for (const char *p = s; *p; p++) {
        int d = digit_value(*p, base);
        if (d < 0)
            return MANTRA_EINVAL;
        if (over)
            continue;
        if ((uint64_t)d > max || n > (max - (uint64_t)d) / base)
            over = 1; /* n * base + d > max, decided without wrapping */
        else
            n = n * base + (uint64_t)d;
    }
    if (over)
        return MANTRA_ERANGE;
    *out = n;
    return MANTRA_OK;
}

uint32_t mantra_pal_getenv_u32(const char *name, uint32_t max, uint32_t fallback) {
    uint64_t n;
    return mantra_pal_parse_uint(mantra_pal_getenv_set(name), 10, max, &n) == MANTRA_OK ? (uint32_t)n : fallback;
}

const char *mantra_pal_tmpdir(void) {
    const char *t = mantra_pal_getenv_set("TMPDIR");
    return t ? t : "/tmp";
}
