/* Fuzz target: provider configurations (mantra_provider_spec_parse), their ARGS
 * (mantra_provider_spec_arg) and mantra_provider_spec_format. A parse either fails with a column
 * inside the input or gives entries whose ARGS are a NUL-terminated piece of the input; every key
 * found in an entry's ARGS reads back a value that is itself a piece of those ARGS; an entry
 * formatted again parses back to itself. Seeds: tests/counters/corpus. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mantra/session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static mantra_provider_spec g_specs[16];

static void check_entry(const mantra_provider_spec *p, const char *input) {
    size_t alen = 0;
    while (alen < sizeof p->args && p->args[alen])
        alen++;
    if (alen == sizeof p->args || (alen && !strstr(input, p->args)))
        abort();
    /* every key before a '=' (quotes ignored: a key that is not one just reads as absent) */
    for (const char *s = p->args; *s;) {
        const char *eq = strchr(s, '='), *semi = strchr(s, ';');
        size_t klen = eq && (!semi || eq < semi) ? (size_t)(eq - s) : strcspn(s, ";");
        char key[64], out[MANTRA_PROVIDER_ARGS_MAX];
        if (klen < sizeof key) {
            memcpy(key, s, klen);
            key[klen] = 0;
            int rc = mantra_provider_spec_arg(p, key, out, sizeof out);
            if (rc != 0 && rc != 1)
                abort();
            if (rc == 1 && out[0] && !strstr(p->args, out))
                abort();
            if (mantra_provider_spec_arg(p, key, out, 1) == 1 && out[0])
                abort(); /* one byte holds only the NUL */
        }
        if (!semi)
            break;
        s = semi + 1;
    }
}

/* mantra_provider_spec_format of a parsed entry parses back to the same entry. */
static void check_format(const mantra_provider_spec *p) {
    static char text[2 * MANTRA_PROVIDER_ARGS_MAX + 256];
    static mantra_provider_spec back[2];
    int n = mantra_provider_spec_format(p->name, p->keywords, p->level, p->args, text, sizeof text);
    if (n < 0)
        return; /* refused (a ':' or ',' in the name, quotes it cannot carry, too long) */
    size_t count = 0;
    if (mantra_provider_spec_parse(text, back, 2, &count, NULL) != 0 || count != 1)
        abort();
    if (strcmp(back[0].name, p->name) != 0 || back[0].keywords != p->keywords || back[0].level != p->level)
        abort();
    if (strchr(p->args, ',') == NULL && strcmp(back[0].args, p->args) != 0)
        abort(); /* nothing to quote: the same bytes */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *input = malloc(size + 1);
    if (!input)
        return 0;
    memcpy(input, data, size);
    input[size] = 0;
    size_t n = 0, col = 0, len = strlen(input);
    int rc = mantra_provider_spec_parse(input, g_specs, 16, &n, &col);
    if (rc == MANTRA_EINVAL && (col == 0 || col > len + 1))
        abort();
    if (rc == 0) {
        if (n == 0 || n > 16)
            abort();
        for (size_t i = 0; i < n; i++) {
            check_entry(&g_specs[i], input);
            check_format(&g_specs[i]);
        }
    }
    free(input);
    return 0;
}
