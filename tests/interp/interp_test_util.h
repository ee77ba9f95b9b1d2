/* interp_test_util.h - helpers of the interpreter tests: assemble + load + run a text, capture
 * the program's output. */
#ifndef MANTRA_TESTS_INTERP_UTIL_H
#define MANTRA_TESTS_INTERP_UTIL_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mantra/interp.h"

typedef struct it_out {
    char buf[8192];
    size_t len;
} it_out;

static inline void it_write(void *ctx, const char *data, size_t size) {
    it_out *o = ctx;
    ck_assert_uint_le(o->len + size, sizeof o->buf - 1);
    memcpy(o->buf + o->len, data, size);
    o->len += size;
    o->buf[o->len] = '\0';
}

/* The whole file at path (checked: read to its end), NUL-terminated; malloc'ed (free it). */
static inline char *it_read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "%s", path);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    ck_assert_msg(n >= 0, "%s", path);
    ck_assert_int_eq(fseek(f, 0, SEEK_SET), 0);
    char *s = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    ck_assert_int_eq(fgetc(f), EOF); /* nothing after */
    fclose(f);
    s[n] = '\0';
    return s;
}

/* One assembled and loaded program. */
typedef struct it_prog {
    mantra_interp_module *mod;
    mantra_interp_program *prog;
} it_prog;

static inline it_prog it_load(const char *text, int mode, const char *filter) {
    it_prog p = {NULL, NULL};
    mantra_interp_diag d;
    int rc = mantra_interp_assemble(text, strlen(text), "t.masm", &p.mod, &d);
    ck_assert_msg(rc == 0, "assemble: %s", d.text);
    mantra_interp_load_options o;
    mantra_interp_load_options_init(&o);
    o.pgo_mode = mode;
    o.pgo_methods = filter;
    o.allocator = mantra_interp_private_counters(); /* fresh counters per load */
    ck_assert_int_eq(mantra_interp_load(p.mod, &o, &p.prog), 0);
    return p;
}

static inline void it_free(it_prog *p) {
    mantra_interp_program_free(p->prog);
    mantra_interp_module_free(p->mod);
}

/* Runs entry with args; returns the status; output in *out (may be NULL), error text in err. */
static inline int it_run(const it_prog *p, const char *entry, const mantra_interp_value *args, size_t nargs,
                         mantra_interp_value *result, it_out *out, char *err, size_t errlen) {
    it_out local;
    if (out == NULL)
        out = &local;
    out->len = 0;
    out->buf[0] = '\0';
    mantra_interp_thread_options to;
    mantra_interp_thread_options_init(&to);
    to.write = it_write;
    to.write_ctx = out;
    mantra_interp_thread *t = NULL;
    ck_assert_int_eq(mantra_interp_thread_create(p->prog, &to, &t), 0);
    int rc = mantra_interp_thread_run(t, entry, args, nargs, result);
    if (err != NULL) {
        strncpy(err, mantra_interp_thread_last_error(t), errlen - 1);
        err[errlen - 1] = '\0';
    }
    mantra_interp_thread_free(t);
    return rc;
}

/* The probes of method i as "IL:COUNT IL:COUNT ..." (hex IL offsets). */
static inline void it_probes(const it_prog *p, size_t method, char *buf, size_t size) {
    mantra_interp_probes pr;
    ck_assert_int_eq(mantra_interp_program_probes(p->prog, method, &pr), 0);
    size_t k = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < pr.count && k < size; i++)
        k += (size_t)snprintf(buf + k, size - k, "%s%04x:%u", i ? " " : "", (unsigned)pr.il_offsets[i],
                              (unsigned)pr.counters[i]);
}

#endif
