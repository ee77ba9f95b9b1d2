/* yaml_walk.c - the manifest loader's walk over the libyaml document: located errors (FILE:LINE:COL
 * from a node's start mark, with an optional note, longjmp back to the entry point), allocation in
 * the manifest's and the scratch arena, node access, null and description of a node as the messages
 * show it, and mappings (shape, known, duplicate and missing keys, in document order) and sequences.
 * It mirrors generator/mantra_gen/load_yaml.py, whose messages the tests compare. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#if defined(MANTRA_HAVE_LIBYAML)

#include "manifest/loader-internal.h"

#define NULL_TAG "tag:yaml.org,2002:null"

static void MF_NORETURN fail_v(mf_loader *l, unsigned line, unsigned col, const char *note, const char *fmt,
                               va_list ap) {
    l->line = line;
    l->column = col;
    vsnprintf(l->message, sizeof l->message, fmt, ap);
    l->has_note = note != NULL;
    if (note != NULL)
        snprintf(l->note, sizeof l->note, "%s", note);
    longjmp(l->jump, 1);
}

void MF_NORETURN MF_PRINTF(5, 6)
    mf_fail_at(mf_loader *l, unsigned line, unsigned col, const char *note, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fail_v(l, line, col, note, fmt, ap);
}

void MF_NORETURN MF_PRINTF(4, 5) mf_fail(mf_loader *l, const yaml_node_t *at, const char *note, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fail_v(l, mf_node_line(at), mf_node_col(at), note, fmt, ap);
}

void MF_NORETURN mf_fail_oom(mf_loader *l) {
    l->oom = 1;
    longjmp(l->jump, 1);
}

void *mf_alloc(mf_loader *l, size_t n, size_t size) {
    if (size != 0 && n > SIZE_MAX / size)
        mf_fail_oom(l);
    void *p = cm_arena_alloc(l->arena, n * size);
    if (p == NULL)
        mf_fail_oom(l);
    return p;
}

void *mf_scratch(mf_loader *l, size_t n, size_t size) {
    if (size != 0 && n > SIZE_MAX / size)
        mf_fail_oom(l);
    void *p = cm_arena_alloc(&l->scratch, n * size);
    if (p == NULL)
        mf_fail_oom(l);
    return p;
}

const char *mf_keep(mf_loader *l, const char *s) {
    char *p = cm_arena_strdup(l->arena, s, strlen(s));
    if (p == NULL)
        mf_fail_oom(l);
    return p;
}

/* ---- node helpers ------------------------------------------------------------------------------------ */

yaml_node_t *mf_node_at(mf_loader *l, int index) {
    yaml_node_t *n = yaml_document_get_node(l->doc, index);
    if (n == NULL) /* cannot happen with a document libyaml built */
        mf_fail_at(l, 1, 1, NULL, "internal error: dangling YAML node");
    return n;
}

static int is_plain_default(const yaml_node_t *n) {
    const char *tag = (const char *)n->tag;
    return n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
           (tag == NULL || strcmp(tag, YAML_DEFAULT_SCALAR_TAG) == 0 || strcmp(tag, NULL_TAG) == 0);
}

int mf_is_null(const yaml_node_t *n) {
    if (n->type != YAML_SCALAR_NODE || !is_plain_default(n))
        return 0;
    const char *v = mf_svalue(n);
    return n->data.scalar.length == strlen(v) &&
           (strcmp(v, "") == 0 || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 || strcmp(v, "Null") == 0 ||
            strcmp(v, "NULL") == 0);
}

/* mf_describe(): "a mapping", "a sequence", "nothing", "null" or the quoted text (at most 40 characters). */
const char *mf_describe(const yaml_node_t *n, char *buf, size_t size) {
    if (n->type == YAML_MAPPING_NODE)
        return "a mapping";
    if (n->type == YAML_SEQUENCE_NODE)
        return "a sequence";
    if (mf_is_null(n))
        return mf_svalue(n)[0] == '\0' ? "nothing" : "null";
    const unsigned char *s = n->data.scalar.value;
    size_t len = n->data.scalar.length, chars = 0, cut = len;
    for (size_t i = 0; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            if (chars == 37)
                cut = i;
            chars++;
        }
    }
    int truncate = chars > 40;
    size_t end = truncate ? cut : len, o = 0;
    buf[o++] = '\'';
    for (size_t i = 0; i < end && o + 8 < size; i++) {
        if (s[i] == '\n') {
            buf[o++] = '\\';
            buf[o++] = 'n';
        } else {
            buf[o++] = (char)s[i];
        }
    }
    if (truncate && o + 8 < size) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o++] = '\'';
    buf[o] = '\0';
    return buf;
}

size_t mf_key_index(const char *const *keys, const char *k) {
    for (size_t i = 0; keys[i] != NULL; i++)
        if (strcmp(keys[i], k) == 0)
            return i;
    return MF_MAX_KEYS; /* never: callers use their own keys */
}

static int mark_before(unsigned la, unsigned ca, unsigned lb, unsigned cb) { return la < lb || (la == lb && ca < cb); }

void mf_mapping(mf_loader *l, yaml_node_t *node, const char *what, const char *const *keys, unsigned required,
                mf_pairs *p) {
    char dbuf_[256];
    memset(p, 0, sizeof *p);
    if (node->type != YAML_MAPPING_NODE)
        mf_fail(l, node, NULL, "expected a mapping for %s, got %s", what, MF_DESCRIBE(node));
    /* Keys come in document order: the first key problem is the earliest one, unless a required key
     * is missing (reported at the mapping's start, which comes first). */
    for (yaml_node_pair_t *pr = node->data.mapping.pairs.start; pr < node->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = mf_node_at(l, pr->key), *v = mf_node_at(l, pr->value);
        const char *problem = NULL;
        char msg[600], note[600];
        note[0] = '\0';
        if (k->type != YAML_SCALAR_NODE) {
            snprintf(msg, sizeof msg, "expected a string key in %s, got %s", what, MF_DESCRIBE(k));
            problem = msg;
        } else if (strcmp(mf_svalue(k), "<<") == 0 && k->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
            snprintf(msg, sizeof msg, "merge key '<<' is not supported in %s", what);
            problem = msg;
        } else {
            size_t i = 0;
            while (keys[i] != NULL && strcmp(keys[i], mf_svalue(k)) != 0)
                i++;
            if (keys[i] == NULL) {
                snprintf(msg, sizeof msg, "unknown key '%.200s' in %s", mf_svalue(k), what);
                size_t o = (size_t)snprintf(note, sizeof note, "valid keys: ");
                for (size_t j = 0; keys[j] != NULL && o < sizeof note; j++)
                    o += (size_t)snprintf(note + o, sizeof note - o, "%s%s", j ? ", " : "", keys[j]);
                problem = msg;
            } else if (p->key[i] != NULL) {
                snprintf(msg, sizeof msg, "duplicate key '%s' in %s", keys[i], what);
                snprintf(note, sizeof note, "first given at line %u", mf_node_line(p->key[i]));
                problem = msg;
            } else {
                p->key[i] = k;
                p->val[i] = v;
            }
        }
        if (problem != NULL) {
            /* a missing key is located at the mapping's start, before any key problem */
            for (size_t i = 0; keys[i] != NULL; i++) {
                if (!(required >> i & 1u))
                    continue;
                int present = 0;
                for (yaml_node_pair_t *q = node->data.mapping.pairs.start; q < node->data.mapping.pairs.top; q++) {
                    yaml_node_t *qk = mf_node_at(l, q->key);
                    if (qk->type == YAML_SCALAR_NODE && strcmp(mf_svalue(qk), keys[i]) == 0)
                        present = 1;
                }
                if (!present && mark_before(mf_node_line(node), mf_node_col(node), mf_node_line(k), mf_node_col(k)))
                    mf_fail(l, node, NULL, "missing key '%s' in %s", keys[i], what);
            }
            mf_fail(l, k, note[0] ? note : NULL, "%s", problem);
        }
    }
    for (size_t i = 0; keys[i] != NULL; i++)
        if ((required >> i & 1u) && p->key[i] == NULL)
            mf_fail(l, node, NULL, "missing key '%s' in %s", keys[i], what);
}

yaml_node_item_t *mf_sequence(mf_loader *l, const mf_pairs *p, size_t i, const char *key, size_t *count) {
    char dbuf_[256];
    *count = 0;
    yaml_node_t *n = p->val[i];
    if (n == NULL || mf_is_null(n))
        return NULL;
    if (n->type != YAML_SEQUENCE_NODE)
        mf_fail(l, n, NULL, "expected a sequence for '%s', got %s", key, MF_DESCRIBE(n));
    *count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    return n->data.sequence.items.start;
}

const char *mf_first_line(unsigned line, char *buf, size_t size) {
    snprintf(buf, size, "first defined at line %u", line);
    return buf;
}

#endif /* MANTRA_HAVE_LIBYAML */
