/* image_load.c - opening images (mapped read-only, or a host's bytes), their module and program,
 * unloading and the listener (mantra/image.h). */
#include <stdio.h>
#include <stdlib.h>

#include "common/str-internal.h"
#include "images/image-format.h"
#include "platform/platform-internal.h"

struct mantra_image {
    char *path;
    const uint8_t *bytes;
    size_t size;
    int owned;                 /* 1: mapped (unmap), 2: read into memory (free), 0: the host's */
    im_layout layout;
    mantra_interp_module *module;
    mantra_interp_program *program;
    ip_precompiled_method *pm;
};

static atomic_flag g_lock = ATOMIC_FLAG_INIT;
static mantra_image_listener g_listener; /* g_lock */

static void listener_lock(void) {
    while (atomic_flag_test_and_set_explicit(&g_lock, memory_order_acquire))
        ;
}
static void listener_unlock(void) {
    atomic_flag_clear_explicit(&g_lock, memory_order_release);
}

static mantra_image_listener listener(void) {
    listener_lock();
    mantra_image_listener l = g_listener;
    listener_unlock();
    return l;
}

void mantra_image_set_listener(const mantra_image_listener *l) {
    listener_lock();
    if (l != NULL)
        g_listener = *l;
    else
        memset(&g_listener, 0, sizeof g_listener);
    listener_unlock();
}

/* The module of a checked image: identities, signatures, frame sizes and literals (no IL). */
static int make_module(const im_layout *l, mantra_interp_module **out) {
    mantra_interp_module *m = calloc(1, sizeof *m);
    if (m == NULL)
        return MANTRA_ENOMEM;
    m->precompiled = 1;
    m->name = cm_strdup(im_string(l, mantra_load_u32(l->bytes + IM_H_MODULE_NAME)));
    memcpy(m->guid, l->bytes + IM_H_GUID, 16);
    m->methods = calloc(l->nmethods ? l->nmethods : 1, sizeof *m->methods);
    m->strings = calloc(l->nliterals ? l->nliterals : 1, sizeof *m->strings);
    m->string_lens = calloc(l->nliterals ? l->nliterals : 1, sizeof *m->string_lens);
    int rc = m->name && m->methods && m->strings && m->string_lens ? 0 : MANTRA_ENOMEM;
    for (uint32_t i = 0; rc == 0 && i < l->nmethods; i++) {
        const uint8_t *r = im_method_record(l, i);
        ip_method *x = &m->methods[i];
        m->nmethods = i + 1;
        const char *ns = im_string(l, mantra_load_u32(r + IM_M_NAMESPACE));
        const char *name = im_string(l, mantra_load_u32(r + IM_M_NAME));
        x->namespace_name = cm_strdup(ns);
        x->name = cm_strdup(name);
        x->signature = cm_strdup(im_string(l, mantra_load_u32(r + IM_M_SIGNATURE)));
        size_t fl = strlen(ns) + strlen(name) + 2;
        x->full_name = malloc(fl);
        if (x->namespace_name == NULL || x->name == NULL || x->signature == NULL || x->full_name == NULL) {
            rc = MANTRA_ENOMEM;
            break;
        }
        snprintf(x->full_name, fl, "%s%s%s", ns, ns[0] ? "." : "", name);
        x->token = mantra_load_u32(r + IM_M_TOKEN);
        x->ret_type = r[IM_M_RET_TYPE];
        x->is_async = (mantra_load_u32(r + IM_M_FLAGS) & MANTRA_IMAGE_ASYNC) != 0;
        x->nargs = r[IM_M_NARGS];
        memcpy(x->arg_types, l->bytes + l->sec[IM_SEC_STRINGS].offset + mantra_load_u32(r + IM_M_ARG_TYPES), x->nargs);
        x->nlocals = mantra_load_u16(r + IM_M_NLOCALS);
        x->max_stack = mantra_load_u32(r + IM_M_MAX_STACK);
        x->il_size = mantra_load_u32(r + IM_M_IL_SIZE);
    }
    for (uint32_t k = 0; rc == 0 && k < l->nliterals; k++) {
        const uint8_t *e = l->bytes + l->sec[IM_SEC_LITERALS].offset + (size_t)k * IM_LITERAL_SIZE;
        uint32_t off = mantra_load_u32(e), len = mantra_load_u32(e + 4);
        m->nstrings = k + 1;
        m->strings[k] = malloc(len ? len : 1);
        if (m->strings[k] == NULL) {
            rc = MANTRA_ENOMEM;
            break;
        }
        memcpy(m->strings[k], l->bytes + l->sec[IM_SEC_STRINGS].offset + off, len);
        m->string_lens[k] = len;
    }
    if (rc != 0) {
        mantra_interp_module_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

static void on_first_call(void *ctx, const mantra_interp_program *p, size_t method) {
    (void)p;
    const mantra_image *im = ctx; /* ip_first_call cleared the method's IP_CALL_FIRST: called */
    im_perf_method(im, method);
    mantra_image_listener l = listener();
    if (l.first_call != NULL)
        l.first_call(l.ctx, im, method);
}

static void release(mantra_image *im) {
    mantra_interp_program_free(im->program);
    mantra_interp_module_free(im->module);
    free(im->pm);
    if (im->owned == 1)
        mantra_pal_unmap_file(im->bytes, im->size);
    else if (im->owned == 2)
        free((void *)(uintptr_t)im->bytes);
    free(im->path);
    free(im);
}

/* Checks im's bytes, makes its module and program and tells the listener. */
static int finish_open(mantra_image *im, unsigned flags, mantra_image **out, mantra_image_error *err) {
    int rc = im_check(im->bytes, im->size, flags, &im->layout, err);
    if (rc == MANTRA_ENOMEM && err != NULL)
        im_fail(err, 0, "out of memory");
    if (rc == 0)
        rc = make_module(&im->layout, &im->module);
    const im_layout *l = &im->layout;
    if (rc == 0) {
        im->pm = calloc(l->nmethods ? l->nmethods : 1, sizeof *im->pm);
        if (im->pm == NULL)
            rc = MANTRA_ENOMEM;
    }
    for (uint32_t i = 0; rc == 0 && i < l->nmethods; i++) {
        const uint8_t *r = im_method_record(l, i);
        ip_precompiled_method *p = &im->pm[i];
        p->code = l->bytes + mantra_load_u32(r + IM_M_HOT_RVA);
        p->code_size = mantra_load_u32(r + IM_M_HOT_SIZE);
        p->cold_size = mantra_load_u32(r + IM_M_COLD_SIZE);
        p->cold = p->cold_size ? l->bytes + mantra_load_u32(r + IM_M_COLD_RVA) : NULL;
        p->map = l->bytes + l->sec[IM_SEC_ILMAP].offset + (size_t)mantra_load_u32(r + IM_M_MAP_FIRST) * IM_MAP_SIZE;
        p->nmap = mantra_load_u32(r + IM_M_MAP_COUNT);
    }
    if (rc == 0)
        rc = ip_load_precompiled(im->module, im->pm, on_first_call, im, &im->program);
    if (rc == 0)
        im->program->image = im;
    if (rc != 0) {
        if (rc == MANTRA_ENOMEM && err != NULL)
            im_fail(err, 0, "out of memory");
        release(im);
        return rc;
    }
    mantra_image_listener li = listener();
    if (li.loaded != NULL)
        li.loaded(li.ctx, im);
    *out = im;
    return 0;
}

int mantra_image_open_memory(const void *bytes, size_t size, const char *name, unsigned flags, mantra_image **out,
                             mantra_image_error *err) {
    if ((bytes == NULL && size > 0) || out == NULL)
        return MANTRA_EINVAL;
    *out = NULL;
    mantra_image *im = calloc(1, sizeof *im);
    if (im == NULL)
        return MANTRA_ENOMEM;
    im->path = cm_strdup(name ? name : "");
    if (im->path == NULL) {
        free(im);
        return MANTRA_ENOMEM;
    }
    im->bytes = bytes;
    im->size = size;
    return finish_open(im, flags, out, err);
}

int mantra_image_open(const char *path, const void *address_hint, mantra_image **out, mantra_image_error *err) {
    if (path == NULL || out == NULL)
        return MANTRA_EINVAL;
    *out = NULL;
    mantra_image_error scratch;
    if (err == NULL)
        err = &scratch;
    int fd = mantra_pal_file_open_read(path, err->message, sizeof err->message);
    if (fd < 0) {
        err->offset = 0;
        return MANTRA_EIO;
    }
    uint64_t size64 = 0;
    if (!mantra_pal_file_size(fd, &size64) || size64 > SIZE_MAX) {
        snprintf(err->message, sizeof err->message, "not a regular file");
        err->offset = 0;
        (void)mantra_pal_close(fd, NULL, 0);
        return MANTRA_EIO;
    }
    size_t size = (size_t)size64;
    mantra_image *im = calloc(1, sizeof *im);
    if (im == NULL || (im->path = cm_strdup(path)) == NULL) {
        free(im);
        (void)mantra_pal_close(fd, NULL, 0);
        return MANTRA_ENOMEM;
    }
    im->size = size;
    const void *map = mantra_pal_map_file_at(fd, size, address_hint);
    if (map != NULL) {
        im->bytes = map;
        im->owned = 1;
    } else { /* no mapping (WASI, an empty file): read it */
        uint8_t *b = malloc(size ? size : 1);
        if (b == NULL) {
            (void)im_fail(err, 0, "out of memory (%zu bytes to read the file into)", size);
            (void)mantra_pal_close(fd, NULL, 0);
            free(im->path);
            free(im);
            return MANTRA_ENOMEM;
        }
        size_t got = 0;
        while (got < size) {
            int64_t n = mantra_pal_read(fd, b + got, size - got, err->message, sizeof err->message);
            if (n <= 0) {
                if (n == 0)
                    snprintf(err->message, sizeof err->message, "the file shrank while it was read");
                free(b);
                b = NULL;
                break;
            }
            got += (size_t)n;
        }
        if (b == NULL) {
            err->offset = got;
            (void)mantra_pal_close(fd, NULL, 0);
            free(im->path);
            free(im);
            return MANTRA_EIO;
        }
        im->bytes = b;
        im->owned = 2;
    }
    (void)mantra_pal_close(fd, NULL, 0);
    return finish_open(im, 0, out, err);
}

void mantra_image_close(mantra_image *im) {
    if (im == NULL)
        return;
    mantra_image_listener li = listener();
    if (li.unloading != NULL)
        li.unloading(li.ctx, im);
    release(im);
}

const mantra_interp_module *mantra_image_module(const mantra_image *im) {
    return im ? im->module : NULL;
}
const mantra_interp_program *mantra_image_program(const mantra_image *im) {
    return im ? im->program : NULL;
}
const mantra_image *mantra_image_of_program(const mantra_interp_program *p) {
    return p ? p->image : NULL;
}
const void *mantra_image_base(const mantra_image *im) {
    return im ? im->bytes : NULL;
}
size_t mantra_image_size(const mantra_image *im) {
    return im ? im->size : 0;
}
const char *mantra_image_path(const mantra_image *im) {
    return im ? im->path : "";
}
size_t mantra_image_method_count(const mantra_image *im) {
    return im ? im->layout.nmethods : 0;
}

int mantra_image_method(const mantra_image *im, size_t i, mantra_image_method_info *out) {
    if (im == NULL || out == NULL || i >= im->layout.nmethods)
        return MANTRA_EINVAL;
    const uint8_t *r = im_method_record(&im->layout, (uint32_t)i);
    memset(out, 0, sizeof *out);
    mantra_interp_module_method(im->module, i, &out->id);
    out->hot_rva = mantra_load_u32(r + IM_M_HOT_RVA);
    out->hot_size = mantra_load_u32(r + IM_M_HOT_SIZE);
    out->cold_rva = mantra_load_u32(r + IM_M_COLD_RVA);
    out->cold_size = mantra_load_u32(r + IM_M_COLD_SIZE);
    out->flags = mantra_load_u32(r + IM_M_FLAGS);
    out->hot_start = (uint64_t)(uintptr_t)(im->bytes + out->hot_rva);
    out->cold_start = out->cold_size ? (uint64_t)(uintptr_t)(im->bytes + out->cold_rva) : 0;
    return 0;
}

/* ip_first_call clears the method's IP_CALL_FIRST (set at load: images always have the first-call
 * hook) before the hook runs, and nothing sets it again. */
int mantra_image_method_called(const mantra_image *im, size_t i) {
    if (im == NULL || im->program == NULL || i >= im->layout.nmethods)
        return 0;
    return (atomic_load_explicit(&im->program->methods[i].call_flags, memory_order_acquire) & IP_CALL_FIRST) == 0;
}
