/* text_env.c - the text format of the environment (mantra/pgo.h): the method key (codehash,
 * methodhash), the shutdown dump (MANTRA_WritePGOData, MANTRA_PGODataPath) and the read-back of
 * initial counter values (MANTRA_ReadPGOData), as pgo.cpp's WritePgoData / ReadPgoData do. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform/platform-internal.h"
#include "pgo-internal.h"

uint32_t mantra_pgo_hash32(uint32_t hash, const void *bytes, size_t size) {
    const unsigned char *p = bytes;
    for (size_t i = 0; i < size; i++) {
        hash ^= p[i];
        hash *= 0x01000193u;
    }
    return hash;
}

void mantra_pgo_method_hashes(const mantra_pgo_method *method, uint32_t *codehash, uint32_t *methodhash) {
    mantra_pgo_method_info mi;
    mantra_pgo_module_info mo;
    mantra_pgo_method_describe(method, &mi);
    mantra_pgo_module_describe(mi.module, &mo);
    uint8_t key[20];
    const mantra_guid *g = &mo.guid;
    uint32_t d1 = g->data1;
    for (int i = 0; i < 4; i++)
        key[i] = (uint8_t)(d1 >> (8 * i));
    key[4] = (uint8_t)g->data2;
    key[5] = (uint8_t)(g->data2 >> 8);
    key[6] = (uint8_t)g->data3;
    key[7] = (uint8_t)(g->data3 >> 8);
    memcpy(key + 8, g->data4, 8);
    for (int i = 0; i < 4; i++)
        key[16 + i] = (uint8_t)(mi.token >> (8 * i));
    if (codehash)
        *codehash = mi.code_hash;
    if (methodhash)
        *methodhash = mantra_pgo_hash32(MANTRA_PGO_HASH32_INIT, key, sizeof key);
}

static int env_on(const char *name) {
    const char *v = mantra_pal_getenv_set(name);
    return v != NULL && strcmp(v, "0") != 0;
}

static void set_err(char *err, size_t errlen, const char *fmt, const char *a, const char *b) {
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, fmt, a, b);
}

/* ---- the dump ------------------------------------------------------------------------------ */

static int write_method(mantra_pgo_text_buffer *b, const mantra_pgo_method *m) {
    mantra_pgo_data d;
    int rc = mantra_pgo_snapshot(m, 0, &d);
    if (rc != MANTRA_OK)
        return rc;
    mantra_pgo_method_info mi;
    mantra_pgo_method_describe(m, &mi);
    mantra_pgo_text_method t;
    memset(&t, 0, sizeof t);
    mantra_pgo_method_hashes(m, &t.codehash, &t.methodhash);
    t.il_size = mi.il_size;
    t.class_name = mi.name_space;
    t.method_name = mi.name;
    t.signature = mi.signature;
    t.schema = d.schema;
    t.records = d.records;
    t.values = d.values;
    t.value_count = d.value_count;
    rc = mantra_pgo_text_write_method(mantra_pgo_text_buffer_write, b, &t);
    mantra_pgo_data_free(&d);
    return rc;
}

int mantra_pgo_text_dump(const char *path, char *err, size_t errlen) {
    if (path == NULL || path[0] == '\0')
        return MANTRA_EINVAL;
    uint32_t n = 0;
    for (const mantra_pgo_method *m = mantra_pgo_next_method(NULL); m != NULL; m = mantra_pgo_next_method(m))
        n++;
    if (n == 0) /* the CLR opens no file when no method has data */
        return 0;
    mantra_pgo_text_buffer b = {NULL, 0, 0};
    int rc = mantra_pgo_text_write_start(mantra_pgo_text_buffer_write, &b, n);
    uint32_t written = 0;
    for (const mantra_pgo_method *m = mantra_pgo_next_method(NULL); rc == 0 && m != NULL && written < n;
         m = mantra_pgo_next_method(m), written++)
        rc = write_method(&b, m);
    if (rc == 0)
        rc = mantra_pgo_text_write_end(mantra_pgo_text_buffer_write, &b);
    if (rc != 0) {
        mantra_pgo_text_buffer_free(&b);
        set_err(err, errlen, "%s: %s", path, "cannot format the PGO data");
        return rc < 0 ? rc : MANTRA_EIO;
    }
    char e[256] = "";
    int fd = mantra_pal_file_create(path, e, sizeof e);
    if (fd < 0) {
        mantra_pgo_text_buffer_free(&b);
        set_err(err, errlen, "%s%s", e, "");
        return MANTRA_EIO;
    }
    rc = mantra_pal_write_all(fd, b.data, b.size, NULL, e, sizeof e);
    int crc = mantra_pal_close(fd, rc ? NULL : e, rc ? 0 : sizeof e);
    mantra_pgo_text_buffer_free(&b);
    if (rc != 0 || crc != 0) {
        set_err(err, errlen, "%s%s", e, "");
        return MANTRA_EIO;
    }
    return (int)written;
}

int mantra_pgo_text_dump_env(char *err, size_t errlen) {
    if (!env_on("MANTRA_WritePGOData"))
        return 0;
    const char *path = mantra_pal_getenv_set("MANTRA_PGODataPath");
    if (path == NULL)
        return 0;
    int rc = mantra_pgo_text_dump(path, err, errlen);
    return rc > 0 ? 1 : rc;
}

/* ---- the read-back ------------------------------------------------------------------------- */

static _Atomic int g_read_state; /* 0 not read, 1 reading, 2 done */
static mantra_pgo_text *g_read;  /* set once before g_read_state becomes 2 */

static mantra_pgo_text *load_env_text(void) {
    if (!env_on("MANTRA_ReadPGOData") || env_on("MANTRA_WritePGOData"))
        return NULL;
    const char *path = mantra_pal_getenv_set("MANTRA_PGODataPath");
    if (path == NULL)
        return NULL;
    char e[256];
    int fd = mantra_pal_file_open_read(path, e, sizeof e);
    if (fd < 0)
        return NULL;
    uint64_t size = 0;
    char *text = NULL;
    if (mantra_pal_file_size(fd, &size) == 1 && size < SIZE_MAX)
        text = malloc((size_t)size + 1);
    size_t got = 0;
    while (text != NULL && got < size) {
        int64_t n = mantra_pal_read(fd, text + got, (size_t)size - got, e, sizeof e);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    (void)mantra_pal_close(fd, e, sizeof e);
    mantra_pgo_text *t = NULL;
    if (text != NULL && mantra_pgo_text_parse(text, got, path, &t) != MANTRA_OK)
        t = NULL;
    free(text);
    return t;
}

static const mantra_pgo_text *env_text(void) {
    int expected = 0;
    if (atomic_compare_exchange_strong(&g_read_state, &expected, 1)) {
        g_read = load_env_text();
        atomic_store(&g_read_state, 2);
    }
    while (atomic_load(&g_read_state) != 2)
        mantra_pal_yield();
    return g_read;
}

int mantra_pgo_read_env_apply(mantra_pgo_method *method) {
    if (method == NULL)
        return MANTRA_EINVAL;
    const mantra_pgo_text *t = env_text();
    if (t == NULL)
        return 0;
    uint32_t ch, mh;
    mantra_pgo_method_hashes(method, &ch, &mh);
    size_t n = mantra_pgo_text_method_count(t);
    for (size_t i = 0; i < n; i++) {
        const mantra_pgo_text_entry *e = mantra_pgo_text_entry_at(t, i);
        if (e->codehash == ch && e->methodhash == mh)
            return mantra_pgo_set_data(method, &e->data);
    }
    return 0;
}
