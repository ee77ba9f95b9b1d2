/* ipc-internal.h - the diagnostics IPC protocol without I/O (ipc_parse.c: headers and command
 * payloads; ipc_reply.c: responses). Facts from dotnet/diagnostics,
 * documentation/design-docs/ipc-protocol.md, and dotnet/runtime, src/native/eventpipe/ds-protocol.c,
 * ds-eventpipe-protocol.c, ds-process-protocol.c. Private to src/diag (prefix dg_). */
#ifndef MANTRA_DIAG_IPC_INTERNAL_H
#define MANTRA_DIAG_IPC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* The 20-byte header: magic "DOTNET_IPC_V1\0", uint16 size (header + payload), command set, command
 * id, uint16 reserved (ipc-protocol.md, "Headers"). */
#define DG_HEADER_SIZE 20u
#define DG_MAGIC "DOTNET_IPC_V1"
#define DG_MAGIC_SIZE 14u

/* Command sets and ids (ipc-protocol.md "Commands"; Microsoft.Diagnostics.NETCore.Client IpcCommands.cs). */
#define DG_SET_DUMP 0x01u
#define DG_SET_EVENTPIPE 0x02u
#define DG_SET_PROFILER 0x03u
#define DG_SET_PROCESS 0x04u
#define DG_SET_SERVER 0xFFu
#define DG_EP_STOP 0x01u
#define DG_EP_COLLECT 0x02u  /* CollectTracing; 0x03..0x06 are CollectTracing2..5 */
#define DG_EP_COLLECT5 0x06u
#define DG_PR_INFO 0x00u
#define DG_PR_RESUME 0x01u
#define DG_PR_ENV 0x02u
#define DG_PR_INFO2 0x04u
#define DG_PR_INFO3 0x08u
#define DG_SERVER_OK 0x00u
#define DG_SERVER_ERROR 0xFFu

/* HRESULTs of error responses (ipc-protocol.md "Errors"; client IpcMessage.cs). */
#define DG_E_BAD_ENCODING 0x80131384u
#define DG_E_UNKNOWN_COMMAND 0x80131385u
#define DG_E_UNKNOWN_MAGIC 0x80131386u
#define DG_E_NOTSUPPORTED 0x80131515u
#define DG_E_FAIL 0x80004005u
#define DG_E_INVALIDARG 0x80070057u

/* Limits of CollectTracing (ds-eventpipe-protocol.c): 1..1000 providers, level <= 5, format < 2. */
#define DG_MAX_PROVIDERS 1000u
#define DG_MAX_LEVEL 5u

typedef struct dg_header {
    uint16_t size; /* header + payload */
    uint8_t set;
    uint8_t id;
    uint16_t reserved;
} dg_header;

/* Parses the first DG_HEADER_SIZE bytes of b. 0, or the HRESULT to answer with: UNKNOWN_MAGIC when
 * the magic differs, BAD_ENCODING when size < 20 (ds-protocol.c, ipc_message_try_parse). */
uint32_t dg_parse_header(const uint8_t *b, dg_header *h);

/* One provider of a CollectTracing payload. */
typedef struct dg_provider_config {
    uint64_t keywords;
    uint32_t level;
    char *name;         /* UTF-8, never empty */
    char *args;         /* UTF-8 filter data, NULL when absent or empty */
    int filter_enable;  /* CollectTracing5 event filter: enable flag ... */
    uint32_t filter_ids; /* ... and the number of event ids (0 and 0: no filter) */
} dg_provider_config;

typedef struct dg_collect {
    uint32_t version;          /* 1..5 (CollectTracing, CollectTracing2, ...) */
    uint32_t session_type;     /* CollectTracing5: 0 streaming, 1 user_events; else 0 */
    uint32_t buffer_mb;
    uint32_t format;           /* 0 NetPerf, 1 NetTrace */
    uint64_t rundown_keywords; /* v1: default; v2/v3: default or 0 (requestRundown); v4/v5: as sent */
    int stackwalk;             /* v1/v2: 1; v3+: requestStackwalk */
    uint32_t count;
    dg_provider_config *providers;
} dg_collect;

/* Parses the payload of EventPipe command id (DG_EP_COLLECT..DG_EP_COLLECT5) into *out (free with
 * dg_collect_free, also after a failure). 0, or the HRESULT to answer: BAD_ENCODING for anything
 * the runtime's parser refuses (truncated, trailing bytes, buffer 0, format >= 2, count 0 or over
 * 1000, level > 5, empty or unterminated name), INVALIDARG... never: the parser knows no more. */
uint32_t dg_parse_collect(uint8_t id, const uint8_t *p, size_t n, dg_collect *out);
void dg_collect_free(dg_collect *c);

/* StopTracing: a uint64 session id and nothing else. 0 or BAD_ENCODING. */
uint32_t dg_parse_stop(const uint8_t *p, size_t n, uint64_t *id);

/* The dotnet-trace provider spec of c ("Name:0xkeywords:LEVEL[:ARGS]" joined by commas, each entry
 * by mantra_provider_spec_format: a key=value pair whose value holds ',' gets the value quoted),
 * malloc'd. NULL when out of memory or when the filter data cannot be written so that the spec
 * parser reads it back (a quote inside a value, a comma in a key). */
char *dg_collect_spec(const dg_collect *c);

/* ---- responses (ipc_reply.c) ---- */

/* A growable response buffer. */
typedef struct dg_buf {
    uint8_t *data;
    size_t size, cap;
    int failed; /* out of memory, or over 65535 bytes for a framed message */
} dg_buf;
void dg_buf_free(dg_buf *b);
void dg_buf_bytes(dg_buf *b, const void *p, size_t n);
void dg_buf_u16(dg_buf *b, uint16_t v);
void dg_buf_u32(dg_buf *b, uint32_t v);
void dg_buf_u64(dg_buf *b, uint64_t v);
/* A protocol string: uint32 units including the NUL, then UTF-16LE; "" is 1 unit (never 0: the
 * client's IpcHelpers.ReadString cannot read an empty one). Invalid UTF-8 is sent as "". */
void dg_buf_string(dg_buf *b, const char *utf8);
/* Starts a message: the header with set and id, size patched by dg_buf_finish. */
void dg_buf_header(dg_buf *b, uint8_t set, uint8_t id);
/* Patches the size; 0, or -1 when the message failed or is over 65535 bytes. */
int dg_buf_finish(dg_buf *b);

/* Fixed responses into out (24 or 28 bytes); the size. */
size_t dg_reply_error(uint8_t out[24], uint32_t hresult);
size_t dg_reply_ok_u64(uint8_t out[28], uint64_t v);
size_t dg_reply_ok_i32(uint8_t out[24], int32_t v);

/* What ProcessInfo 1..3 report. */
typedef struct dg_process_facts {
    uint64_t pid;
    uint8_t cookie[16];
    const char *command_line, *os, *arch, *entrypoint, *version, *rid;
} dg_process_facts;
/* ProcessInfo (version 1), ProcessInfo2 (2) or ProcessInfo3 (3) response (ds-process-protocol.c;
 * wire order pid, cookie, strings). 0 or -1 (memory). */
int dg_reply_process_info(dg_buf *b, int version, const dg_process_facts *f);
/* ProcessEnvironment: the OK response {uint32 nIncomingBytes; uint16 future} in head, and the
 * continuation {uint32 count; string...} in body. 0 or -1. */
int dg_reply_environment(dg_buf *head, dg_buf *body, char *const *env);

/* ---- the client side: requests (ipc_request.c) and replies (ipc_parse.c) ---- */

struct mantra_diag_collect_request;
struct mantra_diag_process_info;

/* A command without payload (ProcessInfo 1..3, ResumeRuntime). 0 or -1. */
int dg_request_simple(dg_buf *b, uint8_t set, uint8_t id);
/* StopTracing(id). 0 or -1. */
int dg_request_stop(dg_buf *b, uint64_t id);
/* The CollectTracing that dotnet-trace would send for req (EventPipeSession.CreateStartMessage):
 * CollectTracing2 when the rundown keywords are the default or 0 and stacks are on, 3 when stacks
 * are off, 4 for other rundown keywords; format 1 (NetTrace). 0, -1 (memory or over 65535 bytes),
 * or -2 when req is invalid (no providers, over 1000, a level over 5, an empty name). */
int dg_request_collect(dg_buf *b, const struct mantra_diag_collect_request *req);

/* The payload of a reply whose header h was parsed: 0 for OK with the payload left to the caller;
 * for an error reply, its HRESULT in *hresult and 1; BAD_ENCODING as -1 when the reply is neither
 * (another command set, or an error without its 4 bytes). */
int dg_parse_reply(const dg_header *h, const uint8_t *p, size_t n, uint32_t *hresult);
/* The OK payload of ProcessInfo (version 1), ProcessInfo2 (2) or ProcessInfo3 (3) into *out (free
 * with mantra_diag_process_info_free, also after a failure). 0, or -1 when the bytes do not hold it. */
int dg_parse_process_info(int version, const uint8_t *p, size_t n, struct mantra_diag_process_info *out);

#endif
