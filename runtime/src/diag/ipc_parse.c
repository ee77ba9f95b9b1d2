/* The diagnostics IPC header and command payloads, parsed from bytes (no I/O): ipc-internal.h.
 *
 * Layouts: dotnet/diagnostics, documentation/design-docs/ipc-protocol.md; the rules of the runtime's
 * own parser: dotnet/runtime, src/native/eventpipe/ds-protocol.c (ipc_message_try_parse, strings:
 * ipc_message_try_parse_string_utf16_t_byte_array) and ds-eventpipe-protocol.c (CollectTracing 1..5:
 * buffer > 0, format < 2, 1..1000 providers, level <= 5, non-empty provider name). A payload with
 * bytes left over after the last field is refused too: nothing the client sends has any. */
#include <stdlib.h>
#include <string.h>

#include "common/utf-internal.h"
#include "diag/ipc-internal.h"
#include "mantra/decode.h"
#include "mantra/diag_client.h"
#include "mantra/session.h"

uint32_t dg_parse_header(const uint8_t *b, dg_header *h) {
    /* the runtime compares the magic as a C string (ds-server.c): all 14 bytes, NUL included */
    if (memcmp(b, DG_MAGIC, DG_MAGIC_SIZE) != 0)
        return DG_E_UNKNOWN_MAGIC;
    h->size = mantra_load_u16(b + 14);
    h->set = b[16];
    h->id = b[17];
    h->reserved = mantra_load_u16(b + 18);
    return h->size < DG_HEADER_SIZE ? DG_E_BAD_ENCODING : 0;
}

/* A bounds-checked reader of the payload. */
typedef struct rd {
    const uint8_t *p;
    size_t n, at;
    int bad;
} rd;

static const uint8_t *take(rd *r, size_t k) {
    if (r->bad || r->n - r->at < k) {
        r->bad = 1;
        return NULL;
    }
    const uint8_t *q = r->p + r->at;
    r->at += k;
    return q;
}
static uint32_t u32(rd *r) {
    const uint8_t *q = take(r, 4);
    return q ? mantra_load_u32(q) : 0;
}
static uint64_t u64(rd *r) {
    const uint8_t *q = take(r, 8);
    return q ? mantra_load_u64(q) : 0;
}
static int u8(rd *r) {
    const uint8_t *q = take(r, 1);
    return q ? q[0] : 0;
}

/* A protocol string: uint32 units with the NUL, UTF-16LE. Length 0 is null (*out NULL). A non-zero
 * length must end in a NUL unit. UTF-8 in *out (malloc'd); invalid UTF-16 is bad encoding. */
static void str(rd *r, char **out) {
    *out = NULL;
    uint32_t units = u32(r);
    if (r->bad || units == 0)
        return;
    if (units > (r->n - r->at) / 2) {
        r->bad = 1;
        return;
    }
    const uint8_t *q = take(r, (size_t)units * 2);
    if (!q || mantra_load_u16(q + (size_t)(units - 1) * 2) != 0) {
        r->bad = 1;
        return;
    }
    size_t bytes = (size_t)(units - 1) * 2;
    for (size_t i = 0; i < bytes; i += 2) /* an embedded NUL ends the C string early: refuse it */
        if (mantra_load_u16(q + i) == 0) {
            r->bad = 1;
            return;
        }
    char *s = malloc(bytes / 2 * 3 + 1);
    if (!s) {
        r->bad = 1;
        return;
    }
    enum cm_utf16_problem why;
    size_t len = cm_utf16_to_utf8(q, bytes, 1, (uint8_t *)s, &why);
    if (len == SIZE_MAX) {
        free(s);
        r->bad = 1;
        return;
    }
    s[len] = 0;
    *out = s;
}

void dg_collect_free(dg_collect *c) {
    if (!c)
        return;
    for (uint32_t i = 0; c->providers && i < c->count; i++) {
        free(c->providers[i].name);
        free(c->providers[i].args);
    }
    free(c->providers);
    memset(c, 0, sizeof *c);
}

static void providers(rd *r, dg_collect *c, int with_filter) {
    uint32_t count = u32(r);
    if (r->bad || count == 0 || count > DG_MAX_PROVIDERS) {
        r->bad = 1;
        return;
    }
    c->providers = calloc(count, sizeof *c->providers);
    if (!c->providers) {
        r->bad = 1;
        return;
    }
    for (uint32_t i = 0; i < count && !r->bad; i++) {
        dg_provider_config *pc = &c->providers[i];
        c->count = i + 1;
        pc->keywords = u64(r);
        pc->level = u32(r);
        str(r, &pc->name);
        str(r, &pc->args);
        if (with_filter) { /* event_filter {bool enable; array<uint32> ids}, never omitted */
            pc->filter_enable = u8(r);
            pc->filter_ids = u32(r);
            if (!r->bad && (uint64_t)pc->filter_ids * 4 > r->n - r->at)
                r->bad = 1;
            else
                (void)take(r, (size_t)pc->filter_ids * 4);
        }
        if (pc->level > DG_MAX_LEVEL || !pc->name || !pc->name[0])
            r->bad = 1;
        if (pc->args && !pc->args[0]) {
            free(pc->args);
            pc->args = NULL;
        }
    }
}

uint32_t dg_parse_collect(uint8_t id, const uint8_t *p, size_t n, dg_collect *out) {
    memset(out, 0, sizeof *out);
    if (id < DG_EP_COLLECT || id > DG_EP_COLLECT5)
        return DG_E_UNKNOWN_COMMAND;
    rd r = {p, n, 0, 0};
    out->version = (uint32_t)(id - DG_EP_COLLECT + 1);
    out->rundown_keywords = UINT64_C(0x80020139); /* ep.c, ep_default_rundown_keyword */
    out->stackwalk = 1;
    if (out->version == 5) {
        out->session_type = u32(&r);
        if (out->session_type != 0) /* user_events: its payload differs; the caller refuses it */
            return r.bad ? DG_E_BAD_ENCODING : 0;
    }
    out->buffer_mb = u32(&r);
    out->format = u32(&r);
    if (out->version == 2 || out->version == 3)
        out->rundown_keywords = u8(&r) ? UINT64_C(0x80020139) : 0;
    if (out->version >= 4)
        out->rundown_keywords = u64(&r);
    if (out->version >= 3)
        out->stackwalk = u8(&r) != 0;
    if (!r.bad && (out->buffer_mb == 0 || out->format >= 2))
        r.bad = 1;
    if (!r.bad)
        providers(&r, out, out->version == 5);
    if (!r.bad && r.at != r.n)
        r.bad = 1;
    return r.bad ? DG_E_BAD_ENCODING : 0;
}

uint32_t dg_parse_stop(const uint8_t *p, size_t n, uint64_t *id) {
    if (n != 8)
        return DG_E_BAD_ENCODING;
    *id = mantra_load_u64(p);
    return 0;
}

/* One implementation of the quoting: mantra_provider_spec_format (mantra/session.h) writes each
 * entry so that mantra_provider_spec_parse reads back the request's name, keywords, level and filter
 * data (a value holding ',' gets quoted, as the Metrics list of dotnet-counters does). */
char *dg_collect_spec(const dg_collect *c) {
    size_t need = 1;
    for (uint32_t i = 0; i < c->count; i++) /* name, ":0x" 16 digits ":" 10 digits ":" args*2+2 "," */
        need += strlen(c->providers[i].name) + 40 +
                (c->providers[i].args ? 2 * strlen(c->providers[i].args) + 2 : 0);
    char *spec = malloc(need);
    if (!spec)
        return NULL;
    size_t len = 0;
    spec[0] = 0;
    for (uint32_t i = 0; i < c->count; i++) {
        const dg_provider_config *pc = &c->providers[i];
        if (i)
            spec[len++] = ',';
        int k = mantra_provider_spec_format(pc->name, pc->keywords, pc->level <= DG_MAX_LEVEL ? pc->level : DG_MAX_LEVEL,
                                            pc->args, spec + len, need - len);
        if (k < 0) {
            free(spec);
            return NULL;
        }
        len += (size_t)k;
    }
    spec[len] = 0;
    return spec;
}

/* ---- replies (the client side) ---- */

int dg_parse_reply(const dg_header *h, const uint8_t *p, size_t n, uint32_t *hresult) {
    if (h->set != DG_SET_SERVER)
        return -1;
    if (h->id == DG_SERVER_OK)
        return 0;
    if (h->id != DG_SERVER_ERROR || n < 4)
        return -1;
    *hresult = mantra_load_u32(p);
    return 1;
}

/* A string of a reply: "" for a null one, so that callers never see NULL. */
static char *reply_str(rd *r) {
    char *s;
    str(r, &s);
    if (!s && !r->bad) {
        s = malloc(1);
        if (s)
            s[0] = 0;
        else
            r->bad = 1;
    }
    return s;
}

int dg_parse_process_info(int version, const uint8_t *p, size_t n, mantra_diag_process_info *out) {
    memset(out, 0, sizeof *out);
    rd r = {p, n, 0, 0};
    if (version == 3)
        (void)u32(&r); /* the layout version: 1 adds portableRid */
    out->version = version;
    out->pid = u64(&r);
    const uint8_t *cookie = take(&r, 16);
    if (cookie)
        memcpy(out->cookie, cookie, 16);
    out->command_line = reply_str(&r);
    out->os = reply_str(&r);
    out->arch = reply_str(&r);
    if (version >= 2) {
        out->entrypoint = reply_str(&r);
        out->runtime_version = reply_str(&r);
    }
    if (version == 3 && r.at < r.n)
        out->rid = reply_str(&r);
    if (r.bad) {
        mantra_diag_process_info_free(out);
        return -1;
    }
    return 0;
}
