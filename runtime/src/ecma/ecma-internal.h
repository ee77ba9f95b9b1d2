/* ecma-internal.h - what the files of ecma/ share: the metadata reader's state, the column schema
 * of the tables (md_schema.c) and the located errors. Private. */
#ifndef MANTRA_ECMA_INTERNAL_H
#define MANTRA_ECMA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "mantra/ecma.h"

/* A column of the schema: its kind (enum mantra_md_column_kind) and target (a table for
 * MANTRA_MD_COL_INDEX, a coded kind for MANTRA_MD_COL_CODED). */
typedef struct ec_column {
    const char *name;
    uint8_t kind, target;
} ec_column;

typedef struct ec_table_schema {
    const char *name;
    uint8_t ncolumns;
    ec_column columns[MANTRA_MD_MAX_COLUMNS];
} ec_table_schema;

/* md_schema.c: the tables of Partition II §22, indexed by table number. */
extern const ec_table_schema ec_tables[MANTRA_MD_TABLES];

/* A coded index kind (§24.2.6): tag bits and the table of each tag (0xFF: a tag no table uses). */
typedef struct ec_coded_kind {
    uint8_t bits, ntags;
    uint8_t tables[32];
} ec_coded_kind;
extern const ec_coded_kind ec_coded[MANTRA_MD_CODED_KINDS];
#define EC_NO_TABLE 0xFF

/* HeapSizes bits of the #~ stream (§24.2.6): 4-byte indexes into #Strings, #GUID, #Blob. */
#define EC_HEAP_STRINGS_4 0x01
#define EC_HEAP_GUID_4 0x02
#define EC_HEAP_BLOB_4 0x04
/* Bytes of a column in a table stream with these row counts and HeapSizes. */
uint8_t ec_column_size(const uint32_t rows[MANTRA_MD_TABLES], uint8_t heap_sizes, const ec_column *c);

typedef struct ec_heap {
    const uint8_t *data;
    uint32_t size;
    uint32_t offset; /* in the metadata */
} ec_heap;

struct mantra_md {
    const uint8_t *data;
    size_t size;
    uint64_t base_offset;
    char version[256];
    ec_heap strings, blobs, guids, user_strings, tables_stream;
    uint64_t sorted; /* the table stream's Sorted bits */
    uint32_t rows[MANTRA_MD_TABLES];
    const uint8_t *table_data[MANTRA_MD_TABLES]; /* the first row of each table */
    uint8_t row_size[MANTRA_MD_TABLES];
    uint8_t col_offset[MANTRA_MD_TABLES][MANTRA_MD_MAX_COLUMNS];
    uint8_t col_size[MANTRA_MD_TABLES][MANTRA_MD_MAX_COLUMNS];
};

/* Fills err (when not NULL) with offset and a printf message; returns MANTRA_EFORMAT. */
int ec_fail(mantra_ecma_error *err, uint64_t offset, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A blob at index of heap h (#Blob or #US): 0 with its bytes, or -1 when it does not fit. */
int ec_heap_blob(const ec_heap *h, uint32_t index, const uint8_t **data, uint32_t *size);

/* A raw column value of a row (no decoding of coded indexes). */
uint32_t ec_column_raw(const mantra_md *md, unsigned table, const uint8_t *row, unsigned column);
/* A coded index's raw value as a token; 0 with *ok 0 when its tag names no table. */
uint32_t ec_coded_token(const mantra_md *md, unsigned kind, uint32_t raw, int *ok);

/* ---- ReadyToRun's native format (r2r_native.c; NativeFormatReader: NativeReader.DecodeUnsigned,
 * DecodeSigned, NativeArray, NativeHashtable) ---- */
/* An unsigned (or signed) integer at p[0..left): the bytes read, 0 when it runs past left. */
uint32_t ec_native_uint(const uint8_t *p, size_t left, uint32_t *v);
uint32_t ec_native_int(const uint8_t *p, size_t left, int32_t *v);
/* The element offset of index i of the NativeArray whose header is at blob[0]: 0 when absent, -1
 * when the array runs past the blob. *count (may be NULL) is the array's length. */
int64_t ec_native_array_get(const uint8_t *blob, uint32_t size, uint32_t i, uint32_t *count);
/* Calls fn with the offset (in blob) of every entry's data of the NativeHashtable at blob[0]; fn's
 * non-zero result stops the walk and is returned. MANTRA_EFORMAT (err: at is blob's file offset). */
int ec_native_hashtable_each(const uint8_t *blob, uint32_t size, uint64_t at, const char *what,
                             int (*fn)(void *ctx, uint32_t entry), void *ctx, mantra_ecma_error *err);

#endif
