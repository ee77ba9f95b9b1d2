/* loader-internal.h - the YAML manifest loader's private interface, shared by its files (libyaml
 * builds only): the loader state, the YAML walk with located errors (yaml_walk.c), scalar
 * conversion (yaml_scalars.c), name tables (name_table.c), the model builders (build_vocabulary.c,
 * build_fields.c, build_provider.c) and the input checks (yaml_input.c); load.c is the entry point.
 * The first problem found stops the load: every mf_fail* function longjmps back to load.c, which
 * frees the manifest's arena, the scratch arena, the name map and the libyaml document. */
#ifndef MANTRA_MANIFEST_LOADER_INTERNAL_H
#define MANTRA_MANIFEST_LOADER_INTERNAL_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "common/arena-internal.h"
#include "common/hashmap-internal.h"
#include "manifest/manifest-internal.h"

#if defined(__GNUC__)
#define MF_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define MF_NORETURN __attribute__((noreturn))
#else
#define MF_PRINTF(f, a)
#define MF_NORETURN
#endif

/* A name table (keywords, tasks, opcodes, maps, templates, fields, providers): a cm_map from the
 * name's hash to a chain of entries, both in the scratch arena; the loader frees every table's map
 * at the end (name_table.c). Zeroed: empty. */
typedef struct mf_name_map {
    cm_map map;
    struct mf_name_map *next; /* the loader's list of every table */
} mf_name_map;

typedef struct mf_names {
    mf_name_map *m; /* NULL until mf_names_init */
} mf_names;

typedef struct mf_loader {
    const char *file;
    yaml_document_t *doc;
    mantra_manifest *m;
    cm_arena *arena;  /* the manifest's */
    cm_arena scratch; /* freed at the end */
    mf_name_map *name_maps; /* every name table's map, freed at the end */
    jmp_buf jump;
    int oom;
    unsigned line, column;
    char message[1024];
    char note[1024];
    int has_note;
} mf_loader;

/* ---- located errors and allocation (yaml_walk.c) ----------------------------------------------- */

void MF_NORETURN MF_PRINTF(5, 6) mf_fail_at(mf_loader *l, unsigned line, unsigned col, const char *note,
                                            const char *fmt, ...);
/* Fails at the node's start (line and column from 1). */
void MF_NORETURN MF_PRINTF(4, 5) mf_fail(mf_loader *l, const yaml_node_t *at, const char *note, const char *fmt, ...);
void MF_NORETURN mf_fail_oom(mf_loader *l);
/* n * size bytes in the manifest's arena / the scratch arena (never NULL: fails instead). */
void *mf_alloc(mf_loader *l, size_t n, size_t size);
void *mf_scratch(mf_loader *l, size_t n, size_t size);
/* A copy of s in the manifest's arena. */
const char *mf_keep(mf_loader *l, const char *s);
/* "first defined at line N" in buf. */
const char *mf_first_line(unsigned line, char *buf, size_t size);

/* ---- YAML nodes (yaml_walk.c) ---------------------------------------------------------------------- */

static inline unsigned mf_node_line(const yaml_node_t *n) { return (unsigned)n->start_mark.line + 1; }
static inline unsigned mf_node_col(const yaml_node_t *n) { return (unsigned)n->start_mark.column + 1; }
static inline const char *mf_svalue(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

yaml_node_t *mf_node_at(mf_loader *l, int index);
/* A plain null scalar ("", ~, null, Null, NULL). */
int mf_is_null(const yaml_node_t *n);
/* "a mapping", "a sequence", "nothing", "null" or the quoted text (at most 40 characters). */
const char *mf_describe(const yaml_node_t *n, char *buf, size_t size);
#define MF_DESCRIBE(n) mf_describe((n), dbuf_, sizeof dbuf_)

#define MF_MAX_KEYS 12

/* The values of a mapping, by index in its list of keys. */
typedef struct mf_pairs {
    yaml_node_t *key[MF_MAX_KEYS];
    yaml_node_t *val[MF_MAX_KEYS];
} mf_pairs;

/* Index of key k in keys (for readable code). */
size_t mf_key_index(const char *const *keys, const char *k);
/* Checks the shape and keys of a mapping and fills p; `required`: bit i = keys[i] is required. */
void mf_mapping(mf_loader *l, yaml_node_t *node, const char *what, const char *const *keys, unsigned required,
                mf_pairs *p);
/* The items of a sequence value (absent or null: none). */
yaml_node_item_t *mf_sequence(mf_loader *l, const mf_pairs *p, size_t i, const char *key, size_t *count);

/* A present value that is not null (an optional key given as `key:` or `key: ~` means the default). */
static inline yaml_node_t *mf_given(const mf_pairs *p, size_t i) {
    if (p->val[i] == NULL || mf_is_null(p->val[i]))
        return NULL;
    return p->val[i];
}

/* ---- scalars (yaml_scalars.c) --------------------------------------------------------------------- */

/* An integer as written: [-+]?(0x[0-9a-f]+|[0-9]+) after stripping white space. */
typedef struct mf_int {
    int neg;
    int big; /* magnitude does not fit 64 bits */
    uint64_t mag;
    char text[48]; /* decimal text of the value (as Python prints it), or the input when big */
} mf_int;

/* `count` / `length`: a number or a field name. */
typedef struct mf_size_ref {
    int given;
    int is_name;
    const char *name;
    mf_int num;
} mf_size_ref;

const char *mf_scalar(mf_loader *l, yaml_node_t *n, const char *key, const char *kind);
const char *mf_string(mf_loader *l, yaml_node_t *n, const char *key);
/* 0, or -1 when s[0..len) is not an integer. */
int mf_parse_int(const char *s, size_t len, mf_int *out);
mf_int mf_integer(mf_loader *l, yaml_node_t *n, const char *key);
/* hex(value) as Python prints it (for non-negative values), else decimal. */
void mf_hex_text(const mf_int *v, char *out, size_t size);
/* validate.in_range(): "{what} {value} of {owner} is out of range {lo}..{hi}". */
uint64_t mf_in_range(mf_loader *l, const mf_int *v, const char *what, const char *owner, uint64_t hi, unsigned line,
                     unsigned col, const char *note);
int mf_boolean(mf_loader *l, yaml_node_t *n, const char *key);
uint8_t mf_level(mf_loader *l, yaml_node_t *n, const char *key);
uint16_t mf_field_type(mf_loader *l, yaml_node_t *n, const char *key);
/* SByte .. UInt64 are the contiguous type codes 5..12. */
static inline int mf_is_integer_type(unsigned t) {
    return t >= MANTRA_TYPE_SBYTE && t <= MANTRA_TYPE_UINT64;
}
/* A GUID value as the Python loader keeps it: stripped, without braces, lower case. */
const char *mf_guid_text(mf_loader *l, yaml_node_t *n, const char *key);
/* Parses text (with mantra_manifest_guid_parse) into *out (may be NULL), or fails at `at`. */
void mf_check_guid(mf_loader *l, const char *text, const char *owner_kind, const char *owner, yaml_node_t *at,
                   mantra_guid *out);
mf_size_ref mf_size_ref_of(mf_loader *l, yaml_node_t *n, const char *key);

/* ---- name tables (name_table.c) ------------------------------------------------------------------- */

/* Starts an empty table. */
void mf_names_init(mf_loader *l, mf_names *t);
/* The item stored under name, or NULL. */
const void *mf_names_get(const mf_names *t, const char *name);
/* Adds name -> item unless present; returns the item already there, or NULL when added. name must
 * outlive the load. */
const void *mf_names_add(mf_loader *l, mf_names *t, const char *name, const void *item);
/* Frees the maps of every table (the entries are in the scratch arena). */
void mf_names_free_all(mf_loader *l);

/* ---- the model (build_vocabulary.c, build_fields.c, build_provider.c) -------------------------------- */

typedef struct mf_opcode_def {
    const char *name;
    const char *message; /* its message, or its name when it has none */
    uint8_t value;
} mf_opcode_def;

typedef struct mf_task_def {
    const char *name;
    const char *message; /* its message, or its name when it has none */
    uint16_t value;
    mf_names opcodes;
} mf_task_def;

/* The provider being built and its name tables. */
typedef struct mf_provider_ctx {
    mantra_manifest_provider *p;
    mf_names keywords, tasks, popcodes, maps, templates;
    const mf_task_def *task_defs;
    size_t task_count;
} mf_provider_ctx;

/* The keys of a provider mapping (build_provider.c). */
extern const char *const mf_provider_keys[];

/* Keywords, tasks and maps of the provider mapping pp; opcode definitions (of a task or of the
 * provider; `where` ends the duplicate message) into table (items: mf_opcode_def). */
void mf_keywords(mf_loader *l, mf_provider_ctx *c, const mf_pairs *pp);
void mf_tasks(mf_loader *l, mf_provider_ctx *c, const mf_pairs *pp);
void mf_opcodes(mf_loader *l, yaml_node_item_t *items, size_t n, mf_names *table, const char *where);
void mf_maps(mf_loader *l, mf_provider_ctx *c, const mf_pairs *pp);

/* Builds template t from its fields node (a sequence, null or NULL); `at` locates it. */
void mf_template_of(mf_loader *l, mf_provider_ctx *c, mantra_manifest_template *t, const char *name,
                    yaml_node_t *fields_node, yaml_node_t *at);
/* Bytes of a payload known without its arguments (validate.fixed_size), saturating. */
uint64_t mf_fixed_size(const mantra_manifest_field *f, size_t n);

/* The whole manifest from the document's root node. */
void mf_build_manifest(mf_loader *l, yaml_node_t *root);

/* ---- input checks (yaml_input.c) ------------------------------------------------------------------ */

/* Line and column (characters) of a byte offset. */
void mf_byte_loc(const uint8_t *data, size_t offset, unsigned *line, unsigned *col);
/* UTF-16 (with BOM) to UTF-8 in a malloc'd buffer; NULL + reason when invalid. */
uint8_t *mf_utf16_to_utf8(const uint8_t *d, size_t n, size_t *out_n, const char **reason);
/* Refuses more than 1000 levels of nesting, as load_yaml does. Returns 0, or 1 with the error set. */
int mf_check_depth(mf_loader *l, const uint8_t *data, size_t n);
/* The libyaml error as load_yaml._compose words it. */
void mf_yaml_error(mf_loader *l, const yaml_parser_t *parser, const uint8_t *data, size_t n);

#endif /* MANTRA_MANIFEST_LOADER_INTERNAL_H */
