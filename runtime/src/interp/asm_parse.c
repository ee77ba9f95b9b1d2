/* asm_parse.c - the assembler's line loop: directives (.module, .method, .locals, .end), labels
 * and instructions, encoded into each method's bytecode (docs/interp.md "Assembly"). */
#include <stdio.h>
#include <stdlib.h>

#include "common/grow-internal.h"
#include "interp/asm-internal.h"

static int emit(ip_asm_state *st, ip_asm_method *am, const void *bytes, size_t n) {
    if (am->len + n > ASM_MAX_CODE)
        return ip_asm_error(st, ip_asm_here(st), "method too large (over %u bytes of bytecode)", ASM_MAX_CODE);
    if (cm_grow((void **)&am->code, &am->cap, am->len + n, 1, 64) != 0)
        return ip_asm_nomem(st);
    memcpy(am->code + am->len, bytes, n);
    am->len += n;
    return 0;
}

static int add_fix(ip_asm_state *st, ip_asm_fix **arr, size_t *n, size_t *cap, const char *name, size_t len,
                   uint32_t at, uint32_t base, ip_asm_loc loc) {
    if (cm_grow((void **)arr, cap, *n + 1, sizeof **arr, 8) != 0)
        return ip_asm_nomem(st);
    ip_asm_fix *f = &(*arr)[*n];
    f->name = ip_asm_strndup(name, len);
    if (f->name == NULL)
        return ip_asm_nomem(st);
    f->at = at;
    f->base = base;
    f->loc = loc;
    (*n)++;
    return 0;
}

static int parse_type(const char *s, size_t n, int allow_void) {
    if (n == 5 && memcmp(s, "int64", 5) == 0)
        return IP_TYPE_I64;
    if (n == 6 && memcmp(s, "double", 6) == 0)
        return IP_TYPE_F64;
    if (allow_void && n == 4 && memcmp(s, "void", 4) == 0)
        return IP_TYPE_VOID;
    return -1;
}

static const char *type_name(int t) {
    return t == IP_TYPE_I64 ? "int64" : t == IP_TYPE_F64 ? "double" : "void";
}

/* RET(TYPE,...): fills the method's types and its normalised signature text. */
static int parse_signature(ip_asm_state *st, ip_method *m) {
    const char *s;
    size_t n;
    ip_asm_ident(st, &s, &n);
    if (n == 5 && memcmp(s, "async", 5) == 0) { /* `async TYPE(...)`: a task of TYPE */
        m->is_async = 1;
        ip_asm_skip_blanks(st);
        ip_asm_ident(st, &s, &n);
    }
    int rt = parse_type(s, n, 1);
    if (rt < 0)
        return ip_asm_error(st, ip_asm_here(st), "expected a return type (int64, double or void)");
    m->ret_type = (uint8_t)rt;
    ip_asm_skip_blanks(st);
    if (st->p >= st->le || *st->p != '(')
        return ip_asm_error(st, ip_asm_here(st), "expected '(' after the return type");
    st->p++;
    char text[IP_MAX_ARGS * 7 + 16];
    size_t k = (size_t)snprintf(text, sizeof text, "%s(", type_name(rt));
    ip_asm_skip_blanks(st);
    if (st->p < st->le && *st->p == ')') {
        st->p++;
    } else {
        for (;;) {
            ip_asm_loc at = ip_asm_here(st);
            ip_asm_ident(st, &s, &n);
            int t = parse_type(s, n, 0);
            if (t < 0)
                return ip_asm_error(st, at, "expected an argument type (int64 or double)");
            if (m->nargs >= IP_MAX_ARGS)
                return ip_asm_error(st, at, "too many arguments (at most %u)", IP_MAX_ARGS);
            m->arg_types[m->nargs] = (uint8_t)t;
            k += (size_t)snprintf(text + k, sizeof text - k, "%s%s", m->nargs ? "," : "", type_name(t));
            m->nargs++;
            ip_asm_skip_blanks(st);
            if (st->p < st->le && *st->p == ',') {
                st->p++;
                continue;
            }
            if (st->p < st->le && *st->p == ')') {
                st->p++;
                break;
            }
            return ip_asm_error(st, ip_asm_here(st), "expected ',' or ')' in the signature");
        }
    }
    snprintf(text + k, sizeof text - k, ")");
    m->signature = ip_asm_strndup(text, strlen(text));
    return m->signature ? 0 : ip_asm_nomem(st);
}

static int dir_module(ip_asm_state *st, ip_asm_loc at) {
    if (st->have_module)
        return ip_asm_error(st, at, "a second .module (one module per file)");
    const char *s;
    size_t n;
    ip_asm_ident(st, &s, &n);
    if (n == 0)
        return ip_asm_error(st, ip_asm_here(st), "expected the module name");
    st->mod->name = ip_asm_strndup(s, n);
    if (st->mod->name == NULL)
        return ip_asm_nomem(st);
    int rc = ip_asm_guid(st, st->mod->guid);
    if (rc != 0)
        return rc;
    st->have_module = 1;
    return ip_asm_expect_end(st);
}

static int dir_method(ip_asm_state *st, ip_asm_loc at) {
    if (st->in_method)
        return ip_asm_error(st, at, ".method inside a method (missing .end)");
    mantra_interp_module *mod = st->mod;
    if (mod->nmethods >= ASM_MAX_METHODS)
        return ip_asm_error(st, at, "too many methods");
    size_t cap = st->am_cap;
    if (cm_grow((void **)&mod->methods, &cap, mod->nmethods + 1, sizeof *mod->methods, 8) != 0)
        return ip_asm_nomem(st);
    cap = st->am_cap;
    if (cm_grow((void **)&st->am, &cap, mod->nmethods + 1, sizeof *st->am, 8) != 0)
        return ip_asm_nomem(st);
    st->am_cap = cap;
    size_t mi = mod->nmethods;
    ip_method *m = &mod->methods[mi];
    memset(m, 0, sizeof *m);
    ip_asm_method *am = &st->am[mi];
    memset(am, 0, sizeof *am);
    mod->nmethods++;
    am->loc = at;

    ip_asm_loc name_at = ip_asm_here(st);
    const char *s;
    size_t n;
    ip_asm_ident(st, &s, &n);
    name_at.col = (uint32_t)(s - st->ls) + 1;
    if (n == 0)
        return ip_asm_error(st, ip_asm_here(st), "expected the method name");
    if (s[n - 1] == '.' || s[0] == '.')
        return ip_asm_error(st, name_at, "bad method name '%.*s'", (int)n, s);
    m->full_name = ip_asm_strndup(s, n);
    if (m->full_name == NULL)
        return ip_asm_nomem(st);
    const char *dot = NULL;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '.')
            dot = s + i;
    m->namespace_name = ip_asm_strndup(s, dot ? (size_t)(dot - s) : 0);
    m->name = dot ? ip_asm_strndup(dot + 1, n - (size_t)(dot + 1 - s)) : ip_asm_strndup(s, n);
    if (m->namespace_name == NULL || m->name == NULL)
        return ip_asm_nomem(st);
    const uint64_t *dup = cm_map_get(&st->by_full, ip_asm_name_hash(m->full_name));
    for (size_t i = dup ? 0 : mi; i < mi; i++) /* a scan only when the hash is known */
        if (strcmp(mod->methods[i].full_name, m->full_name) == 0)
            return ip_asm_error(st, name_at, "duplicate method '%s' (first defined on line %u)", m->full_name,
                             (unsigned)st->am[i].loc.line);
    int rc = parse_signature(st, m);
    if (rc != 0)
        return rc;
    m->token = 0x06000000u | (uint32_t)(mi + 1);
    int explicit_token = 0;
    ip_asm_loc tok_at = ip_asm_here(st);
    if (!ip_asm_at_end(st)) {
        tok_at = ip_asm_here(st);
        ip_asm_ident(st, &s, &n);
        if (!(n == 5 && memcmp(s, "token", 5) == 0))
            return ip_asm_error(st, tok_at, "expected 'token' or the end of the line");
        ip_asm_skip_blanks(st);
        tok_at = ip_asm_here(st);
        int64_t v;
        rc = ip_asm_int64(st, "token", &v);
        if (rc != 0)
            return rc;
        if (v < 0 || v > 0xffffffff || ((uint64_t)v >> 24) != 0x06 || (v & 0xffffff) == 0)
            return ip_asm_error(st, tok_at, "token 0x%llx is not a method token (0x06000001..0x06ffffff)",
                             (unsigned long long)v);
        m->token = (uint32_t)v;
        explicit_token = 1;
    }
    rc = ip_asm_expect_end(st);
    if (rc != 0)
        return rc;
    const uint64_t *same = cm_map_get(&st->by_token, m->token);
    if (same != NULL) {
        size_t i = (size_t)(*same - 1);
        return ip_asm_error(st, explicit_token ? tok_at : name_at,
                         "duplicate token 0x%08x (also method '%s' on line %u)", (unsigned)m->token,
                         mod->methods[i].full_name, (unsigned)st->am[i].loc.line);
    }
    if (ip_asm_index_method(st, mi) != 0)
        return ip_asm_nomem(st);
    st->in_method = 1;
    return 0;
}

static int dir_locals(ip_asm_state *st, ip_asm_loc at) {
    if (!st->in_method)
        return ip_asm_error(st, at, ".locals outside a method");
    ip_asm_method *am = &st->am[st->mod->nmethods - 1];
    if (am->locals_set)
        return ip_asm_error(st, at, "a second .locals in this method");
    if (am->ninsns > 0)
        return ip_asm_error(st, at, ".locals must come before the first instruction");
    ip_asm_skip_blanks(st);
    ip_asm_loc nat = ip_asm_here(st);
    int64_t v;
    int rc = ip_asm_int64(st, "local count", &v);
    if (rc != 0)
        return rc;
    unsigned max = 65535u - st->mod->methods[st->mod->nmethods - 1].nargs; /* frame slots are uint16 */
    if (v < 0 || v > (int64_t)max)
        return ip_asm_error(st, nat, "local count %lld out of range (0..%u)", (long long)v, max);
    st->mod->methods[st->mod->nmethods - 1].nlocals = (uint16_t)v;
    am->locals_set = 1;
    return ip_asm_expect_end(st);
}

static int dir_end(ip_asm_state *st, ip_asm_loc at) {
    if (!st->in_method)
        return ip_asm_error(st, at, ".end outside a method");
    int rc = ip_asm_expect_end(st);
    if (rc != 0)
        return rc;
    size_t mi = st->mod->nmethods - 1;
    if (st->am[mi].ninsns == 0)
        return ip_asm_error(st, at, "method '%s' has no instructions", st->mod->methods[mi].full_name);
    st->in_method = 0;
    return ip_asm_finish_method_labels(st, mi);
}

static int add_string(ip_asm_state *st, char *s, uint32_t len, uint32_t *index) {
    mantra_interp_module *mod = st->mod;
    size_t cap = mod->nstrings, cap2 = mod->nstrings;
    /* exact-size growth keeps the two arrays in step; literals are few */
    if (cm_grow((void **)&mod->strings, &cap, mod->nstrings + 1, sizeof *mod->strings, 1) != 0 ||
        cm_grow((void **)&mod->string_lens, &cap2, mod->nstrings + 1, sizeof *mod->string_lens, 1) != 0) {
        free(s);
        return ip_asm_nomem(st);
    }
    mod->strings[mod->nstrings] = s;
    mod->string_lens[mod->nstrings] = len;
    *index = (uint32_t)mod->nstrings++;
    return 0;
}

static int instruction(ip_asm_state *st, const char *s, size_t n, ip_asm_loc at) {
    int op = -1;
    for (int i = 0; i < IP_OP_COUNT_; i++) {
        const char *nm = ip_opinfo_table[i].name;
        if (strlen(nm) == n && memcmp(nm, s, n) == 0) {
            op = i;
            break;
        }
    }
    if (op < 0)
        return ip_asm_error(st, at, "unknown opcode '%.*s'", (int)(n > 40 ? 40 : n), s);
    if (op >= IP_OP_FIRST_LOADER_ONLY)
        return ip_asm_error(st, at, "'%s' is inserted by the loader (MANTRA_InterpPgo), not written in assembly",
                         ip_opinfo_table[op].name);
    if (!st->in_method)
        return ip_asm_error(st, at, "instruction outside a method");
    size_t mi = st->mod->nmethods - 1;
    ip_asm_method *am = &st->am[mi];
    const ip_method *m = &st->mod->methods[mi];
    if (cm_grow((void **)&am->insns, &am->insns_cap, am->ninsns + 1, sizeof *am->insns, 16) != 0)
        return ip_asm_nomem(st);
    uint32_t off = (uint32_t)am->len;
    am->insns[am->ninsns].offset = off;
    am->insns[am->ninsns].loc = at;
    am->ninsns++;
    uint8_t b = (uint8_t)op;
    int rc = emit(st, am, &b, 1);
    if (rc != 0)
        return rc;
    ip_asm_skip_blanks(st);
    ip_asm_loc oat = ip_asm_here(st);
    switch (ip_opinfo_table[op].operand) {
    case IP_OPND_NONE:
        break;
    case IP_OPND_I64: {
        int64_t v;
        if ((rc = ip_asm_int64(st, "integer", &v)) != 0)
            return rc;
        rc = emit(st, am, &v, 8);
        break;
    }
    case IP_OPND_F64: {
        double v;
        if ((rc = ip_asm_double(st, &v)) != 0)
            return rc;
        rc = emit(st, am, &v, 8);
        break;
    }
    case IP_OPND_U16: {
        int64_t v;
        int is_arg = op == IP_OP_LDARG || op == IP_OP_STARG;
        if ((rc = ip_asm_int64(st, is_arg ? "argument index" : "local index", &v)) != 0)
            return rc;
        int64_t lim = is_arg ? m->nargs : m->nlocals;
        if (v < 0 || v >= lim)
            return ip_asm_error(st, oat, "%s %lld out of range (method '%s' has %lld)", is_arg ? "argument" : "local",
                             (long long)v, m->full_name, (long long)lim);
        /* locals are encoded as frame slots: the arguments come first (docs/interp.md) */
        uint16_t u = (uint16_t)(is_arg ? v : v + m->nargs);
        rc = emit(st, am, &u, 2);
        break;
    }
    case IP_OPND_BR: {
        const char *ls;
        size_t ln;
        ip_asm_ident(st, &ls, &ln);
        if (ln == 0)
            return ip_asm_error(st, oat, "expected a label");
        uint8_t z[4] = {0};
        if ((rc = emit(st, am, z, 4)) != 0)
            return rc;
        rc = add_fix(st, &am->branches, &am->nbranches, &am->branches_cap, ls, ln, off + 1, off + 5, oat);
        break;
    }
    case IP_OPND_SWITCH: {
        /* count first, then the targets */
        const char *save = st->p;
        uint32_t count = 0;
        for (;;) {
            const char *ls;
            size_t ln;
            ip_asm_loc lat = ip_asm_here(st);
            ip_asm_skip_blanks(st);
            lat = ip_asm_here(st);
            ip_asm_ident(st, &ls, &ln);
            if (ln == 0)
                return ip_asm_error(st, lat, "expected a label");
            if (++count > 65535)
                return ip_asm_error(st, lat, "too many switch targets (at most 65535)");
            ip_asm_skip_blanks(st);
            if (st->p < st->le && *st->p == ',') {
                st->p++;
                continue;
            }
            break;
        }
        st->p = save;
        if ((rc = emit(st, am, &count, 4)) != 0)
            return rc;
        uint32_t end = off + 5 + 4 * count;
        for (uint32_t i = 0; i < count; i++) {
            const char *ls;
            size_t ln;
            ip_asm_skip_blanks(st);
            ip_asm_loc lat = ip_asm_here(st);
            ip_asm_ident(st, &ls, &ln);
            uint8_t z[4] = {0};
            if ((rc = emit(st, am, z, 4)) != 0)
                return rc;
            if ((rc = add_fix(st, &am->branches, &am->nbranches, &am->branches_cap, ls, ln, off + 5 + 4 * i, end,
                              lat)) != 0)
                return rc;
            ip_asm_skip_blanks(st);
            if (st->p < st->le && *st->p == ',')
                st->p++;
        }
        break;
    }
    case IP_OPND_CALL: {
        const char *ls;
        size_t ln;
        ip_asm_ident(st, &ls, &ln);
        if (ln == 0)
            return ip_asm_error(st, oat, "expected a method name");
        uint8_t z[4] = {0};
        if ((rc = emit(st, am, z, 4)) != 0)
            return rc;
        rc = add_fix(st, &am->calls, &am->ncalls, &am->calls_cap, ls, ln, off + 1, off + 5, oat);
        break;
    }
    case IP_OPND_STR: {
        char *str;
        uint32_t len, idx;
        if ((rc = ip_asm_string(st, &str, &len)) != 0)
            return rc;
        if ((rc = add_string(st, str, len, &idx)) != 0)
            return rc;
        rc = emit(st, am, &idx, 4);
        break;
    }
    default:
        break;
    }
    if (rc != 0)
        return rc;
    return ip_asm_expect_end(st);
}

static int label(ip_asm_state *st, const char *s, size_t n, ip_asm_loc at) {
    if (!st->in_method)
        return ip_asm_error(st, at, "label outside a method");
    ip_asm_method *am = &st->am[st->mod->nmethods - 1];
    for (size_t i = 0; i < am->nlabels; i++)
        if (strlen(am->labels[i].name) == n && memcmp(am->labels[i].name, s, n) == 0)
            return ip_asm_error(st, at, "duplicate label '%.*s' (first defined on line %u)", (int)n, s,
                             (unsigned)am->labels[i].loc.line);
    if (cm_grow((void **)&am->labels, &am->labels_cap, am->nlabels + 1, sizeof *am->labels, 8) != 0)
        return ip_asm_nomem(st);
    ip_asm_label *l = &am->labels[am->nlabels];
    l->name = ip_asm_strndup(s, n);
    if (l->name == NULL)
        return ip_asm_nomem(st);
    l->offset = (uint32_t)am->len;
    l->loc = at;
    am->nlabels++;
    return 0;
}

static int one_line(ip_asm_state *st) {
    if (ip_asm_at_end(st))
        return 0;
    ip_asm_loc at = ip_asm_here(st);
    if (*st->p == '.') {
        st->p++;
        const char *s;
        size_t n;
        ip_asm_ident(st, &s, &n);
        if (n == 6 && memcmp(s, "module", 6) == 0)
            return dir_module(st, at);
        if (!st->have_module)
            return ip_asm_error(st, at, "expected '.module NAME GUID' first");
        if (n == 6 && memcmp(s, "method", 6) == 0)
            return dir_method(st, at);
        if (n == 6 && memcmp(s, "locals", 6) == 0)
            return dir_locals(st, at);
        if (n == 3 && memcmp(s, "end", 3) == 0)
            return dir_end(st, at);
        return ip_asm_error(st, at, "unknown directive '.%.*s'", (int)(n > 40 ? 40 : n), s);
    }
    const char *s;
    size_t n;
    ip_asm_ident(st, &s, &n);
    if (n == 0) {
        unsigned char c = (unsigned char)*st->p;
        if (c >= 0x20 && c < 0x7f)
            return ip_asm_error(st, at, "unexpected '%c'", c);
        return ip_asm_error(st, at, "unexpected byte 0x%02x", c);
    }
    if (!st->have_module)
        return ip_asm_error(st, at, "expected '.module NAME GUID' first");
    ip_asm_skip_blanks(st);
    if (st->p < st->le && *st->p == ':') {
        st->p++;
        int rc = label(st, s, n, at);
        if (rc != 0 || ip_asm_at_end(st))
            return rc;
        at = ip_asm_here(st);
        ip_asm_ident(st, &s, &n);
        if (n == 0)
            return ip_asm_error(st, at, "expected an instruction after the label");
    }
    return instruction(st, s, n, at);
}

int mantra_interp_assemble(const char *text, size_t size, const char *file, mantra_interp_module **out,
                           mantra_interp_diag *diag) {
    if (diag != NULL)
        memset(diag, 0, sizeof *diag);
    if ((text == NULL && size > 0) || out == NULL)
        return MANTRA_EINVAL;
    *out = NULL;
    ip_asm_state st;
    memset(&st, 0, sizeof st);
    st.text = text;
    st.size = size;
    st.file = file ? file : "<input>";
    st.diag = diag;
    st.mod = calloc(1, sizeof *st.mod);
    if (st.mod == NULL)
        return MANTRA_ENOMEM;
    int rc = 0;
    const char *p = text, *end = text + size;
    st.line = 0;
    while (rc == 0 && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        st.line++;
        st.ls = st.p = p;
        st.le = nl ? nl : end;
        rc = one_line(&st);
        p = nl ? nl + 1 : end;
    }
    if (rc == 0) {
        /* the position after the last character */
        if (size == 0 || text[size - 1] == '\n') {
            st.line++;
            st.ls = st.p = st.le = end;
        } else {
            st.p = st.le;
        }
        if (!st.have_module)
            rc = ip_asm_error(&st, ip_asm_here(&st), "no '.module NAME GUID' in the file");
        else if (st.in_method)
            rc = ip_asm_error(&st, ip_asm_here(&st), "missing .end of method '%s' (line %u)",
                           st.mod->methods[st.mod->nmethods - 1].full_name,
                           (unsigned)st.am[st.mod->nmethods - 1].loc.line);
        else if (st.mod->nmethods == 0)
            rc = ip_asm_error(&st, ip_asm_here(&st), "no methods in the module");
        else
            rc = ip_asm_finish_module(&st);
    }
    for (size_t i = 0; i < st.mod->nmethods; i++)
        ip_asm_method_free(&st.am[i]);
    free(st.am);
    cm_map_free(&st.by_full);
    cm_map_free(&st.by_short);
    cm_map_free(&st.by_token);
    if (rc != 0) {
        mantra_interp_module_free(st.mod);
        return rc;
    }
    *out = st.mod;
    return 0;
}
