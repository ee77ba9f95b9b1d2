/* Diagnostics IPC responses as bytes (no I/O): ipc-internal.h.
 *
 * OK is {magic, size, 0xFF, 0x00, 0} and Error {magic, 24, 0xFF, 0xFF, 0} + int32 HRESULT
 * (dotnet/runtime, src/native/eventpipe/ds-protocol.c, ds_ipc_message_send_error and
 * ds_ipc_message_send_success, which always carry an int32); CollectTracing and StopTracing answer
 * OK + uint64 session id (ds-eventpipe-protocol.c); ProcessInfo 1..3 and ProcessEnvironment as
 * ds-process-protocol.c lays them out. */
#include <stdlib.h>
#include <string.h>

#include "common/grow-internal.h"
#include "common/le-internal.h"
#include "common/utf-internal.h"
#include "diag/ipc-internal.h"

void dg_buf_free(dg_buf *b) {
    free(b->data);
    memset(b, 0, sizeof *b);
}

void dg_buf_bytes(dg_buf *b, const void *p, size_t n) {
    if (b->failed)
        return;
    void *d = b->data;
    if (cm_grow(&d, &b->cap, b->size + n, 1, 256) != 0) {
        b->failed = 1;
        return;
    }
    b->data = d;
    if (n)
        memcpy(b->data + b->size, p, n);
    b->size += n;
}

void dg_buf_u16(dg_buf *b, uint16_t v) {
    uint8_t t[2];
    cm_store_u16(t, v);
    dg_buf_bytes(b, t, 2);
}
void dg_buf_u32(dg_buf *b, uint32_t v) {
    uint8_t t[4];
    cm_store_u32(t, v);
    dg_buf_bytes(b, t, 4);
}
void dg_buf_u64(dg_buf *b, uint64_t v) {
    uint8_t t[8];
    cm_store_u64(t, v);
    dg_buf_bytes(b, t, 8);
}

void dg_buf_string(dg_buf *b, const char *utf8) {
    size_t bytes = 0;
    size_t units = utf8 ? cm_utf8_utf16_units(utf8, &bytes) : 0;
    if (!utf8 || units == SIZE_MAX || units >= UINT32_MAX) {
        utf8 = "";
        units = 0;
        bytes = 0;
    }
    dg_buf_u32(b, (uint32_t)(units + 1));
    uint8_t *tmp = malloc(units * 2 + 2);
    if (!tmp) {
        b->failed = 1;
        return;
    }
    size_t w = cm_utf8_to_utf16le(utf8, bytes, tmp);
    tmp[w] = 0;
    tmp[w + 1] = 0;
    dg_buf_bytes(b, tmp, w + 2);
    free(tmp);
}

void dg_buf_header(dg_buf *b, uint8_t set, uint8_t id) {
    dg_buf_bytes(b, DG_MAGIC, DG_MAGIC_SIZE);
    dg_buf_u16(b, 0);
    uint8_t t[4] = {set, id, 0, 0};
    dg_buf_bytes(b, t, 4);
}

int dg_buf_finish(dg_buf *b) {
    if (b->failed || b->size < DG_HEADER_SIZE || b->size > UINT16_MAX)
        return -1;
    cm_store_u16(b->data + 14, (uint16_t)b->size);
    return 0;
}

static size_t fixed(uint8_t *out, uint8_t id, const void *payload, size_t n) {
    memcpy(out, DG_MAGIC, DG_MAGIC_SIZE);
    cm_store_u16(out + 14, (uint16_t)(DG_HEADER_SIZE + n));
    out[16] = DG_SET_SERVER;
    out[17] = id;
    out[18] = 0;
    out[19] = 0;
    memcpy(out + DG_HEADER_SIZE, payload, n);
    return DG_HEADER_SIZE + n;
}

size_t dg_reply_error(uint8_t out[24], uint32_t hresult) {
    uint8_t t[4];
    cm_store_u32(t, hresult);
    return fixed(out, DG_SERVER_ERROR, t, 4);
}

size_t dg_reply_ok_u64(uint8_t out[28], uint64_t v) {
    uint8_t t[8];
    cm_store_u64(t, v);
    return fixed(out, DG_SERVER_OK, t, 8);
}

size_t dg_reply_ok_i32(uint8_t out[24], int32_t v) {
    uint8_t t[4];
    cm_store_u32(t, (uint32_t)v);
    return fixed(out, DG_SERVER_OK, t, 4);
}

int dg_reply_process_info(dg_buf *b, int version, const dg_process_facts *f) {
    dg_buf_header(b, DG_SET_SERVER, DG_SERVER_OK);
    if (version == 3)
        dg_buf_u32(b, 1); /* ProcessInfo3 layout version: 1 adds portableRid */
    dg_buf_u64(b, f->pid);
    dg_buf_bytes(b, f->cookie, 16);
    dg_buf_string(b, f->command_line);
    dg_buf_string(b, f->os);
    dg_buf_string(b, f->arch);
    if (version >= 2) {
        dg_buf_string(b, f->entrypoint);
        dg_buf_string(b, f->version);
    }
    if (version == 3)
        dg_buf_string(b, f->rid);
    return dg_buf_finish(b);
}

int dg_reply_environment(dg_buf *head, dg_buf *body, char *const *env) {
    uint32_t count = 0;
    for (char *const *e = env; e && *e; e++)
        count++;
    dg_buf_u32(body, count);
    for (uint32_t i = 0; i < count; i++)
        dg_buf_string(body, env[i]);
    if (body->failed || body->size > UINT32_MAX)
        return -1;
    dg_buf_header(head, DG_SET_SERVER, DG_SERVER_OK);
    dg_buf_u32(head, (uint32_t)body->size);
    dg_buf_u16(head, 0);
    return dg_buf_finish(head);
}
