/* The output of a session: the sink (file or descriptor) and the nettrace writer over it, with the
 * metadata of libmantra's ProcessInfo event; writing ProcessInfo at stop; file rotation (finish the
 * current file, open the next under mantra_session_rotated_path's name). */
#include <stdio.h>
#include <string.h>

#include "format/nettrace-internal.h"
#include "mantra/metadata.h"
#include "session-internal.h"

const char ss_pi_provider[] = "Microsoft-DotNETCore-EventPipe";
/* ProcessInfo, as EventPipe writes it when a session is disabled (dotnet/runtime,
 * src/native/eventpipe/ep.c, disable_holding_lock, and ep-event-source.c): provider
 * Microsoft-DotNETCore-EventPipe, id 1, LogAlways, payload CommandLine, OSInformation,
 * ArchInformation as NUL-terminated UTF-16 strings. Written here directly: libmantra does not
 * depend on generated code. */
static const mantra_event_desc g_pi_desc = {"ProcessInfo", "ProcessInfo", 0, 1, 0, 0, 0, 0, 0, 3, NULL, 0};

/* The nettrace writer over s->sink, with the ProcessInfo metadata. */
static int open_writer(session *s) {
    const mantra_session_config *c = &s->cfg;
    mantra_nettrace_options o;
    mantra_nettrace_options_init(&o);
    o.ticks_per_second = MANTRA_PAL_TICKS_PER_SECOND;
    o.sync_time_ticks = mantra_pal_now_ns();
    o.sync_time_unix_ms = mantra_pal_unix_ms();
    o.process_id = mantra_pal_pid();
    o.processor_count = mantra_pal_cpu_count();
    /* the drain merges all threads by timestamp and places the sequence points itself, where
     * every event before them is written */
    s->sp_bytes = (uint64_t)(c->sequence_point_mb ? c->sequence_point_mb : 10) << 20;
    o.sequence_point_bytes = 0;
    o.order = MANTRA_NETTRACE_CALLER_RUNS; /* per-thread runs: drain.c, drain_runs */
    int rc = mantra_nettrace_writer_new(&s->w, s->sink, &o);
    if (rc != 0) {
        ss_set_error(s->w ? mantra_nettrace_last_error(s->w) : "cannot create the trace writer");
        return rc;
    }
    /* the session's own ids (event_ids.c) are defined in each file; the writer's start above them */
    nw_reserve_ids(s->w, MID_MAX);
    s->file_mids = 0;
    mantra_metadata_builder *b;
    if ((rc = mantra_metadata_builder_new(&b)) != 0)
        return rc;
    const uint8_t *blob;
    size_t bsize;
    rc = mantra_metadata_begin(b, 1, "ProcessInfo", 0, 0, MANTRA_LEVEL_LOG_ALWAYS, 0);
    if (!rc)
        rc = mantra_metadata_field(b, "CommandLine", MANTRA_TYPE_STRING);
    if (!rc)
        rc = mantra_metadata_field(b, "OSInformation", MANTRA_TYPE_STRING);
    if (!rc)
        rc = mantra_metadata_field(b, "ArchInformation", MANTRA_TYPE_STRING);
    if (!rc)
        rc = mantra_metadata_finish(b, &blob, &bsize);
    if (!rc)
        rc = mantra_nettrace_add_event_raw(s->w, ss_pi_provider, blob, bsize, &s->pi_key);
    mantra_metadata_builder_free(b);
    return rc;
}

static int open_file_writer(session *s) {
    char path[4096];
    if (mantra_session_rotated_path(s->cfg.path, s->file_no, path, sizeof path) < 0)
        return ss_set_error("output path too long"), MANTRA_ERANGE;
    int rc = mantra_sink_open_file(&s->sink, path);
    if (rc != 0) {
        ss_set_error(s->sink ? mantra_sink_last_error(s->sink) : "cannot open the output");
        return rc;
    }
    return open_writer(s);
}

int ss_open_output(session *s) {
    const mantra_session_config *c = &s->cfg;
    int rc;
    if (c->output == MANTRA_SESSION_OUTPUT_LISTENER)
        return c->listener ? MANTRA_OK : (ss_set_error("listener output needs a listener"), MANTRA_EINVAL);
    /* every other output is a nettrace stream: the writers encode its rows (dispatch.c) */
    if (!s->rows && ss_ids_init(s) != MANTRA_OK)
        return ss_set_error("out of memory"), MANTRA_ENOMEM;
    if (c->output == MANTRA_SESSION_OUTPUT_FILE) {
        if (!c->path)
            return ss_set_error("file output needs a path"), MANTRA_EINVAL;
        return open_file_writer(s);
    }
    if (c->output == MANTRA_SESSION_OUTPUT_CALLBACKS) {
        if (!c->sink_callbacks || !c->sink_callbacks->write)
            return ss_set_error("callbacks output needs a write callback"), MANTRA_EINVAL;
        if (s->rotate)
            return ss_set_error("rotation needs a file output"), MANTRA_EINVAL;
        rc = mantra_sink_open_callbacks(&s->sink, c->sink_callbacks, c->sink_ctx);
        if (rc != 0) {
            ss_set_error(s->sink ? mantra_sink_last_error(s->sink) : "cannot open the output");
            return rc;
        }
        return open_writer(s);
    }
    if (c->output != MANTRA_SESSION_OUTPUT_FD)
        return ss_set_error("unknown output kind"), MANTRA_EINVAL;
    if (c->fd < 0)
        return ss_set_error("fd output needs a file descriptor"), MANTRA_EINVAL;
    if (s->rotate)
        return ss_set_error("rotation needs a file output"), MANTRA_EINVAL;
    rc = mantra_sink_open_fd(&s->sink, c->fd, 0);
    if (rc != 0) {
        ss_set_error(s->sink ? mantra_sink_last_error(s->sink) : "cannot open the output");
        return rc;
    }
    return open_writer(s);
}

/* Rotation: finish the current file (final sequence point, end tag), open the next. */
int ss_rotate_file(session *s) {
    int rc = mantra_nettrace_finish(s->w);
    mantra_nettrace_stats ns;
    mantra_nettrace_get_stats(s->w, &ns);
    s->bytes_done += ns.bytes;
    int crc = mantra_sink_close(s->sink);
    if (rc || crc) {
        ss_drain_fail(s, rc ? mantra_nettrace_last_error(s->w) : mantra_sink_last_error(s->sink));
        return rc ? rc : crc;
    }
    mantra_nettrace_writer_free(s->w);
    mantra_sink_free(s->sink);
    s->w = NULL;
    s->sink = NULL;
    s->file_no++;
    if ((rc = open_file_writer(s)) != 0)
        ss_drain_fail(s, mantra_session_last_error()); /* open_file_writer set it on this thread */
    return 0;
}

void ss_write_process_info(session *s) {
    static uint8_t payload[MANTRA_MAX_PAYLOAD];
    char cmd[4096], os[256];
    mantra_pal_command_line(cmd, sizeof cmd);
    mantra_pal_os_info(os, sizeof os);
    mantra_data d[3] = {{cmd, 0, MANTRA_DATA_UTF8_AS_UTF16Z}, {os, 0, MANTRA_DATA_UTF8_AS_UTF16Z},
                        {mantra_pal_arch(), 0, MANTRA_DATA_UTF8_AS_UTF16Z}};
    int64_t n = mantra_payload_serialize(d, 3, payload, sizeof payload);
    if (n < 0) { /* a command line that is not UTF-8 */
        d[0].ptr = "";
        n = mantra_payload_serialize(d, 3, payload, sizeof payload);
    }
    if (n < 0)
        return;
    thread_rec *r = ss_current_rec();
    if (!r)
        return;
    atomic_store(&r->writing, s->index + 1);
    ss_write_one(s, r, &g_pi_desc, NULL, payload, (uint32_t)n);
    atomic_store_explicit(&r->writing, 0, memory_order_release);
}

int mantra_session_rotated_path(const char *path, uint32_t n, char *out, size_t size) {
    if (!path || !out)
        return MANTRA_EINVAL;
    size_t len = strlen(path);
    if (n == 0) {
        if (len + 1 > size)
            return MANTRA_ERANGE;
        memcpy(out, path, len + 1);
        return (int)len;
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t stem = dot && dot != base ? (size_t)(dot - path) : len;
    char num[16];
    int k = snprintf(num, sizeof num, ".%u", n);
    if (stem + (size_t)k + (len - stem) + 1 > size)
        return MANTRA_ERANGE;
    memcpy(out, path, stem);
    memcpy(out + stem, num, (size_t)k);
    memcpy(out + stem + (size_t)k, path + stem, len - stem + 1);
    return (int)(len + (size_t)k);
}
