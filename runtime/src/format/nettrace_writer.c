/* nettrace_writer.c - the public nettrace V5 writer API (mantra/nettrace_writer.h): options,
 * creation (checks, block buffers, the stream header and Trace object), sequence points, flush,
 * finish (final sequence point and end-of-stream tag), statistics and the last error. The stream
 * framing is in nettrace_blocks.c, the event definitions in nettrace_definitions.c, the per-event
 * path in nettrace_event_rows.c, the thread and stack tables in nettrace_threads.c and
 * nettrace_stacks.c.
 *
 * Sources: dotnet/runtime, src/native/eventpipe/ep-file.c (file_write_end: the 0x01 NullReference
 * that ends the stream; the sequence point written before it). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/nettrace-internal.h"
#include "format/sink-internal.h"
#include "platform/platform-internal.h"

int nw_fail(mantra_nettrace_writer *w, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->err, sizeof w->err, fmt, ap);
    va_end(ap);
    return code;
}

void mantra_nettrace_options_init(mantra_nettrace_options *o) {
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->sync_time_unix_ms = MANTRA_NETTRACE_TIME_NOW;
    o->ticks_per_second = 1000000000u;
    o->pointer_size = (uint32_t)sizeof(void *);
    o->process_id = mantra_pal_pid();
    o->processor_count = mantra_pal_cpu_count();
    o->sampling_rate_ns = 1000000u;
    o->block_bytes = NW_DEFAULT_BLOCK_BYTES;
    o->order = MANTRA_NETTRACE_GLOBAL_ORDER;
}

int mantra_nettrace_writer_new(mantra_nettrace_writer **out, mantra_sink *sink, const mantra_nettrace_options *opts) {
    if (!out)
        return MANTRA_EINVAL;
    *out = NULL;
    if (!sink)
        return MANTRA_EINVAL;
    mantra_nettrace_writer *w = calloc(1, sizeof *w);
    if (!w)
        return MANTRA_ENOMEM;
    if (opts)
        w->opts = *opts;
    else
        mantra_nettrace_options_init(&w->opts);
    mantra_nettrace_options *o = &w->opts;
    int rc = MANTRA_OK;
    if (o->block_bytes == 0)
        o->block_bytes = NW_DEFAULT_BLOCK_BYTES;
    if (o->block_bytes < NW_MIN_BLOCK_BYTES)
        o->block_bytes = NW_MIN_BLOCK_BYTES;
    if (o->block_bytes > 16u * 1024 * 1024)
        rc = nw_fail(w, MANTRA_EINVAL, "block_bytes %u is over 16 MiB", o->block_bytes);
    else if (o->pointer_size != 4 && o->pointer_size != 8)
        rc = nw_fail(w, MANTRA_EINVAL, "pointer_size must be 4 or 8, not %u", o->pointer_size);
    else if (o->ticks_per_second == 0)
        rc = nw_fail(w, MANTRA_EINVAL, "ticks_per_second must be > 0");
    else if (o->order > MANTRA_NETTRACE_CALLER_RUNS)
        rc = nw_fail(w, MANTRA_EINVAL, "unknown order mode %u", o->order);
    else if (mantra_sink_bytes_written(sink) != 0)
        rc = nw_fail(w, MANTRA_EINVAL, "the sink has already been written to (offsets must start at 0)");
    if (rc != MANTRA_OK) {
        w->failed = rc;
        *out = w;
        return rc;
    }
    w->sink = sink;
    size_t row_max = NW_ROW_HEADER_MAX + MANTRA_MAX_PAYLOAD;
    w->events.cap = o->block_bytes + row_max;
    w->events.header = NW_BLOCK_HEADER_SIZE;
    w->events.len = NW_BLOCK_HEADER_SIZE;
    w->events.min_ts = UINT64_MAX;
    if (nw_stage_init(w, w->events.cap) != MANTRA_OK ||
        nw_block_init(&w->meta, o->block_bytes + row_max, NW_BLOCK_HEADER_SIZE) != MANTRA_OK ||
        nw_block_init(&w->stacks, o->block_bytes + 4 + (size_t)NW_MAX_STACK_FRAMES * 8, 8) != MANTRA_OK) {
        mantra_nettrace_writer_free(w);
        return MANTRA_ENOMEM;
    }
    w->stack_first_pending = 1;
    /* borrowed rows go out in one writev with the staged blocks; a sink that takes parts one by
     * one (memory, a fixed buffer, callbacks) gets the stage in one write as before: as many
     * calls as parts (the diagnostics stream: a send each), and a failed write could end inside
     * an object where one write of the stage ends between objects */
    w->borrow_min = mantra_sink_gathers(sink) ? NW_BORROW_MIN : SIZE_MAX;
    w->next_metadata_id = 1;
    w->last_sp_offset = 0;
    rc = nw_write_trace_object(w);
    if (rc != MANTRA_OK)
        w->failed = rc;
    *out = w;
    return rc;
}

void mantra_nettrace_writer_free(mantra_nettrace_writer *w) {
    if (!w)
        return;
    free(w->stage_buf);
    free(w->borrows);
    free(w->meta.base);
    free(w->stacks.base);
    for (uint32_t i = 0; i < w->def_count; i++)
        free(w->defs[i].record);
    free(w->defs);
    free(w->desc_slots);
    free(w->threads);
    free(w->thread_slots);
    free(w->stack_list);
    free(w->stack_ips);
    free(w->stack_slots);
    free(w->sp_buf);
    free(w);
}

int mantra_nettrace_sequence_point(mantra_nettrace_writer *w) {
    if (!w)
        return MANTRA_EINVAL;
    int rc = nw_check_usable(w);
    return rc != MANTRA_OK ? rc : nw_write_sequence_point(w);
}

int mantra_nettrace_flush(mantra_nettrace_writer *w) {
    if (!w)
        return MANTRA_EINVAL;
    int rc = nw_check_usable(w);
    if (rc == MANTRA_OK)
        rc = nw_flush_blocks(w);
    if (rc == MANTRA_OK)
        rc = nw_stage_flush(w);
    if (rc == MANTRA_OK && (rc = mantra_sink_flush(w->sink)) != MANTRA_OK) {
        w->failed = rc;
        w->st.io_errors++;
        nw_fail(w, rc, "output error: %s", mantra_sink_last_error(w->sink));
    }
    return rc;
}

int mantra_nettrace_finish(mantra_nettrace_writer *w) {
    if (!w)
        return MANTRA_EINVAL;
    int rc = nw_check_usable(w);
    if (rc != MANTRA_OK)
        return rc;
    if ((rc = nw_write_sequence_point(w)) != MANTRA_OK)
        return rc;
    static const uint8_t end = 0x01; /* NullReference = end of stream */
    if ((rc = nw_sink_write(w, &end, 1)) != MANTRA_OK)
        return rc;
    w->finished = 1;
    if ((rc = mantra_sink_flush(w->sink)) != MANTRA_OK) {
        w->failed = rc;
        w->st.io_errors++;
        return nw_fail(w, rc, "output error: %s", mantra_sink_last_error(w->sink));
    }
    return MANTRA_OK;
}

void mantra_nettrace_get_stats(const mantra_nettrace_writer *w, mantra_nettrace_stats *out) {
    if (!out)
        return;
    if (!w) {
        memset(out, 0, sizeof *out);
        return;
    }
    *out = w->st;
}

const char *mantra_nettrace_last_error(const mantra_nettrace_writer *w) { return w ? w->err : "no writer"; }
