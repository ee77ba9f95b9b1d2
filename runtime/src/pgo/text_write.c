/* Writing the CLR's PGO text format (mantra/pgo.h). Facts: dotnet/runtime src/coreclr/vm/pgo.cpp
 * (PgoManager::WritePgoData, @8b52e80): the printf formats of the START, @@@, MethodName,
 * Signature, Schema and END lines, and one data line per element by element type: None "None",
 * FourByte "%u", EightByte "%u %u" (low then high 32 bits), TypeHandle "TypeHandle: NAME",
 * MethodHandle "MethodHandle: NAME" with NULL for a null handle and UNKNOWN for one without a name
 * (or a name over 8192 characters). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow-internal.h"
#include "pgo-internal.h"

#define PG_MAX_HANDLE_NAME 8192

static int put(mantra_pgo_write_fn write, void *ctx, const char *s, size_t n) { return n > 0 ? write(ctx, s, n) : 0; }

static int puts_(mantra_pgo_write_fn write, void *ctx, const char *s) { return put(write, ctx, s, strlen(s)); }

static int has_newline(const char *s) { return s != NULL && strchr(s, '\n') != NULL; }

int mantra_pgo_text_write_start(mantra_pgo_write_fn write, void *ctx, uint32_t method_count) {
    if (write == NULL)
        return MANTRA_EINVAL;
    char line[64];
    int n = snprintf(line, sizeof line, "*** START PGO Data, max index = %" PRIu32 " ***\n", method_count);
    return put(write, ctx, line, (size_t)n);
}

int mantra_pgo_text_write_end(mantra_pgo_write_fn write, void *ctx) {
    if (write == NULL)
        return MANTRA_EINVAL;
    return puts_(write, ctx, "*** END PGO Data ***\n");
}

static int write_handle(mantra_pgo_write_fn write, void *ctx, const mantra_pgo_text_method *m, size_t record,
                        size_t element, int elem, int64_t value) {
    const char *name = m->handle_name != NULL ? m->handle_name(m->handle_ctx, record, element, elem, value) : NULL;
    if (name == NULL || strlen(name) > PG_MAX_HANDLE_NAME || has_newline(name))
        name = value == 0 ? "NULL" : "UNKNOWN";
    int rc = puts_(write, ctx, elem == MANTRA_PGO_TypeHandle ? "TypeHandle: " : "MethodHandle: ");
    if (rc == 0)
        rc = puts_(write, ctx, name);
    if (rc == 0)
        rc = puts_(write, ctx, "\n");
    return rc;
}

int mantra_pgo_text_write_method(mantra_pgo_write_fn write, void *ctx, const mantra_pgo_text_method *m) {
    if (write == NULL || m == NULL || (m->schema == NULL && m->records > 0))
        return MANTRA_EINVAL;
    if (has_newline(m->class_name) || has_newline(m->method_name) || has_newline(m->signature))
        return MANTRA_EINVAL;
    int64_t nv = mantra_pgo_value_count(m->schema, m->records);
    if (nv < 0 || (uint64_t)nv != m->value_count || (m->values == NULL && nv > 0))
        return MANTRA_EINVAL;
    for (size_t r = 0; r < m->records; r++)
        if (m->schema[r].kind == MANTRA_PGO_None || !pg_elem_known(m->schema[r].kind))
            return MANTRA_EINVAL;
    char line[160];
    int n = snprintf(line, sizeof line,
                     "@@@ codehash 0x%08" PRIX32 " methodhash 0x%08" PRIX32 " ilSize 0x%08" PRIX32 " records 0x%08" PRIX32
                     "\n",
                     m->codehash, m->methodhash, m->il_size, (uint32_t)m->records);
    int rc = put(write, ctx, line, (size_t)n);
    if (rc == 0)
        rc = puts_(write, ctx, "MethodName: ");
    if (rc == 0)
        rc = puts_(write, ctx, m->class_name != NULL ? m->class_name : "");
    if (rc == 0)
        rc = puts_(write, ctx, ".");
    if (rc == 0)
        rc = puts_(write, ctx, m->method_name != NULL ? m->method_name : "");
    if (rc == 0)
        rc = puts_(write, ctx, "\nSignature: ");
    if (rc == 0)
        rc = puts_(write, ctx, m->signature != NULL ? m->signature : "");
    if (rc == 0)
        rc = puts_(write, ctx, "\n");
    size_t vi = 0;
    for (size_t r = 0; rc == 0 && r < m->records; r++) {
        const mantra_pgo_schema *s = &m->schema[r];
        n = snprintf(line, sizeof line, "Schema InstrumentationKind %" PRIu32 " ILOffset %" PRIu32 " Count %" PRIu32
                     " Other %" PRIu32 "\n",
                     (uint32_t)s->kind, (uint32_t)s->il_offset, (uint32_t)s->count, (uint32_t)s->other);
        rc = put(write, ctx, line, (size_t)n);
        int elem = pg_elem(s->kind);
        /* None elements: one "None" line per Count element (pgo.cpp), though they carry no value */
        for (int32_t k = 0; rc == 0 && k < s->count; k++) {
            if (elem == MANTRA_PGO_None) {
                rc = puts_(write, ctx, "None\n");
                continue;
            }
            uint64_t v = (uint64_t)m->values[vi++];
            switch (elem) {
            case MANTRA_PGO_FourByte:
                n = snprintf(line, sizeof line, "%" PRIu32 "\n", (uint32_t)v);
                rc = put(write, ctx, line, (size_t)n);
                break;
            case MANTRA_PGO_EightByte:
                n = snprintf(line, sizeof line, "%" PRIu32 " %" PRIu32 "\n", (uint32_t)v, (uint32_t)(v >> 32));
                rc = put(write, ctx, line, (size_t)n);
                break;
            default:
                rc = write_handle(write, ctx, m, r, (size_t)k, elem, (int64_t)v);
                break;
            }
        }
    }
    return rc;
}

int mantra_pgo_text_buffer_write(void *ctx, const char *text, size_t size) {
    mantra_pgo_text_buffer *b = ctx;
    if (size > SIZE_MAX - b->size - 1 || cm_grow((void **)&b->data, &b->cap, b->size + size + 1, 1, 4096) != 0)
        return MANTRA_ENOMEM;
    memcpy(b->data + b->size, text, size);
    b->size += size;
    b->data[b->size] = '\0';
    return 0;
}

void mantra_pgo_text_buffer_free(mantra_pgo_text_buffer *b) {
    free(b->data);
    b->data = NULL;
    b->size = b->cap = 0;
}
