/* asm-internal.h - the assembler's working state, shared by asm_lex.c (tokens), asm_parse.c (lines
 * and directives), asm_verify.c (label and call resolution, stack depths). Private. */
#ifndef MANTRA_INTERP_ASM_INTERNAL_H
#define MANTRA_INTERP_ASM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/hashmap-internal.h"
#include "interp/interp-internal.h"

typedef struct ip_asm_loc {
    uint32_t line, col;
} ip_asm_loc;

typedef struct ip_asm_label {
    char *name;
    uint32_t offset;
    ip_asm_loc loc;
} ip_asm_label;

/* A reference to resolve at the end of a method (label) or of the file (method). */
typedef struct ip_asm_fix {
    char *name;
    uint32_t at;   /* operand position in the method's code */
    uint32_t base; /* offset of the next instruction (branches are relative to it) */
    ip_asm_loc loc;
} ip_asm_fix;

typedef struct ip_asm_insn {
    uint32_t offset;
    ip_asm_loc loc;
} ip_asm_insn;

/* One method while it is assembled (kept until the end of the file for call resolution and the
 * stack check). */
typedef struct ip_asm_method {
    ip_asm_loc loc;
    uint8_t *code;
    size_t len, cap;
    ip_asm_label *labels;
    size_t nlabels, labels_cap;
    ip_asm_fix *branches;
    size_t nbranches, branches_cap;
    ip_asm_fix *calls;
    size_t ncalls, calls_cap;
    ip_asm_insn *insns;
    size_t ninsns, insns_cap;
    int locals_set;
} ip_asm_method;

typedef struct ip_asm_state {
    const char *text;
    size_t size;
    const char *file;
    /* the current line: [ls, le), cursor p */
    const char *ls, *le, *p;
    uint32_t line;
    mantra_interp_module *mod;
    ip_asm_method *am; /* one per module method */
    size_t am_cap;
    /* method index + 1 by the FNV-1a hash of the full name, of the short name (ASM_AMBIGUOUS: two
     * methods share it), and by token: duplicate checks and call resolution without a scan (a
     * hash that collides with another name's falls back to one) */
    cm_map by_full, by_short, by_token;
    int in_method;
    int have_module;
    mantra_interp_diag *diag;
} ip_asm_state;

#define ASM_MAX_CODE (16u << 20) /* bytes of one method */
#define ASM_AMBIGUOUS UINT64_MAX

#define ip_asm_name_hash cm_fnv1a_str

/* The method named name ("Ns.Name" exactly, else a unique short "Name"): its index, -1 none, -2
 * ambiguous (asm_verify.c). */
int64_t ip_asm_find_method(const ip_asm_state *st, const char *name);
/* Records method mi in the name and token maps (asm_verify.c): 0 or MANTRA_ENOMEM. */
int ip_asm_index_method(ip_asm_state *st, size_t mi);
#define ASM_MAX_METHODS 1000000u

/* asm_lex.c. Each returns 0 or MANTRA_EFORMAT/MANTRA_ENOMEM after filling the diagnostic. */
int ip_asm_error(ip_asm_state *st, ip_asm_loc loc, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
int ip_asm_nomem(ip_asm_state *st);
ip_asm_loc ip_asm_here(const ip_asm_state *st);
void ip_asm_skip_blanks(ip_asm_state *st);
/* 1 when the line has nothing left but blanks or a comment. */
int ip_asm_at_end(ip_asm_state *st);
/* Errors unless the rest of the line is blank. */
int ip_asm_expect_end(ip_asm_state *st);
/* An identifier [A-Za-z_$][A-Za-z0-9_.$<>`]*: its start and length; 0 length when none. */
void ip_asm_ident(ip_asm_state *st, const char **s, size_t *len);
int ip_asm_int64(ip_asm_state *st, const char *what, int64_t *out);
int ip_asm_double(ip_asm_state *st, double *out);
/* A "..." literal with \n \t \r \0 \\ \" escapes, into a new NUL-terminated buffer. */
int ip_asm_string(ip_asm_state *st, char **out, uint32_t *len);
int ip_asm_guid(ip_asm_state *st, uint8_t guid[16]);
char *ip_asm_strndup(const char *s, size_t n);

/* asm_verify.c */
int ip_asm_finish_method_labels(ip_asm_state *st, size_t mi);
int ip_asm_finish_module(ip_asm_state *st);
void ip_asm_method_free(ip_asm_method *am);

#endif
