/* The reader's fast paths against the plain ones, on every shared fixture
 * ($MANTRA_SHARED_DIR/fixtures/nettrace; absent fixtures SKIP unless MANTRA_REQUIRE_INTEROP=1):
 *
 *   mapped_equals_read   a trace file opened by path with MANTRA_READER_MAP (mapped, input.c) gives
 *                        exactly the events (every header member, payload and stack bytes, decode
 *                        status), counters and error text of the same bytes read by path without it
 *                        (read()), through a pipe and from memory; on Linux the mapping (and its
 *                        absence without the flag) is checked in /proc/self/maps.
 *   plan_equals_walk     every event whose metadata has a decoding plan (field_plan.c) is decoded by
 *                        mantra_decode_event (the plan) and by mantra_decode_payload over the same
 *                        fields (the walking decoder) with identical visitor calls (every mantra_value
 *                        member) and results: whole, cut at several lengths (errors part-way), with a
 *                        visitor that skips arrays and one that stops; with the generated .NET
 *                        providers registered, registry events' decode_status equals the walker's.
 *   manifest_plan_equals_decoder  with the built-in runtime providers (manifest/clr/) loaded, every
 *                        event decoded with a manifest template has a length plan (manifest_check.c)
 *                        whose status equals mantra_manifest_decode's without a visitor: whole, cut
 *                        at every length (short payloads) or at spread lengths, and with a byte added;
 *                        the event's decode_status is that status.
 *   sorted_order_exact   MANTRA_READER_SORTED delivers every fixture's events in exactly the order (and
 *                        with exactly the contents: one digest over every event in order) the
 *                        malloc-per-event queue gave, which the interop tests hold against TraceEvent;
 *                        the queue's pooled event slots (order.c) are allocated a fixed, small number
 *                        of times, not once per event. */
#define _XOPEN_SOURCE 700 /* realpath */

#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "gen/run_tool.h"
#include "mantra/decode.h"
#include "mantra/manifest.h"
#include "mantra/reader.h"
#include "reader/reader-internal.h"
#include "reader_test_util.h"
#ifdef MANTRA_TEST_HAVE_DOTNET
#include "dotnet_registry.h"
#endif

static const char *const fixtures[] = {
    "microsoft-perfview/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace",
    "microsoft-perfview/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace",
    "microsoft-perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace",
    "microsoft-perfview/mixed_managed_external_samples.nettrace",
    "erlendthune-RememberCalendar/trace.nettrace",
    "dotnet-diagnostics/trace.nettrace",
    "synthetic-v6/te-test-ParseMinimalTraceV6.nettrace",
    "synthetic-v6/te-test-ParseV6CompressedEventHeaders.nettrace",
};
#define NFIX ((int)(sizeof fixtures / sizeof fixtures[0]))
/* Events decoded through a plan with the trace's own metadata (no providers registered), by fixture:
 * the events whose metadata has a field list (counted once by this test, stable with the trace). */
static const uint64_t planned_trace_only[] = {0, 5, 0, 1, 1, 3, 0, 0};
/* The same with the generated .NET providers registered (minimal metadata completed from them). */
static const uint64_t planned_with_providers[] = {0, 40, 36857, 6353, 108, 7308, 0, 0};

/* ---- one whole run as a list of 64-bit digests, one per event ---- */

typedef struct run {
    uint64_t *ev;
    size_t n, cap;
    int rc;
    char err[512];
    mantra_reader_stats stats;
    int mapped; /* the fixture's path was in /proc/self/maps while reading (Linux) */
} run;

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * UINT64_C(0x100000001b3);
    return h;
}
#define FNV(h, x) fnv((h), &(x), sizeof(x))

static uint64_t digest(const mantra_trace_event *e) {
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    h = FNV(h, e->metadata_id);
    h = FNV(h, e->metadata->id);
    h = FNV(h, e->sequence);
    h = FNV(h, e->thread_id);
    h = FNV(h, e->capture_thread_id);
    h = FNV(h, e->thread_index);
    h = FNV(h, e->capture_thread_index);
    h = FNV(h, e->processor);
    h = FNV(h, e->stack_id);
    h = FNV(h, e->timestamp);
    h = FNV(h, e->activity_id);
    h = FNV(h, e->related_activity_id);
    h = FNV(h, e->label_list_id);
    h = FNV(h, e->is_sorted);
    h = FNV(h, e->version);
    h = FNV(h, e->level);
    h = FNV(h, e->opcode);
    h = FNV(h, e->keywords);
    h = FNV(h, e->payload_size);
    h = fnv(h, e->payload, e->payload_size);
    h = FNV(h, e->stack_count);
    h = fnv(h, e->stack, e->stack_count * e->pointer_size);
    h = FNV(h, e->pointer_size);
    h = FNV(h, e->offset);
    h = FNV(h, e->decode_status);
    return h;
}

#ifdef __linux__
static int path_mapped(const char *path) {
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL)
        return 0;
    char line[4096];
    int found = 0;
    char *real = realpath(path, NULL);
    while (!found && fgets(line, sizeof line, f))
        found = real && strstr(line, real) != NULL;
    free(real);
    fclose(f);
    return found;
}
#endif

/* how: 0 = path with MANTRA_READER_MAP, 1 = pipe, 2 = memory, 3 = path (read()) */
static void read_all(const char *path, int how, run *out) {
    memset(out, 0, sizeof *out);
    mantra_reader_options o = {how == 0 ? MANTRA_READER_MAP : 0, 0};
    mantra_reader *r = mantra_reader_new(&o);
    ck_assert_ptr_nonnull(r);
    int fds[2] = {-1, -1};
    pid_t child = -1;
    uint8_t *mem = NULL;
    int rc;
    if (how == 0 || how == 3) {
        rc = mantra_reader_open_file(r, path);
    } else if (how == 1) {
        ck_assert_int_eq(pipe(fds), 0);
        child = fork();
        ck_assert_int_ge(child, 0);
        if (child == 0) {
            close(fds[0]);
            size_t n, off = 0;
            char *d = run_tool_read_file(path, &n);
            while (d && off < n) {
                size_t chunk = n - off < 4099 ? n - off : 4099;
                ssize_t k = write(fds[1], d + off, chunk);
                if (k <= 0)
                    _exit(1);
                off += (size_t)k;
            }
            _exit(0);
        }
        close(fds[1]);
        rc = mantra_reader_open_fd(r, fds[0]);
    } else {
        size_t n;
        mem = (uint8_t *)run_tool_read_file(path, &n);
        ck_assert_ptr_nonnull(mem);
        rc = mantra_reader_open_memory(r, mem, n);
    }
    const mantra_trace_event *ev;
    if (rc == 0)
        while ((rc = mantra_reader_next(r, &ev)) > 0) {
            if (out->n == out->cap) {
                out->cap = out->cap ? out->cap * 2 : 1024;
                out->ev = realloc(out->ev, out->cap * sizeof *out->ev);
                ck_assert_ptr_nonnull(out->ev);
            }
            out->ev[out->n++] = digest(ev);
        }
#ifdef __linux__
    if (how == 0 || how == 3)
        out->mapped = path_mapped(path);
#endif
    out->rc = rc;
    snprintf(out->err, sizeof out->err, "%s", mantra_reader_last_error(r));
    out->stats = *mantra_reader_get_stats(r);
    mantra_reader_free(r);
    if (how == 1) {
        close(fds[0]);
        int st;
        waitpid(child, &st, 0);
    }
    free(mem);
}

START_TEST(mapped_equals_read) {
    int must_fail;
    char *p = fixture_path(fixtures[_i], &must_fail);
    if (p == NULL) {
        ck_assert(!must_fail);
        return;
    }
    run a[4];
    for (int how = 0; how < 4; how++)
        read_all(p, how, &a[how]);
#ifdef __linux__
    ck_assert_msg(a[0].mapped, "%s: not mapped while read by path with MANTRA_READER_MAP", fixtures[_i]);
    ck_assert_msg(!a[3].mapped, "%s: mapped while read by path without MANTRA_READER_MAP", fixtures[_i]);
#endif
    for (int how = 1; how < 4; how++) {
        ck_assert_int_eq(a[0].rc, a[how].rc);
        ck_assert_str_eq(a[0].err, a[how].err);
        ck_assert_uint_eq(a[0].n, a[how].n);
        for (size_t i = 0; i < a[0].n; i++)
            ck_assert_msg(a[0].ev[i] == a[how].ev[i], "%s: event %zu differs (mapped / %s)", fixtures[_i], i,
                          how == 1 ? "pipe" : how == 2 ? "memory" : "read()");
        ck_assert_uint_eq(a[0].stats.events, a[how].stats.events);
        ck_assert_uint_eq(a[0].stats.bytes_read, a[how].stats.bytes_read);
        ck_assert_uint_eq(a[0].stats.stacks, a[how].stats.stacks);
        ck_assert_uint_eq(a[0].stats.dropped, a[how].stats.dropped);
        ck_assert_uint_eq(a[0].stats.decode_errors, a[how].stats.decode_errors);
    }
    ck_assert_uint_eq(a[0].stats.events, a[0].n);
    for (int how = 0; how < 4; how++)
        free(a[how].ev);
    free(p);
}
END_TEST

/* ---- visitor calls recorded ---- */

typedef struct rec {
    int kind; /* 0 scalar, 1 begin_object, 2 end_object, 3 begin_array, 4 end_array */
    mantra_value v;
} rec;

typedef struct recorder {
    rec *r;
    size_t n, cap;
    int mode;     /* 0: all, 1: begin_array returns 1 (skip), 2: stop with -7 at call stop_at */
    size_t stop_at;
} recorder;

static int record(recorder *c, int kind, const mantra_value *v) {
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 256;
        c->r = realloc(c->r, c->cap * sizeof *c->r);
        ck_assert_ptr_nonnull(c->r);
    }
    c->r[c->n].kind = kind;
    c->r[c->n].v = *v;
    c->n++;
    if (c->mode == 2 && c->n == c->stop_at)
        return -7;
    if (c->mode == 1 && kind == 3)
        return 1;
    return 0;
}
static int on_scalar(void *c, const mantra_value *v) { return record(c, 0, v); }
static int on_bobj(void *c, const mantra_value *v) { return record(c, 1, v); }
static int on_eobj(void *c, const mantra_value *v) { return record(c, 2, v); }
static int on_barr(void *c, const mantra_value *v) { return record(c, 3, v); }
static int on_earr(void *c, const mantra_value *v) { return record(c, 4, v); }
static const mantra_field_visitor rec_visitor = {on_scalar, on_bobj, on_eobj, on_barr, on_earr};

static void same_value(const rec *a, const rec *b, const char *what, size_t i) {
    const mantra_value *x = &a->v, *y = &b->v;
    ck_assert_msg(a->kind == b->kind, "%s: call %zu kind %d / %d", what, i, a->kind, b->kind);
    ck_assert_msg(x->field == y->field && x->manifest_field == y->manifest_field, "%s: call %zu field", what, i);
    ck_assert_msg(strcmp(x->name, y->name) == 0, "%s: call %zu name %s / %s", what, i, x->name, y->name);
    ck_assert_msg(x->type == y->type && x->depth == y->depth && x->index == y->index && x->offset == y->offset,
                  "%s: call %zu type/depth/index/offset", what, i);
    ck_assert_msg(x->u == y->u && x->i == y->i && memcmp(&x->d, &y->d, sizeof x->d) == 0,
                  "%s: call %zu value %" PRIu64 " / %" PRIu64, what, i, x->u, y->u);
    ck_assert_msg(memcmp(&x->guid, &y->guid, sizeof x->guid) == 0, "%s: call %zu guid", what, i);
    ck_assert_msg(x->data == y->data && x->size == y->size && x->count == y->count,
                  "%s: call %zu data/size/count %zu %zu / %zu %zu", what, i, x->size, x->count, y->size, y->count);
    ck_assert_msg(x->map_text == y->map_text, "%s: call %zu map_text", what, i);
}

/* Decodes e (with payload_size cut to size) both ways with visitor mode; returns 1 when compared. */
static void compare_once(const mantra_trace_event *e, size_t size, int mode, size_t stop_at, const char *what) {
    mantra_trace_event cut = *e;
    cut.payload_size = size;
    recorder a = {NULL, 0, 0, mode, stop_at}, b = {NULL, 0, 0, mode, stop_at};
    int ra = mantra_decode_event(&cut, &rec_visitor, &a);
    int rb = mantra_decode_payload(e->metadata->fields, e->metadata->field_count, e->payload, size, e->pointer_size,
                                   &rec_visitor, &b);
    ck_assert_msg(ra == rb, "%s: plan %d, walk %d (size %zu, mode %d)", what, ra, rb, size, mode);
    ck_assert_msg(a.n == b.n, "%s: plan %zu calls, walk %zu (size %zu, mode %d)", what, a.n, b.n, size, mode);
    for (size_t i = 0; i < a.n; i++)
        same_value(&a.r[i], &b.r[i], what, i);
    free(a.r);
    free(b.r);
}

typedef struct plan_count {
    uint64_t events, planned;
} plan_count;

static void plan_fixture(const char *path, int providers, plan_count *pc) {
    memset(pc, 0, sizeof *pc);
    mantra_reader *r = mantra_reader_new(NULL);
    ck_assert_ptr_nonnull(r);
#ifdef MANTRA_TEST_HAVE_DOTNET
    for (size_t i = 0; providers && i < MANTRA_DOTNET_PROVIDER_COUNT; i++)
        ck_assert_int_eq(mantra_reader_add_provider(r, mantra_dotnet_providers[i]), 0);
#else
    (void)providers;
#endif
    const mantra_trace_event *e;
    int rc = mantra_reader_open_file(r, path);
    if (rc == 0)
        while ((rc = mantra_reader_next(r, &e)) > 0) {
            pc->events++;
            const mantra_trace_metadata *m = e->metadata;
            if (m->fields_from_manifest)
                continue;
            ck_assert_msg((m->plan != NULL) == (m->field_count != 0), "%s: metadata %u: plan %p for %u fields", path,
                          m->id, (const void *)m->plan, m->field_count);
            if (m->plan == NULL)
                continue;
            pc->planned++;
            char what[600];
            snprintf(what, sizeof what, "%s event %" PRIu64 " (metadata %u)", path, pc->events - 1, m->id);
            if (m->fields_from_registry) {
                int w = mantra_decode_payload(m->fields, m->field_count, e->payload, e->payload_size, e->pointer_size,
                                              NULL, NULL);
                int st = w == 0 ? MANTRA_DECODE_OK : w == 1 ? MANTRA_DECODE_TRAILING : MANTRA_DECODE_SHORT;
                ck_assert_msg(e->decode_status == st, "%s: decode_status %d, walker %d", what, e->decode_status, w);
            }
            compare_once(e, e->payload_size, 0, 0, what);
            compare_once(e, e->payload_size, 1, 0, what);
            compare_once(e, e->payload_size, 2, 2, what);
            /* cut at every length for short payloads, else at 16 spread lengths and the last few */
            size_t n = e->payload_size;
            if (n <= 96) {
                for (size_t k = 0; k < n; k++)
                    compare_once(e, k, 0, 0, what);
            } else {
                for (size_t k = 0; k < 16; k++)
                    compare_once(e, n * k / 16, 0, 0, what);
                for (size_t k = n - 5; k < n; k++)
                    compare_once(e, k, 0, 0, what);
            }
        }
    ck_assert_msg(rc == 0 || rc == MANTRA_ETRUNCATED, "%s: %s", path, mantra_reader_last_error(r));
    mantra_reader_free(r);
}

START_TEST(plan_equals_walk) {
    int must_fail;
    char *p = fixture_path(fixtures[_i], &must_fail);
    if (p == NULL) {
        ck_assert(!must_fail);
        return;
    }
    plan_count pc[2];
    for (int prov = 0; prov < 2; prov++) {
        plan_fixture(p, prov, &pc[prov]);
        printf("plan_equals_walk: %s%s: %" PRIu64 " events, %" PRIu64 " decoded through a plan\n", fixtures[_i],
               prov ? " (+ .NET providers)" : "", pc[prov].events, pc[prov].planned);
    }
    ck_assert_uint_eq(pc[0].planned, planned_trace_only[_i]);
#ifdef MANTRA_TEST_HAVE_DOTNET
    ck_assert_uint_eq(pc[1].planned, planned_with_providers[_i]);
#else
    (void)planned_with_providers;
    ck_assert_uint_eq(pc[1].planned, planned_trace_only[_i]);
#endif
    free(p);
}
END_TEST

/* Events decoded with a manifest template (manifest/clr/ loaded), by fixture. */
static const uint64_t manifest_decoded[] = {3, 1965, 105540, 32246, 4692, 19839, 0, 0};

/* The plan's status for payload[0..size) equals the decoder's. */
static void plan_vs_decoder(const mantra_trace_event *e, const uint8_t *payload, size_t size, const char *what) {
    const mantra_trace_metadata *m = e->metadata;
    int want = mantra_manifest_decode(m->manifest_event->tpl, payload, size, e->pointer_size ? e->pointer_size : 8,
                                      NULL, NULL, NULL);
    int got = rd_manifest_plan_check(m->manifest_plan, payload, size);
    ck_assert_msg(got == want, "%s: size %zu: plan %d, decoder %d", what, size, got, want);
}

START_TEST(manifest_plan_equals_decoder) {
    int must_fail;
    char *p = fixture_path(fixtures[_i], &must_fail);
    if (p == NULL) {
        ck_assert(!must_fail);
        return;
    }
    mantra_manifest *clr[2] = {mantra_manifest_load_file("manifest/clr/runtime.yaml", NULL),
                               mantra_manifest_load_file("manifest/clr/eventpipe.yaml", NULL)};
    ck_assert_ptr_nonnull(clr[0]);
    ck_assert_ptr_nonnull(clr[1]);
    mantra_reader *r = mantra_reader_new(NULL);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(mantra_reader_add_manifest(r, clr[0]), 0);
    ck_assert_int_eq(mantra_reader_add_manifest(r, clr[1]), 0);
    uint64_t n_ev = 0, n_man = 0;
    uint8_t *buf = NULL;
    size_t cap = 0;
    const mantra_trace_event *e;
    int rc = mantra_reader_open_file(r, p);
    if (rc == 0)
        while ((rc = mantra_reader_next(r, &e)) > 0) {
            n_ev++;
            const mantra_trace_metadata *m = e->metadata;
            if (!m->fields_from_manifest)
                continue;
            n_man++;
            ck_assert_ptr_nonnull(m->manifest_plan);
            char what[600];
            snprintf(what, sizeof what, "%s event %" PRIu64 " (metadata %u)", fixtures[_i], n_ev - 1, m->id);
            size_t n = e->payload_size;
            ck_assert_int_eq(e->decode_status, mantra_manifest_decode(m->manifest_event->tpl, e->payload, n,
                                                                      e->pointer_size ? e->pointer_size : 8, NULL,
                                                                      NULL, NULL));
            if (n + 1 > cap) {
                cap = 2 * (n + 1);
                buf = realloc(buf, cap);
                ck_assert_ptr_nonnull(buf);
            }
            if (n)
                memcpy(buf, e->payload, n);
            buf[n] = 0x41;
            plan_vs_decoder(e, buf, n + 1, what); /* a byte after the last field */
            plan_vs_decoder(e, buf, n, what);
            if (n <= 96) {
                for (size_t k = 0; k < n; k++)
                    plan_vs_decoder(e, buf, k, what);
            } else {
                for (size_t k = 0; k < 16; k++)
                    plan_vs_decoder(e, buf, n * k / 16, what);
                for (size_t k = n - 5; k < n; k++)
                    plan_vs_decoder(e, buf, k, what);
            }
        }
    printf("manifest_plan_equals_decoder: %s: %" PRIu64 " events, %" PRIu64 " decoded with a manifest\n", fixtures[_i],
           n_ev, n_man);
    ck_assert_msg(rc == 0 || rc == MANTRA_ETRUNCATED, "%s: %s", p, mantra_reader_last_error(r));
    ck_assert_uint_eq(n_man, manifest_decoded[_i]);
    free(buf);
    mantra_reader_free(r);
    mantra_manifest_free(clr[0]);
    mantra_manifest_free(clr[1]);
    free(p);
}
END_TEST

/* Per fixture: events, the digest of the sorted sequence (recorded with the malloc-per-event queue),
 * allocations of the sorted queue (before: one per event). */
static const uint64_t sorted_events[] = {3, 1970, 105540, 32247, 4693, 19842, 0, 7};
static const uint64_t sorted_digest[] = {
    UINT64_C(0x45740b989271c079), UINT64_C(0xea9be73087918a99), UINT64_C(0xd0ef93b785f18424),
    UINT64_C(0xc4e5faaf658a84b2), UINT64_C(0x926359fb73246af3), UINT64_C(0xefd1437511b70fbb),
    UINT64_C(0xcbf29ce484222325), UINT64_C(0xf9b9a2ff3ec4e4bd)};
static const uint64_t sorted_allocs[] = {1, 22, 65, 7, 54, 17, 0, 1};

START_TEST(sorted_order_exact) {
    int must_fail;
    char *p = fixture_path(fixtures[_i], &must_fail);
    if (p == NULL) {
        ck_assert(!must_fail);
        return;
    }
    mantra_reader_options o = {MANTRA_READER_SORTED, 0};
    mantra_reader *r = mantra_reader_new(&o);
    ck_assert_ptr_nonnull(r);
    uint64_t n = 0, h = UINT64_C(0xcbf29ce484222325);
    const mantra_trace_event *e;
    int rc = mantra_reader_open_file(r, p);
    if (rc == 0)
        while ((rc = mantra_reader_next(r, &e)) > 0) {
            uint64_t d = digest(e);
            h = FNV(h, d);
            n++;
        }
    ck_assert_msg(rc == 0 || rc == MANTRA_ETRUNCATED, "%s: %s", p, mantra_reader_last_error(r));
    uint64_t allocs = rd_order_allocations(r->order);
    printf("sorted_order_exact: %s: %" PRIu64 " events, digest 0x%016" PRIx64 ", %" PRIu64 " allocations of the sorted queue (64 KiB chunks, large events)\n",
           fixtures[_i], n, h, allocs);
    fflush(stdout);
    ck_assert_uint_eq(n, sorted_events[_i]);
    ck_assert_uint_eq(h, sorted_digest[_i]);
    ck_assert_uint_eq(allocs, sorted_allocs[_i]);
    mantra_reader_free(r);
    free(p);
}
END_TEST

/* rd_str16_end (field_plan-internal.h: 16 or 8 bytes at a time, the last window overlapping) against
 * the plain unit-by-unit scan on every length up to 72 and every start, over payloads drawn from
 * bytes that trip a has-zero test (0x00, 0x01, 0x80, 0xFF) and one plain byte; each payload in a
 * block of exactly its size, so that a read past the end shows under ASan. */
static size_t str16_end_plain(const uint8_t *p, size_t size, size_t pos) {
    for (size_t i = pos; i + 1 < size; i += 2)
        if (p[i] == 0 && p[i + 1] == 0)
            return i + 2;
    return 0;
}

/* Fills p[0..size) from the draw *x: 0x00, 0x01, 0x80, 0xFF (bytes that trip a has-zero test) or,
 * for the rest of the `of` draws, the plain byte 'a', so that strings run long before their
 * terminator. */
static void fill_drawn(uint8_t *p, size_t size, uint32_t *x, uint32_t of) {
    static const uint8_t alphabet[5] = {0x00, 0x01, 0x80, 0xFF, 0x61};
    for (size_t k = 0; k < size; k++) {
        *x = *x * 1103515245u + 12345u;
        uint32_t c = (*x >> 16) % of;
        p[k] = alphabet[c < 4 ? c : 4];
    }
}

START_TEST(str16_end_equals_unit_scan) {
    uint32_t x = 12345u;
    uint64_t cases = 0, found = 0;
    for (size_t size = 0; size <= 72; size++) {
        uint8_t *p = malloc(size ? size : 1);
        ck_assert_ptr_nonnull(p);
        for (int round = 0; round < 200; round++) {
            fill_drawn(p, size, &x, 8u); /* half of them the plain byte */
            for (size_t pos = 0; pos <= size; pos++) {
                size_t want = str16_end_plain(p, size, pos), got = rd_str16_end(p, size, pos);
                ck_assert_msg(got == want, "size %zu pos %zu round %d: %zu, want %zu", size, pos, round, got, want);
                cases++;
                found += want != 0;
            }
        }
        free(p);
    }
    /* the draw is fixed: these counts only change with it */
    ck_assert_uint_eq(cases, 540200u); /* 200 x (1 + 2 + ... + 73) */
    ck_assert_uint_eq(found, 85886u);
    printf("str16_end_equals_unit_scan: %" PRIu64 " cases, %" PRIu64 " with a terminator\n", cases, found);
}
END_TEST

/* rd_str16_tail_check (field_plan-internal.h: up to four windows, no loop, for strings of up to 33
 * units) against its definition through the plain unit scan, on every size up to 72 and every
 * start, each payload in a block of exactly its size (ASan sees a read past it or before it). */
START_TEST(str16_tail_check_equals_unit_scan) {
    uint32_t x = 4242u;
    uint64_t by_rc[3] = {0, 0, 0}; /* exact, bytes left, no terminator */
    for (size_t size = 0; size <= 72; size++) {
        uint8_t *p = malloc(size ? size : 1);
        ck_assert_ptr_nonnull(p);
        for (int round = 0; round < 200; round++) {
            fill_drawn(p, size, &x, 16u); /* mostly the plain byte: many strings run to the end */
            if (size >= 2 && round % 2 == 0) /* half of them end in a terminator */
                p[size - 1] = p[size - 2] = 0;
            for (size_t pos = 0; pos <= size; pos++) {
                size_t e = str16_end_plain(p, size, pos);
                int want = e == 0 ? MANTRA_EFORMAT : e < size, got = rd_str16_tail_check(p, size, pos);
                ck_assert_msg(got == want, "size %zu pos %zu round %d: %d, want %d", size, pos, round, got, want);
                by_rc[want == 0 ? 0 : want == 1 ? 1 : 2]++;
            }
        }
        free(p);
    }
    printf("str16_tail_check_equals_unit_scan: %" PRIu64 " exact, %" PRIu64 " with bytes left, %" PRIu64 " without a terminator\n",
           by_rc[0], by_rc[1], by_rc[2]);
    ck_assert_uint_eq(by_rc[0] + by_rc[1] + by_rc[2], 540200u);
    /* the draw is fixed: these counts only change with it */
    ck_assert_uint_eq(by_rc[0], 124951u);
    ck_assert_uint_eq(by_rc[1], 29607u);
}
END_TEST

/* The note of rd_plan_check_note, which lets a decode take a trailing string's end from the check
 * (field_plan-internal.h), is never taken for other bytes: not after a check of other bytes at the
 * same address, not after the reader's input buffer moved (rd_plan_forget_notes), not for another size. Each
 * decode is compared with the walking decoder and its results asserted. */
static void note_case(const mantra_field_plan *plan, const mantra_field_desc *f, const uint8_t *p, size_t size,
                      int want_rc, size_t want_calls, size_t want_count, const char *what) {
    recorder a = {NULL, 0, 0, 0, 0}, b = {NULL, 0, 0, 0, 0};
    int ra = rd_plan_decode(plan, p, size, &rec_visitor, &a);
    int rb = mantra_decode_payload(f, 2, p, size, 8, &rec_visitor, &b);
    ck_assert_msg(ra == want_rc && rb == want_rc, "%s: plan %d, walk %d, want %d", what, ra, rb, want_rc);
    ck_assert_msg(a.n == want_calls && b.n == want_calls, "%s: %zu / %zu calls", what, a.n, b.n);
    for (size_t i = 0; i < a.n; i++)
        same_value(&a.r[i], &b.r[i], what, i);
    if (want_calls == 2)
        ck_assert_msg(a.r[1].v.count == want_count, "%s: %zu code units", what, a.r[1].v.count);
    free(a.r);
    free(b.r);
}

START_TEST(plan_note_never_stale) {
    static const mantra_field_desc f[2] = {{"Id", MANTRA_TYPE_UINT32, 0, NULL, NULL, 0},
                                           {"Name", MANTRA_TYPE_STRING, 0, NULL, NULL, 0}};
    cm_arena arena = {NULL, 0};
    rd_plan_head *plans = NULL;
    const mantra_field_plan *plan = rd_plan_build(&arena, f, 2, &plans);
    ck_assert_ptr_nonnull(plan);
    /* Id 7, Name "abcdefgh": 4 + 18 bytes */
    uint8_t p[22] = {7, 0, 0, 0};
    for (int k = 0; k < 8; k++)
        p[4 + 2 * k] = (uint8_t)('a' + k);
    ck_assert_int_eq(rd_plan_check_note(plan, p, sizeof p), 0);
    note_case(plan, f, p, sizeof p, 0, 2, 8, "checked, exact");
    /* the same address and size, a terminator after "ab": the check finds bytes left and clears it */
    p[8] = p[9] = 0;
    ck_assert_int_eq(rd_plan_check_note(plan, p, sizeof p), 1);
    note_case(plan, f, p, sizeof p, 1, 2, 2, "checked again, bytes left");
    /* exact again, then the buffer moves and other bytes are there, not checked */
    p[8] = 'c';
    ck_assert_int_eq(rd_plan_check_note(plan, p, sizeof p), 0);
    rd_plan_forget_notes(plans);
    p[10] = p[11] = 0;
    note_case(plan, f, p, sizeof p, 1, 2, 3, "after the buffer moved");
    /* noted exact for the whole payload; a shorter one at the same address is not taken for it */
    p[10] = 'd';
    ck_assert_int_eq(rd_plan_check_note(plan, p, sizeof p), 0);
    note_case(plan, f, p, sizeof p - 2, MANTRA_EFORMAT, 1, 0, "cut before the terminator");
    note_case(plan, f, p, sizeof p, 0, 2, 8, "the checked payload");
    cm_arena_free(&arena);
}
END_TEST

/* The layouts rd_plan_check_note checks inline (field_plan-internal.h: fixed bytes, then one string
 * or one UInt16-counted array) give what rd_plan_check and the walking decoder give, for every size
 * up to 40 and bytes drawn so that counts and terminators fall everywhere; each payload in a block
 * of exactly its size (ASan sees a read past it). A layout of another shape is checked too. */
START_TEST(inline_check_equals_plan_check) {
    static const mantra_field_desc u16 = {"", MANTRA_TYPE_UINT16, 0, NULL, NULL, 0};
    static const mantra_field_desc i32 = {"", MANTRA_TYPE_INT32, 0, NULL, NULL, 0};
    static const mantra_field_desc s_only[1] = {{"S", MANTRA_TYPE_STRING, 0, NULL, NULL, 0}};
    static const mantra_field_desc u32_s[2] = {{"A", MANTRA_TYPE_UINT32, 0, NULL, NULL, 0},
                                               {"S", MANTRA_TYPE_STRING, 0, NULL, NULL, 0}};
    static const mantra_field_desc fix_s[3] = {{"A", MANTRA_TYPE_BYTE, 0, NULL, NULL, 0},
                                               {"F", MANTRA_TYPE_FIXED_ARRAY, 3, &u16, NULL, 0},
                                               {"S", MANTRA_TYPE_STRING, 0, NULL, NULL, 0}};
    static const mantra_field_desc arr_only[1] = {{"V", MANTRA_TYPE_ARRAY, 0, &i32, NULL, 0}};
    static const mantra_field_desc u64_arr[2] = {{"A", MANTRA_TYPE_UINT64, 0, NULL, NULL, 0},
                                                 {"V", MANTRA_TYPE_ARRAY, 0, &u16, NULL, 0}};
    static const mantra_field_desc s_u32[2] = {{"S", MANTRA_TYPE_STRING, 0, NULL, NULL, 0},
                                               {"A", MANTRA_TYPE_UINT32, 0, NULL, NULL, 0}};
    static const struct {
        const mantra_field_desc *f;
        uint32_t n, shape, prefix;
    } layouts[6] = {{s_only, 1, RD_SHAPE_STR_END, 0},   {u32_s, 2, RD_SHAPE_STR_END, 4},
                    {fix_s, 3, RD_SHAPE_STR_END, 7},    {arr_only, 1, RD_SHAPE_ARRAY_END, 0},
                    {u64_arr, 2, RD_SHAPE_ARRAY_END, 8}, {s_u32, 2, RD_SHAPE_OTHER, 0}};
    static const uint8_t alphabet[4] = {0x00, 0x01, 0x02, 0x61};
    uint32_t x = 777u;
    uint64_t by_rc[3] = {0, 0, 0}; /* exact, bytes left, short */
    for (size_t l = 0; l < 6; l++) {
        cm_arena arena = {NULL, 0};
        rd_plan_head *plans = NULL;
        const mantra_field_plan *plan = rd_plan_build(&arena, layouts[l].f, layouts[l].n, &plans);
        ck_assert_ptr_nonnull(plan);
        uint64_t exact_here = 0;
        ck_assert_uint_eq(plans->shape, layouts[l].shape);
        if (layouts[l].shape != RD_SHAPE_OTHER)
            ck_assert_uint_eq(plans->prefix, layouts[l].prefix);
        for (size_t size = 0; size <= 40; size++) {
            uint8_t *p = malloc(size ? size : 1);
            ck_assert_ptr_nonnull(p);
            for (int round = 0; round < 300; round++) {
                for (size_t k = 0; k < size; k++) {
                    x = x * 1103515245u + 12345u;
                    p[k] = alphabet[(x >> 16) % 4u];
                }
                int want = rd_plan_check(plan, p, size);
                int walk = mantra_decode_payload(layouts[l].f, layouts[l].n, p, size, 8, NULL, NULL);
                int got = rd_plan_check_note(plan, p, size);
                ck_assert_msg(got == want && (want < 0) == (walk < 0) && (want < 0 || want == walk),
                              "layout %zu size %zu round %d: inline %d, plan %d, walk %d", l, size, round, got,
                              want, walk);
                ck_assert_ptr_eq(plans->exact_payload, got == 0 ? p : NULL);
                by_rc[got == 0 ? 0 : got == 1 ? 1 : 2]++;
                exact_here += got == 0;
            }
            free(p);
        }
        ck_assert_msg(exact_here > 0, "layout %zu: no payload held its fields exactly", l);
        cm_arena_free(&arena);
    }
    /* the draw is fixed: these counts only change with it */
    printf("inline_check_equals_plan_check: %" PRIu64 " exact, %" PRIu64 " with bytes left, %" PRIu64 " short\n",
           by_rc[0], by_rc[1], by_rc[2]);
    ck_assert_uint_eq(by_rc[0] + by_rc[1] + by_rc[2], 6u * 41u * 300u);
    ck_assert_uint_eq(by_rc[0], 926u);
    ck_assert_uint_eq(by_rc[1], 20547u);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("reader_fastpath");
    TCase *tc = tcase_create("fastpath");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, mapped_equals_read, 0, NFIX);
    tcase_add_loop_test(tc, plan_equals_walk, 0, NFIX);
    tcase_add_loop_test(tc, manifest_plan_equals_decoder, 0, NFIX);
    tcase_add_loop_test(tc, sorted_order_exact, 0, NFIX);
    tcase_add_test(tc, str16_end_equals_unit_scan);
    tcase_add_test(tc, plan_note_never_stale);
    tcase_add_test(tc, inline_check_equals_plan_check);
    tcase_add_test(tc, str16_tail_check_equals_unit_scan);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
