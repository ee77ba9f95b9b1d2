/* The process-wide PGO store (mantra/pgo.h): modules, methods and their instrumentation.
 *
 * Registration is rare: one platform mutex guards it (initialised on first use). Methods form a
 * singly linked list in registration order whose links and instrumentation pointers are published
 * with release stores, so walks (mantra_pgo_next_method) and counting never take the lock.
 * Nothing is ever freed: counters outlive every session, as the runtime's PGO store does
 * (dotnet/runtime src/coreclr/vm/pgo.cpp keeps its headers for the life of the process). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/hashmap-internal.h"
#include "platform/platform-internal.h"
#include "pgo-internal.h"

struct mantra_pgo_module {
    struct mantra_pgo_module *next; /* g_lock */
    char *name, *path;
    mantra_guid guid;
    uint32_t index;
};

struct mantra_pgo_method {
    _Atomic(struct mantra_pgo_method *) next; /* registration order */
    const mantra_pgo_module *module;
    uint32_t token, il_size, index;
    char *name_space, *name, *signature;
    _Atomic(const pg_instr *) instr; /* NULL until instrumented */
    _Atomic uint32_t code_hash;      /* mantra_pgo_method_set_code_hash (0 until set) */
};

static mantra_pal_mutex g_lock;
static _Atomic int g_lock_state; /* 0 not initialised, 1 initialising, 2 ready, 3 failed */
static mantra_pgo_module *g_modules; /* g_lock */
static uint32_t g_module_count;      /* g_lock */
static _Atomic(mantra_pgo_method *) g_first;
static mantra_pgo_method *g_last; /* g_lock */
static uint32_t g_method_count;   /* g_lock */
static cm_map g_method_by_key;    /* g_lock: (module index << 32 | token) -> method */

int pg_lock(void) {
    for (;;) {
        int st = atomic_load_explicit(&g_lock_state, memory_order_acquire);
        if (st == 2)
            break;
        if (st == 3)
            return MANTRA_ENOMEM;
        int zero = 0;
        if (st == 0 && atomic_compare_exchange_strong(&g_lock_state, &zero, 1)) {
            int rc = mantra_pal_mutex_init(&g_lock);
            atomic_store_explicit(&g_lock_state, rc == 0 ? 2 : 3, memory_order_release);
            continue;
        }
        mantra_pal_yield();
    }
    mantra_pal_mutex_lock(&g_lock);
    return MANTRA_OK;
}
void pg_unlock(void) { mantra_pal_mutex_unlock(&g_lock); }

static char *dup(const char *s) {
    if (s == NULL)
        s = "";
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

static int str_eq(const char *a, const char *b) { return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0; }

int mantra_pgo_module_register(const char *name, const char *path, const mantra_guid *guid,
                               mantra_pgo_module **out) {
    if (name == NULL || guid == NULL || out == NULL)
        return MANTRA_EINVAL;
    int rc = pg_lock();
    if (rc != MANTRA_OK)
        return rc;
    for (mantra_pgo_module *m = g_modules; m != NULL; m = m->next)
        if (memcmp(&m->guid, guid, sizeof *guid) == 0 && str_eq(m->name, name) && str_eq(m->path, path)) {
            *out = m;
            pg_unlock();
            return MANTRA_OK;
        }
    mantra_pgo_module *m = calloc(1, sizeof *m);
    if (m != NULL) {
        m->name = dup(name);
        m->path = dup(path);
    }
    if (m == NULL || m->name == NULL || m->path == NULL) {
        if (m != NULL) {
            free(m->name);
            free(m->path);
        }
        free(m);
        pg_unlock();
        return MANTRA_ENOMEM;
    }
    m->guid = *guid;
    m->index = ++g_module_count;
    /* append: modules are few; keep registration order */
    mantra_pgo_module **tail = &g_modules;
    while (*tail != NULL)
        tail = &(*tail)->next;
    *tail = m;
    *out = m;
    pg_unlock();
    return MANTRA_OK;
}

int mantra_pgo_method_register(mantra_pgo_module *module, uint32_t token, const char *name_space, const char *name,
                               const char *signature, uint32_t il_size, mantra_pgo_method **out) {
    if (module == NULL || out == NULL)
        return MANTRA_EINVAL;
    int rc = pg_lock();
    if (rc != MANTRA_OK)
        return rc;
    /* the same (module, token): the existing method */
    uint64_t key = (uint64_t)module->index << 32 | token;
    const uint64_t *found = cm_map_get(&g_method_by_key, key);
    if (found != NULL) {
        *out = (mantra_pgo_method *)(uintptr_t)*found;
        pg_unlock();
        return MANTRA_OK;
    }
    mantra_pgo_method *m = calloc(1, sizeof *m);
    if (m != NULL) {
        m->name_space = dup(name_space);
        m->name = dup(name);
        m->signature = dup(signature);
    }
    if (m == NULL || m->name_space == NULL || m->name == NULL || m->signature == NULL ||
        cm_map_put(&g_method_by_key, key, (uint64_t)(uintptr_t)m) != 0) {
        if (m != NULL) {
            free(m->name_space);
            free(m->name);
            free(m->signature);
        }
        free(m);
        pg_unlock();
        return MANTRA_ENOMEM;
    }
    m->module = module;
    m->token = token;
    m->il_size = il_size;
    m->index = ++g_method_count;
    atomic_init(&m->next, NULL);
    atomic_init(&m->instr, NULL);
    if (g_last != NULL)
        atomic_store_explicit(&g_last->next, m, memory_order_release);
    else
        atomic_store_explicit(&g_first, m, memory_order_release);
    g_last = m;
    *out = m;
    pg_unlock();
    return MANTRA_OK;
}

void mantra_pgo_module_describe(const mantra_pgo_module *module, mantra_pgo_module_info *out) {
    out->name = module->name;
    out->path = module->path;
    out->guid = module->guid;
    out->index = module->index;
}

void mantra_pgo_method_describe(const mantra_pgo_method *method, mantra_pgo_method_info *out) {
    out->module = method->module;
    out->token = method->token;
    out->name_space = method->name_space;
    out->name = method->name;
    out->signature = method->signature;
    out->il_size = method->il_size;
    out->index = method->index;
    out->code_hash = atomic_load_explicit(&((mantra_pgo_method *)method)->code_hash, memory_order_relaxed);
}

void mantra_pgo_method_set_code_hash(mantra_pgo_method *method, uint32_t code_hash) {
    if (method != NULL)
        atomic_store_explicit(&method->code_hash, code_hash, memory_order_relaxed);
}

const pg_instr *pg_method_instr(const mantra_pgo_method *m) {
    return m == NULL ? NULL : atomic_load_explicit(&((mantra_pgo_method *)m)->instr, memory_order_acquire);
}

static int same_schema(const pg_instr *in, const mantra_pgo_schema *schema, size_t records) {
    return in->records == records && memcmp(in->schema, schema, records * sizeof *schema) == 0;
}

int mantra_pgo_method_instrument(mantra_pgo_method *method, const mantra_pgo_schema *schema, size_t records) {
    if (method == NULL || mantra_pgo_schema_check(schema, records, NULL) != MANTRA_OK)
        return MANTRA_EINVAL;
    size_t size = 0;
    if (mantra_pgo_layout(schema, records, (unsigned)sizeof(void *), NULL, &size) != MANTRA_OK ||
        records > SIZE_MAX / sizeof(size_t))
        return MANTRA_EINVAL;
    int rc = pg_lock();
    if (rc != MANTRA_OK)
        return rc;
    const pg_instr *old = pg_method_instr(method);
    if (old != NULL) {
        rc = same_schema(old, schema, records) ? MANTRA_OK : MANTRA_ESTATE;
        pg_unlock();
        return rc;
    }
    pg_instr *in = calloc(1, sizeof *in);
    if (in != NULL) {
        in->schema = malloc(records * sizeof *schema);
        in->offsets = malloc(records * sizeof *in->offsets);
        /* the data region: 8-byte (and pointer) aligned, at least one byte */
        in->data = calloc(1, size > 0 ? size : 1);
        in->slots = malloc(records * sizeof *in->slots);
    }
    if (in == NULL || in->schema == NULL || in->offsets == NULL || in->data == NULL || in->slots == NULL) {
        if (in != NULL) {
            free(in->schema);
            free(in->offsets);
            free(in->data);
            free(in->slots);
        }
        free(in);
        pg_unlock();
        return MANTRA_ENOMEM;
    }
    memcpy(in->schema, schema, records * sizeof *schema);
    in->records = records;
    in->size = size;
    (void)mantra_pgo_layout(schema, records, (unsigned)sizeof(void *), in->offsets, NULL);
    /* per-thread slots for the FourByte elements, consecutive within the method */
    uint64_t four = 0;
    for (size_t r = 0; r < records; r++)
        if (pg_elem(schema[r].kind) == MANTRA_PGO_FourByte)
            four += (uint32_t)schema[r].count;
    uint32_t first = four > 0 && four < PG_NO_SLOT ? pg_reserve_slots((uint32_t)four) : PG_NO_SLOT;
    for (size_t r = 0; r < records; r++) {
        in->slots[r] = PG_NO_SLOT;
        if (pg_elem(schema[r].kind) == MANTRA_PGO_FourByte && first != PG_NO_SLOT) {
            in->slots[r] = first;
            first += (uint32_t)schema[r].count;
        }
    }
    atomic_store_explicit(&method->instr, in, memory_order_release);
    pg_unlock();
    return MANTRA_OK;
}

const mantra_pgo_schema *mantra_pgo_method_schema(const mantra_pgo_method *method, size_t *records) {
    const pg_instr *in = pg_method_instr(method);
    if (records != NULL)
        *records = in != NULL ? in->records : 0;
    return in != NULL ? in->schema : NULL;
}

void *mantra_pgo_record_data(const mantra_pgo_method *method, size_t record) {
    const pg_instr *in = pg_method_instr(method);
    if (in == NULL || record >= in->records || !mantra_pgo_has_data(in->schema[record].kind))
        return NULL;
    return in->data + in->offsets[record];
}

static void *typed(const mantra_pgo_method *method, size_t record, int want) {
    const pg_instr *in = pg_method_instr(method);
    if (in == NULL || record >= in->records)
        return NULL;
    int elem = pg_elem(in->schema[record].kind);
    if (want == MANTRA_PGO_TypeHandle ? (elem != MANTRA_PGO_TypeHandle && elem != MANTRA_PGO_MethodHandle)
                                       : elem != want)
        return NULL;
    return in->data + in->offsets[record];
}

uint32_t *mantra_pgo_counters_u32(const mantra_pgo_method *method, size_t record) {
    return typed(method, record, MANTRA_PGO_FourByte);
}
uint64_t *mantra_pgo_counters_u64(const mantra_pgo_method *method, size_t record) {
    return typed(method, record, MANTRA_PGO_EightByte);
}
uintptr_t *mantra_pgo_handles(const mantra_pgo_method *method, size_t record) {
    return typed(method, record, MANTRA_PGO_TypeHandle);
}

const mantra_pgo_method *mantra_pgo_next_method(const mantra_pgo_method *prev) {
    mantra_pgo_method *m = prev == NULL ? atomic_load_explicit(&g_first, memory_order_acquire)
                                        : atomic_load_explicit(&((mantra_pgo_method *)prev)->next, memory_order_acquire);
    while (m != NULL && pg_method_instr(m) == NULL)
        m = atomic_load_explicit(&m->next, memory_order_acquire);
    return m;
}

int mantra_pgo_counter_slot(const mantra_pgo_method *method, size_t record, uint32_t *slot) {
    const pg_instr *in = pg_method_instr(method);
    if (in == NULL || record >= in->records || in->slots[record] == PG_NO_SLOT || slot == NULL)
        return MANTRA_EINVAL;
    *slot = in->slots[record];
    return MANTRA_OK;
}
