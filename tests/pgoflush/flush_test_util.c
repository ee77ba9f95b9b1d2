/* flush_test_util.c - see flush_test_util.h. */
#define _POSIX_C_SOURCE 200809L
#include "flush_test_util.h"

#include <check.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mantra/pgo.h"
#include "mantra/pump.h"
#include "mantra/reader.h"

static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t le64(const uint8_t *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

/* Skips a NUL-terminated UTF-16 string at p (ASCII copied into out); returns the bytes taken. */
static size_t utf16(const uint8_t *p, size_t avail, char *out, size_t cap) {
    size_t i = 0, k = 0;
    for (; i + 1 < avail; i += 2) {
        uint16_t c = (uint16_t)(p[i] | p[i + 1] << 8);
        if (c == 0)
            break;
        if (k + 1 < cap)
            out[k++] = (char)c;
    }
    if (cap)
        out[k] = '\0';
    ck_assert_uint_lt(i + 1, avail);
    return i + 2;
}

static ft_method *method_of(ft_trace *t, uint64_t id) {
    for (uint32_t i = 0; i < t->nmethods; i++)
        if (t->methods[i].method_id == id)
            return &t->methods[i];
    ck_assert_uint_lt(t->nmethods, FT_MAX_METHODS);
    ft_method *m = &t->methods[t->nmethods++];
    memset(m, 0, sizeof *m);
    m->method_id = id;
    m->in_order = 1;
    return m;
}

void ft_read(const char *path, ft_trace *t) {
    memset(t, 0, sizeof *t);
    mantra_reader *r = mantra_reader_new(NULL);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(mantra_reader_open_file(r, path), 0);
    mantra_pgo_reassembler *ra = mantra_pgo_reassembler_new();
    int32_t last[FT_MAX_METHODS];
    for (int i = 0; i < FT_MAX_METHODS; i++)
        last[i] = -1;
    const mantra_trace_event *ev;
    int rc;
    while ((rc = mantra_reader_next(r, &ev)) == 1) {
        if (strcmp(ev->metadata->provider, "Microsoft-Windows-DotNETRuntime") != 0)
            continue;
        const uint8_t *p = ev->payload;
        size_t n = ev->payload_size;
        if (ev->metadata->event_id == 152) {
            t->module_loads++;
        } else if (ev->metadata->event_id == 143) {
            t->method_loads++;
            method_of(t, le64(p))->method_loads++;
        } else if (ev->metadata->event_id == 298) {
            t->chunks++;
            ck_assert_uint_ge(n, 30);
            uint32_t flags = le32(p + 2), size = le32(p + 6);
            uint64_t id = le64(p + 10);
            ft_method *m = method_of(t, id);
            m->token = le32(p + 26);
            size_t at = 30;
            char ns[64];
            at += utf16(p + at, n - at, ns, sizeof ns);
            at += utf16(p + at, n - at, m->name, sizeof m->name);
            at += utf16(p + at, n - at, ns, 0);
            ck_assert_uint_eq(n - at, size);
            int32_t idx = (int32_t)(flags & ~MANTRA_PGO_CHUNK_FINAL);
            int32_t *lp = &last[m - t->methods];
            if (idx != *lp + 1)
                m->in_order = 0;
            *lp = (flags & MANTRA_PGO_CHUNK_FINAL) ? -1 : idx;
            m->chunks++;
            if (mantra_pgo_reassembler_add(ra, id, flags, p + at, size) == 1)
                m->complete++;
        }
    }
    ck_assert_int_eq(rc, 0);
    t->complete = mantra_reader_complete(r);
    size_t done = mantra_pgo_reassembler_finish(ra);
    for (size_t i = 0; i < done; i++) {
        uint64_t key;
        const uint8_t *data;
        size_t size;
        ck_assert_int_eq(mantra_pgo_reassembler_get(ra, i, &key, &data, &size), 0);
        mantra_pgo_data d;
        size_t where;
        ck_assert_int_eq(mantra_pgo_decode(data, size, 8, &d, &where), 0);
        ft_method *m = method_of(t, key);
        size_t k = 0;
        m->probes[0] = '\0';
        for (size_t j = 0; j < d.records && j < d.value_count && k + 32 < sizeof m->probes; j++)
            k += (size_t)snprintf(m->probes + k, sizeof m->probes - k, "%s%04x:%u", j ? " " : "",
                                  (unsigned)d.schema[j].il_offset, (unsigned)(uint32_t)d.values[j]);
        mantra_pgo_data_free(&d);
    }
    mantra_pgo_reassembler_free(ra);
    mantra_reader_free(r);
}

const ft_method *ft_find(const ft_trace *t, const char *name) {
    for (uint32_t i = 0; i < t->nmethods; i++)
        if (strcmp(t->methods[i].name, name) == 0)
            return &t->methods[i];
    return NULL;
}

mantra_interp_program *ft_load(const char *text, int mode, const char *filter, mantra_interp_module **mod) {
    mantra_interp_diag d;
    ck_assert_msg(mantra_interp_assemble(text, strlen(text), "t.masm", mod, &d) == 0, "%s", d.text);
    mantra_interp_load_options o;
    mantra_interp_load_options_init(&o);
    o.pgo_mode = mode;
    o.pgo_methods = filter ? filter : "";
    mantra_interp_program *p = NULL;
    ck_assert_int_eq(mantra_interp_load(*mod, &o, &p), 0);
    return p;
}

void ft_run(mantra_interp_program *p, const char *entry, int n) {
    mantra_interp_thread *t = NULL;
    ck_assert_int_eq(mantra_interp_thread_create(p, NULL, &t), 0);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(mantra_interp_thread_run(t, entry, NULL, 0, NULL), 0);
    mantra_interp_thread_free(t);
}

void ft_pump_for(uint32_t ms) {
    struct timespec start, now, nap = {0, 5 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        mantra_pump();
        clock_gettime(CLOCK_MONOTONIC, &now);
        int64_t el = (int64_t)(now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
        if (el >= (int64_t)ms)
            return;
        nanosleep(&nap, NULL);
    }
}
