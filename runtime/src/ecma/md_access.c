/* md_access.c - reading opened metadata: rows, heaps (§24.2.3-5), compressed integers (§23.2),
 * and names: a method's owning type (TypeDef.MethodList runs, §22.37), a type's enclosing type
 * (NestedClass, §22.32), full type names as reflection writes them ("Namespace.Outer+Inner") and
 * public key tokens (§6.2.1.3). */
#include <string.h>

#include "common/sha1-internal.h"
#include "ecma-internal.h"
#include "mantra/decode.h"

uint32_t ec_column_raw(const mantra_md *md, unsigned table, const uint8_t *row, unsigned column) {
    const uint8_t *p = row + md->col_offset[table][column];
    if (ec_tables[table].columns[column].kind == MANTRA_MD_COL_U8)
        return p[0];
    return md->col_size[table][column] == 2 ? mantra_load_u16(p) : mantra_load_u32(p);
}

uint32_t ec_coded_token(const mantra_md *md, unsigned kind, uint32_t raw, int *ok) {
    (void)md;
    const ec_coded_kind *k = &ec_coded[kind];
    uint32_t tag = raw & ((1u << k->bits) - 1);
    *ok = tag < k->ntags && k->tables[tag] != EC_NO_TABLE;
    return *ok ? MANTRA_MD_TOKEN(k->tables[tag], raw >> k->bits) : 0;
}

const char *mantra_md_version(const mantra_md *md) { return md ? md->version : NULL; }

uint32_t mantra_md_row_count(const mantra_md *md, unsigned table) {
    return md != NULL && table < MANTRA_MD_TABLES ? md->rows[table] : 0;
}

int mantra_md_row(const mantra_md *md, unsigned table, uint32_t row, uint32_t values[MANTRA_MD_MAX_COLUMNS]) {
    if (md == NULL || table >= MANTRA_MD_TABLES || row == 0 || row > md->rows[table])
        return MANTRA_EINVAL;
    const uint8_t *p = md->table_data[table] + (size_t)(row - 1) * md->row_size[table];
    for (unsigned c = 0; c < ec_tables[table].ncolumns; c++) {
        uint32_t v = ec_column_raw(md, table, p, c);
        if (ec_tables[table].columns[c].kind == MANTRA_MD_COL_CODED) {
            int ok;
            v = v == 0 ? 0 : ec_coded_token(md, ec_tables[table].columns[c].target, v, &ok);
        }
        values[c] = v;
    }
    return MANTRA_OK;
}

/* One column of a row mantra_md_open accepted (the caller checked table and row). */
static uint32_t column(const mantra_md *md, unsigned table, uint32_t row, unsigned c) {
    return ec_column_raw(md, table, md->table_data[table] + (size_t)(row - 1) * md->row_size[table], c);
}

const char *mantra_md_string(const mantra_md *md, uint32_t index) {
    if (md == NULL)
        return NULL;
    if (index == 0) /* the empty string, whatever the heap's first byte says */
        return "";
    return index < md->strings.size ? (const char *)md->strings.data + index : NULL;
}

int mantra_md_blob(const mantra_md *md, uint32_t index, const uint8_t **data, uint32_t *size) {
    if (md == NULL || data == NULL || size == NULL)
        return MANTRA_EINVAL;
    return ec_heap_blob(&md->blobs, index, data, size) == 0 ? MANTRA_OK : MANTRA_EINVAL;
}

int mantra_md_guid(const mantra_md *md, uint32_t index, mantra_guid *out) {
    if (md == NULL || out == NULL || index > md->guids.size / 16)
        return MANTRA_EINVAL;
    memset(out, 0, sizeof *out);
    if (index == 0)
        return MANTRA_OK;
    const uint8_t *p = md->guids.data + (size_t)(index - 1) * 16;
    out->data1 = mantra_load_u32(p);
    out->data2 = mantra_load_u16(p + 4);
    out->data3 = mantra_load_u16(p + 6);
    memcpy(out->data4, p + 8, 8);
    return MANTRA_OK;
}

int mantra_md_user_string(const mantra_md *md, uint32_t index, const uint8_t **utf16, uint32_t *units) {
    uint32_t size;
    if (md == NULL || utf16 == NULL || units == NULL || ec_heap_blob(&md->user_strings, index, utf16, &size) < 0)
        return MANTRA_EINVAL;
    *units = size / 2; /* the odd byte after the code units is a flag (§24.2.4) */
    return MANTRA_OK;
}

size_t mantra_md_uncompress(const uint8_t *p, size_t size, uint32_t *value) {
    if (p == NULL || size == 0)
        return 0;
    if ((p[0] & 0x80) == 0) {
        *value = p[0];
        return 1;
    }
    if ((p[0] & 0xC0) == 0x80) {
        if (size < 2)
            return 0;
        *value = (uint32_t)(p[0] & 0x3F) << 8 | p[1];
        return 2;
    }
    if ((p[0] & 0xE0) == 0xC0) {
        if (size < 4)
            return 0;
        *value = (uint32_t)(p[0] & 0x1F) << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
        return 4;
    }
    return 0;
}

uint32_t mantra_md_method_owner(const mantra_md *md, uint32_t method) {
    if (md == NULL || method == 0 || method > md->rows[MANTRA_MD_METHOD_DEF])
        return 0;
    /* the last TypeDef whose MethodList starts at or before `method` (MethodList never decreases) */
    uint32_t lo = 1, hi = md->rows[MANTRA_MD_TYPE_DEF], found = 0;
    while (lo <= hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (column(md, MANTRA_MD_TYPE_DEF, mid, 5) <= method) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return found;
}

uint32_t mantra_md_enclosing_type(const mantra_md *md, uint32_t type) {
    if (md == NULL)
        return 0;
    uint32_t n = md->rows[MANTRA_MD_NESTED_CLASS];
    if (md->sorted >> MANTRA_MD_NESTED_CLASS & 1) {
        uint32_t lo = 1, hi = n;
        while (lo <= hi) {
            uint32_t mid = lo + (hi - lo) / 2, v = column(md, MANTRA_MD_NESTED_CLASS, mid, 0);
            if (v == type)
                return column(md, MANTRA_MD_NESTED_CLASS, mid, 1);
            if (v < type)
                lo = mid + 1;
            else
                hi = mid - 1;
        }
        return 0;
    }
    for (uint32_t r = 1; r <= n; r++)
        if (column(md, MANTRA_MD_NESTED_CLASS, r, 0) == type)
            return column(md, MANTRA_MD_NESTED_CLASS, r, 1);
    return 0;
}

/* Appends to buf[0..size) at *len, counting what does not fit. */
static void append(char *buf, size_t size, size_t *len, const char *s) {
    size_t n = strlen(s);
    if (*len < size) {
        size_t room = size - *len - 1;
        memcpy(buf + *len, s, n < room ? n : room);
        buf[*len + (n < room ? n : room)] = '\0';
    }
    *len += n;
}

#define NAME_DEPTH_MAX 64

static int type_name_at(const mantra_md *md, uint32_t token, char *buf, size_t size, size_t *len, int depth) {
    unsigned t = MANTRA_MD_TOKEN_TABLE(token);
    uint32_t row = MANTRA_MD_TOKEN_ROW(token);
    if ((t != MANTRA_MD_TYPE_DEF && t != MANTRA_MD_TYPE_REF) || row == 0 || row > md->rows[t] || depth > NAME_DEPTH_MAX)
        return -1;
    uint32_t outer = 0, name, ns;
    if (t == MANTRA_MD_TYPE_DEF) {
        name = column(md, t, row, 1);
        ns = column(md, t, row, 2);
        uint32_t e = mantra_md_enclosing_type(md, row);
        outer = e ? MANTRA_MD_TOKEN(MANTRA_MD_TYPE_DEF, e) : 0;
    } else {
        name = column(md, t, row, 1);
        ns = column(md, t, row, 2);
        int ok;
        uint32_t scope = column(md, t, row, 0);
        uint32_t tok = scope ? ec_coded_token(md, MANTRA_MD_RESOLUTION_SCOPE, scope, &ok) : 0;
        if (MANTRA_MD_TOKEN_TABLE(tok) == MANTRA_MD_TYPE_REF && tok != 0)
            outer = tok;
    }
    if (outer) {
        if (type_name_at(md, outer, buf, size, len, depth + 1) < 0)
            return -1;
        append(buf, size, len, "+");
    }
    const char *nss = mantra_md_string(md, ns);
    if (nss[0] != '\0') {
        append(buf, size, len, nss);
        append(buf, size, len, ".");
    }
    append(buf, size, len, mantra_md_string(md, name));
    return 0;
}

size_t mantra_md_type_name(const mantra_md *md, uint32_t token, char *buf, size_t size) {
    size_t len = 0;
    if (md == NULL)
        return 0;
    if (buf != NULL && size > 0)
        buf[0] = '\0';
    else
        size = 0;
    return type_name_at(md, token, buf, size, &len, 0) < 0 ? 0 : len;
}

void mantra_ecma_public_key_token(const uint8_t *key, size_t size, uint8_t token[8]) {
    cm_sha1 s;
    uint8_t d[20];
    cm_sha1_init(&s);
    cm_sha1_update(&s, key, size);
    cm_sha1_final(&s, d);
    for (int i = 0; i < 8; i++)
        token[i] = d[19 - i];
}
