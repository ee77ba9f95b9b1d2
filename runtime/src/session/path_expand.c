/* Output path templates (mantra/session.h, mantra_output_path_expand): every "{pid}" becomes the
 * process id, as in the .NET runtime's DOTNET_EventPipeOutputPath (../shared/reference/
 * eventpipe-semantics.md, startup sessions), and every "{n}" a number the caller gives (the
 * collection's number in the process), unless it is 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mantra/session.h"
#include "platform/platform-internal.h"
#include "session/startup-internal.h"

char *ss_path_expand(const char *tmpl, uint64_t pid, uint64_t n) {
    char pid_text[24], n_text[24];
    snprintf(pid_text, sizeof pid_text, "%llu", (unsigned long long)pid);
    snprintf(n_text, sizeof n_text, "%llu", (unsigned long long)n);
    static const struct {
        const char *token;
        size_t len;
    } TOKENS[] = {{"{pid}", 5}, {"{n}", 3}};
    size_t need = 1;
    for (const char *s = tmpl; *s;) {
        if (strncmp(s, "{pid}", 5) == 0)
            need += strlen(pid_text), s += 5;
        else if (n && strncmp(s, "{n}", 3) == 0)
            need += strlen(n_text), s += 3;
        else
            need++, s++;
    }
    char *out = malloc(need);
    if (!out)
        return NULL;
    char *o = out;
    for (const char *s = tmpl; *s;) {
        const char *with = NULL;
        size_t skip = 0;
        for (size_t t = 0; t < sizeof TOKENS / sizeof TOKENS[0] && !with; t++)
            if ((t == 0 || n) && strncmp(s, TOKENS[t].token, TOKENS[t].len) == 0) {
                with = t == 0 ? pid_text : n_text;
                skip = TOKENS[t].len;
            }
        if (with) {
            size_t len = strlen(with);
            memcpy(o, with, len);
            o += len;
            s += skip;
        } else {
            *o++ = *s++;
        }
    }
    *o = 0;
    return out;
}

int mantra_output_path_expand(const char *tmpl, uint64_t n, char *out, size_t size) {
    if (tmpl == NULL || out == NULL || size == 0)
        return MANTRA_EINVAL;
    char *p = ss_path_expand(tmpl, mantra_pal_pid(), n);
    if (!p)
        return MANTRA_ENOMEM;
    size_t len = strlen(p);
    int rc = len < size && len <= (size_t)INT32_MAX ? (int)len : MANTRA_ERANGE;
    if (rc >= 0)
        memcpy(out, p, len + 1);
    else
        out[0] = 0;
    free(p);
    return rc;
}
