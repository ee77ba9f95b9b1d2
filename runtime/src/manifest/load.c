/* load.c - the YAML manifest loader's entry points (docs/manifest.md, "YAML spelling"), built on
 * libyaml: mantra_manifest_supported, mantra_manifest_load_file (the file read through the platform
 * layer) and mantra_manifest_load_memory, and the load itself: the input checks, the libyaml
 * document (one, not empty), then the model built directly in the manifest's arena.
 *
 * The loader mirrors generator/mantra_gen/load_yaml.py (shape, keys, scalar conversion, messages)
 * and the parts of validate.py that a decoder or a lookup relies on. Temporaries (name tables) live
 * in a scratch arena and one name map freed at the end. The first problem found stops the load
 * (longjmp back to build(); everything allocated so far is in the two arenas, the name map and the
 * libyaml document, all freed here). The walk is in yaml_walk.c and yaml_scalars.c, the model in
 * build_provider.c, build_vocabulary.c and build_fields.c, the input checks in yaml_input.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow-internal.h"
#include "manifest/manifest-internal.h"
#include "platform/platform-internal.h"

int mantra_manifest_supported(void) {
#if defined(MANTRA_HAVE_LIBYAML)
    return 1;
#else
    return 0;
#endif
}

/* ---- reading the input -------------------------------------------------------------------------- */

static mantra_manifest *load_bytes(const uint8_t *data, size_t size, const char *name, mantra_manifest_error **err);

static mantra_manifest *read_failed(const char *path, const char *reason, mantra_manifest_error **err) {
    char msg[512];
    snprintf(msg, sizeof msg, "cannot read the file: %s", reason);
    if (err != NULL)
        *err = mf_error_new(path, 1, 1, msg, NULL);
    return NULL;
}

mantra_manifest *mantra_manifest_load_file(const char *path, mantra_manifest_error **err) {
    if (err != NULL)
        *err = NULL;
    char why[256];
    int fd = mantra_pal_file_open_read(path, why, sizeof why);
    if (fd < 0)
        return read_failed(path, why, err);
    size_t cap = 0, len = 0;
    uint8_t *buf = NULL;
    int failed = 0;
    for (;;) {
        if (cm_grow((void **)&buf, &cap, len + 1, 1, 65536) != MANTRA_OK) {
            failed = 1;
            break;
        }
        int64_t n = mantra_pal_read(fd, buf + len, cap - len, why, sizeof why);
        if (n < 0) {
            free(buf);
            mantra_pal_close(fd, NULL, 0);
            return read_failed(path, why, err);
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    mantra_pal_close(fd, NULL, 0);
    if (failed) {
        free(buf);
        if (err != NULL)
            *err = mf_error_new(path, 1, 1, "out of memory", NULL);
        return NULL;
    }
    mantra_manifest *m = load_bytes(buf, len, path, err);
    free(buf);
    return m;
}

mantra_manifest *mantra_manifest_load_memory(const void *data, size_t size, const char *name,
                                             mantra_manifest_error **err) {
    if (err != NULL)
        *err = NULL;
    if (data == NULL && size != 0) {
        if (err != NULL)
            *err = mf_error_new(name, 1, 1, "no input", NULL);
        return NULL;
    }
    return load_bytes(data != NULL ? data : "", size, name != NULL ? name : "<memory>", err);
}

#if !defined(MANTRA_HAVE_LIBYAML)

static mantra_manifest *load_bytes(const uint8_t *data, size_t size, const char *name, mantra_manifest_error **err) {
    (void)data;
    (void)size;
    if (err != NULL)
        *err = mf_error_new(name, 1, 1, "libmantra was built without libyaml: manifests cannot be loaded",
                            "install libyaml (pkg-config yaml-0.1) and rebuild");
    return NULL;
}

#else /* MANTRA_HAVE_LIBYAML */

#include "common/utf-internal.h"
#include "manifest/loader-internal.h"

static mantra_manifest_error *error_of(mf_loader *l) {
    if (l->oom)
        return mf_error_new(l->file, 1, 1, "out of memory", NULL);
    return mf_error_new(l->file, l->line, l->column, l->message, l->has_note ? l->note : NULL);
}

/* The part after setjmp: builds the manifest from a loaded document. Returns 0, or 1 on error. */
static int build(mf_loader *l, yaml_node_t *root) {
    if (setjmp(l->jump) != 0)
        return 1;
    mf_build_manifest(l, root);
    if (mf_build_indexes(l->m) != 0)
        mf_fail_oom(l);
    return 0;
}

static mantra_manifest *load_bytes(const uint8_t *data, size_t size, const char *name, mantra_manifest_error **err) {
    mf_loader l;
    memset(&l, 0, sizeof l);
    l.file = name;
    uint8_t *converted = NULL;
    mantra_manifest *result = NULL;
    yaml_parser_t parser;
    yaml_document_t doc;
    int have_parser = 0, have_doc = 0;

    if (size >= 2 && ((data[0] == 0xFF && data[1] == 0xFE) || (data[0] == 0xFE && data[1] == 0xFF))) {
        const char *reason = NULL;
        size_t n = 0;
        converted = mf_utf16_to_utf8(data, size, &n, &reason);
        if (converted == NULL) {
            snprintf(l.message, sizeof l.message, "invalid UTF-16: %s", reason);
            l.line = l.column = 1;
            l.oom = strcmp(reason, "out of memory") == 0;
            goto fail;
        }
        data = converted;
        size = n;
    } else if (size >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF) {
        data += 3;
        size -= 3;
    }
    size_t bad = cm_utf8_invalid_at(data, size);
    if (bad != SIZE_MAX) {
        mf_byte_loc(data, bad, &l.line, &l.column);
        snprintf(l.message, sizeof l.message, "the file is not valid UTF-8 (byte 0x%02x)", data[bad]);
        goto fail;
    }
    if (mf_check_depth(&l, data, size))
        goto fail;

    if (!yaml_parser_initialize(&parser)) {
        l.oom = 1;
        goto fail;
    }
    have_parser = 1;
    yaml_parser_set_input_string(&parser, data, size);
    yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
    if (!yaml_parser_load(&parser, &doc)) {
        mf_yaml_error(&l, &parser, data, size);
        goto fail;
    }
    have_doc = 1;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root == NULL) {
        l.line = l.column = 1;
        snprintf(l.message, sizeof l.message, "an empty file is not a manifest");
        goto fail;
    }
    {
        yaml_document_t next;
        if (!yaml_parser_load(&parser, &next)) {
            mf_yaml_error(&l, &parser, data, size);
            goto fail;
        }
        yaml_node_t *other = yaml_document_get_root_node(&next);
        if (other != NULL) {
            l.line = (unsigned)next.start_mark.line + 1;
            l.column = (unsigned)next.start_mark.column + 1;
            snprintf(l.message, sizeof l.message,
                     "YAML syntax error: expected a single document in the stream, but found another document");
            yaml_document_delete(&next);
            goto fail;
        }
        yaml_document_delete(&next);
    }

    l.doc = &doc;
    {
        cm_arena arena = {NULL, 0};
        mantra_manifest *m = cm_arena_alloc(&arena, sizeof *m);
        if (m == NULL) {
            l.oom = 1;
            goto fail;
        }
        m->arena = arena;
        l.m = m;
        l.arena = &m->arena;
    }
    if (build(&l, root) != 0) {
        cm_arena built = l.m->arena;
        cm_arena_free(&built);
        l.m = NULL;
        goto fail;
    }
    result = l.m;
    goto done;

fail:
    if (err != NULL)
        *err = error_of(&l);
done:
    mf_names_free_all(&l); /* before the scratch arena that holds the tables */
    cm_arena_free(&l.scratch);
    if (have_doc)
        yaml_document_delete(&doc);
    if (have_parser)
        yaml_parser_delete(&parser);
    free(converted);
    return result;
}

#endif /* MANTRA_HAVE_LIBYAML */
