/* The commands of the diagnostics server (server-internal.h, dg_dispatch): one command per
 * connection, answered, then the connection is closed, except a CollectTracing that started its
 * session, whose connection carries the trace.
 *
 *   EventPipe (0x02): StopTracing 0x01, CollectTracing 0x02..0x06 (versions 1..5);
 *   Process (0x04): ProcessInfo 0x00, ResumeRuntime 0x01, ProcessEnvironment 0x02, ProcessInfo2
 *   0x04, ProcessInfo3 0x08;
 *   anything else: Error UNKNOWN_COMMAND (0x80131385), which the client turns into "unsupported"
 *   and its fallbacks (ipc-protocol.md "Errors"; Microsoft.Diagnostics.NETCore.Client
 *   DiagnosticsClient.ValidateResponseMessage).
 *
 * CollectTracing (dotnet/runtime, src/native/eventpipe/ds-eventpipe-protocol.c): the session's
 * providers are the request's, in dotnet-trace syntax with the filter data as the 4th field
 * (dg_collect_spec); its cap is circularBufferMB; its rundown keywords are the request's (v1: the
 * default 0x80020139; v2/v3: that or none; v4/v5: as sent). requestStackwalk is accepted and
 * recorded nowhere: mantra sessions capture no stacks of their own (events that carry stacks
 * write them through their writers). Refused with NOTSUPPORTED (0x80131515): format 0 (NetPerf; mantra
 * writes nettrace only), CollectTracing5's user_events session type, and CollectTracing5 event-id
 * filters that select anything but "all" (mantra sessions filter by keyword and level only). A
 * session that cannot start gets Error FAIL (0x80004005), as the runtime answers a session id 0.
 *
 * StopTracing stops the session synchronously (ProcessInfo, rundown, final sequence point, end
 * tag, the streaming connection shut down), then answers OK(id); an id that is not a running IPC
 * session is answered OK(id) too (ep.c, ep_disable ignores unknown ids). Only sessions started over
 * IPC are stopped this way: the host's own sessions are its business. */
#include <stdlib.h>
#include <string.h>

#include "diag/server-internal.h"

static void close_fd(int fd) { (void)mantra_pal_close(fd, NULL, 0); }

static void reply_error(dg_server *s, int fd, uint32_t hr) {
    uint8_t e[24];
    dg_send(s, fd, e, dg_reply_error(e, hr));
}

static uint32_t collect(dg_server *s, dg_conn *c) {
    if (s->nstreams == DG_MAX_STREAMS)
        return DG_E_FAIL;
    dg_collect req;
    uint32_t hr = dg_parse_collect(c->h.id, c->msg + DG_HEADER_SIZE, c->h.size - DG_HEADER_SIZE, &req);
    if (!hr && (req.session_type != 0 || req.format == 0))
        hr = DG_E_NOTSUPPORTED;
    for (uint32_t i = 0; !hr && i < req.count; i++) {
        if (req.providers[i].filter_enable) /* enable=0 lets every event through; 1 selects some */
            hr = DG_E_NOTSUPPORTED;
        else if (strpbrk(req.providers[i].name, ",:")) /* would split or shift the provider spec */
            hr = DG_E_FAIL;
    }
    char *spec = hr ? NULL : dg_collect_spec(&req);
    if (!hr && !spec)
        hr = DG_E_FAIL;
    dg_stream *st = hr ? NULL : dg_stream_new(c->fd, s->timeout_ms);
    if (!hr && !st)
        hr = DG_E_FAIL;
    if (hr) {
        free(spec);
        dg_collect_free(&req);
        return hr;
    }
    mantra_session_config cfg;
    mantra_session_config_init(&cfg);
    cfg.providers = spec;
    cfg.output = MANTRA_SESSION_OUTPUT_CALLBACKS;
    cfg.sink_callbacks = &dg_stream_callbacks;
    cfg.sink_ctx = st;
    cfg.buffer_mb = req.buffer_mb;
    cfg.rundown_keywords = req.rundown_keywords;
    atomic_fetch_add(&st->refs, 1); /* the sink's, dropped by its close callback */
    mantra_session_id id = 0;
    int rc = mantra_session_start(&id, &cfg);
    free(spec);
    dg_collect_free(&req);
    if (rc != 0) {
        if (!atomic_load(&st->closed)) /* the sink was never made: its reference is still here */
            dg_stream_unref(st);
        dg_stream_unref(st);
        return DG_E_FAIL;
    }
    st->id = id;
    s->streams[s->nstreams++] = st; /* from here on the server owns c->fd through st */
    uint8_t ok[28];
    if (dg_stream_release(st, ok, dg_reply_ok_u64(ok, id)) != 0)
        atomic_store(&st->broken, 1); /* the next round stops the session */
    return 0;
}

static void stop(dg_server *s, dg_conn *c) {
    uint64_t id = 0;
    uint32_t hr = dg_parse_stop(c->msg + DG_HEADER_SIZE, c->h.size - DG_HEADER_SIZE, &id);
    if (hr) {
        reply_error(s, c->fd, hr);
        return;
    }
    for (size_t i = 0; i < s->nstreams; i++)
        if (s->streams[i]->id == id) {
            (void)mantra_session_stop(id);
            break;
        }
    uint8_t ok[28];
    dg_send(s, c->fd, ok, dg_reply_ok_u64(ok, id));
}

static void process_info(dg_server *s, dg_conn *c, int version) {
    char cmd[4096];
    mantra_pal_command_line(cmd, sizeof cmd);
    dg_process_facts f;
    memset(&f, 0, sizeof f);
    f.pid = mantra_pal_pid();
    memcpy(f.cookie, s->cookie, 16);
    f.command_line = cmd;
    f.os = mantra_pal_os_name();
    f.arch = mantra_pal_arch();
    f.entrypoint = "";
    f.version = ""; /* no CLR version: dotnet-counters then asks for a fresh Metrics session id */
    f.rid = "";
    dg_buf b = {0};
    if (dg_reply_process_info(&b, version, &f) == 0)
        dg_send(s, c->fd, b.data, b.size);
    else
        reply_error(s, c->fd, DG_E_FAIL);
    dg_buf_free(&b);
}

static void environment(dg_server *s, dg_conn *c) {
    dg_buf head = {0}, body = {0};
    if (dg_reply_environment(&head, &body, mantra_pal_environ()) == 0) {
        dg_send(s, c->fd, head.data, head.size);
        dg_send(s, c->fd, body.data, body.size);
    } else {
        reply_error(s, c->fd, DG_E_FAIL);
    }
    dg_buf_free(&head);
    dg_buf_free(&body);
}

static void resume(dg_server *s, dg_conn *c) {
    mantra_pal_mutex_lock(&s->resume_lock);
    if (c->port >= 0 && (size_t)c->port < s->nports)
        s->ports[c->port].resumed = 1;
    mantra_pal_cond_broadcast(&s->resume_cond);
    mantra_pal_mutex_unlock(&s->resume_lock);
    uint8_t ok[24];
    dg_send(s, c->fd, ok, dg_reply_ok_i32(ok, 0));
}

void dg_dispatch(dg_server *s, dg_conn *c) {
    size_t payload = (size_t)c->h.size - DG_HEADER_SIZE;
    uint32_t hr = 0;
    if (c->h.set == DG_SET_EVENTPIPE && c->h.id >= DG_EP_COLLECT && c->h.id <= DG_EP_COLLECT5) {
        if ((hr = collect(s, c)) == 0)
            return; /* the connection streams the trace now */
    } else if (c->h.set == DG_SET_EVENTPIPE && c->h.id == DG_EP_STOP) {
        stop(s, c);
    } else if (c->h.set == DG_SET_PROCESS &&
               (c->h.id == DG_PR_INFO || c->h.id == DG_PR_INFO2 || c->h.id == DG_PR_INFO3 ||
                c->h.id == DG_PR_RESUME || c->h.id == DG_PR_ENV)) {
        if (payload != 0) /* these carry no payload */
            hr = DG_E_BAD_ENCODING;
        else if (c->h.id == DG_PR_RESUME)
            resume(s, c);
        else if (c->h.id == DG_PR_ENV)
            environment(s, c);
        else
            process_info(s, c, c->h.id == DG_PR_INFO ? 1 : c->h.id == DG_PR_INFO2 ? 2 : 3);
    } else {
        hr = DG_E_UNKNOWN_COMMAND;
    }
    if (hr)
        reply_error(s, c->fd, hr);
    close_fd(c->fd);
}
