/* MANTRA_DiagnosticPorts, in DOTNET_DiagnosticPorts syntax (no I/O): server-internal.h.
 *
 * "ADDRESS[,TAG...][;ADDRESS[,TAG...]]...", TAG one of listen, connect, suspend, nosuspend (any
 * case); an entry is a connect port that suspends unless its tags say otherwise (dotnet/runtime,
 * src/native/eventpipe/ds-ipc.c, ipc_stream_factory_build_and_add_port; ipc-protocol.md
 * "Diagnostic Ports"). ADDRESS is TCP when it ends in ":DIGITS" and holds no '/' ("127.0.0.1:9000",
 * "[::1]:9000", "localhost:9000"), else a Unix socket path. Unlike the .NET runtime, which ignores
 * listen entries here, mantra opens them (docs/diagnostics.md). Empty entries are skipped. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "diag/server-internal.h"
#include "mantra/status.h"

static int tag_is(const char *s, size_t n, const char *word) {
    if (strlen(word) != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)s[i]) != word[i])
            return 0;
    return 1;
}

/* Splits a TCP address into host and port; 1 when it is one, else 0. */
static int split_tcp(const char *a, size_t n, dg_port_spec *p) {
    if (memchr(a, '/', n))
        return 0;
    size_t colon = n;
    while (colon > 0 && a[colon - 1] != ':')
        colon--;
    if (colon == 0 || colon == n || n - colon > 5)
        return 0;
    for (size_t i = colon; i < n; i++)
        if (!isdigit((unsigned char)a[i]))
            return 0;
    size_t hs = 0, he = colon - 1;
    if (he >= 2 && a[0] == '[' && a[he - 1] == ']') {
        hs = 1;
        he--;
    }
    if (he - hs >= sizeof p->host)
        return 0;
    memcpy(p->host, a + hs, he - hs);
    p->host[he - hs] = 0;
    memcpy(p->port, a + colon, n - colon);
    p->port[n - colon] = 0;
    return 1;
}

int dg_parse_ports(const char *text, dg_port_spec *out, size_t cap, size_t *count, char *err, size_t errlen) {
    *count = 0;
    const char *s = text;
    while (*s) {
        const char *end = strchr(s, ';');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        if (len == 0) {
            s += end ? 1 : 0;
            continue;
        }
        size_t alen = 0;
        while (alen < len && s[alen] != ',')
            alen++;
        size_t col = (size_t)(s - text) + 1;
        if (alen == 0 || alen >= sizeof out->address) {
            snprintf(err, errlen, "MANTRA_DiagnosticPorts:%zu: %s", col,
                     alen ? "address too long" : "an entry needs an address before its tags");
            return MANTRA_EINVAL;
        }
        if (*count == cap) {
            snprintf(err, errlen, "MANTRA_DiagnosticPorts:%zu: more than %zu ports", col, cap);
            return MANTRA_ERANGE;
        }
        dg_port_spec *p = &out[*count];
        memset(p, 0, sizeof *p);
        memcpy(p->address, s, alen);
        p->connect = 1;
        p->suspend = 1;
        p->tcp = split_tcp(s, alen, p);
        for (size_t i = alen; i < len;) {
            i++; /* ',' */
            size_t t = i;
            while (i < len && s[i] != ',')
                i++;
            const char *tag = s + t;
            size_t tn = i - t;
            if (tag_is(tag, tn, "listen"))
                p->connect = 0;
            else if (tag_is(tag, tn, "connect"))
                p->connect = 1;
            else if (tag_is(tag, tn, "suspend"))
                p->suspend = 1;
            else if (tag_is(tag, tn, "nosuspend"))
                p->suspend = 0;
            else {
                snprintf(err, errlen,
                         "MANTRA_DiagnosticPorts:%zu: unknown tag \"%.*s\" (listen, connect, suspend, nosuspend)",
                         (size_t)(tag - text) + 1, (int)(tn > 32 ? 32 : tn), tag);
                return MANTRA_EINVAL;
            }
        }
        (*count)++;
        s += len + (end ? 1 : 0);
    }
    return MANTRA_OK;
}
