/* test_interp_asm - assembler diagnostics: the exact "FILE:LINE:COL: error: MESSAGE" of every
 * kind of error (lexical, directives, operands, labels, methods, tokens, stack check), and that
 * a valid program assembles to the documented encoding (offsets as in docs/interp.md). */
#include <stdio.h>

#include "check_main.h"
#include "interp_test_util.h"

#define HDR ".module M 00112233-4455-6677-8899-aabbccddeeff\n"

static const struct {
    const char *src;
    const char *want;
} cases[] = {
    {"", "e.masm:1:1: error: no '.module NAME GUID' in the file"},
    {".method m void()\n", "e.masm:1:1: error: expected '.module NAME GUID' first"},
    {"ret\n", "e.masm:1:1: error: expected '.module NAME GUID' first"},
    {".module M 0011\n", "e.masm:1:11: error: bad GUID (expected xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)"},
    {".module\n", "e.masm:1:8: error: expected the module name"},
    {HDR ".module N 00112233-4455-6677-8899-aabbccddeeff\n", "e.masm:2:1: error: a second .module (one module per file)"},
    {HDR, "e.masm:2:1: error: no methods in the module"},
    {HDR ".frob\n", "e.masm:2:1: error: unknown directive '.frob'"},
    {HDR ".method m void()\n  ret\n", "e.masm:4:1: error: missing .end of method 'm' (line 2)"},
    {HDR ".method m void()\n  ret", "e.masm:3:6: error: missing .end of method 'm' (line 2)"},
    {HDR ".method m void()\n.method n void()\n", "e.masm:3:1: error: .method inside a method (missing .end)"},
    {HDR ".end\n", "e.masm:2:1: error: .end outside a method"},
    {HDR ".method m void()\n.end\n", "e.masm:3:1: error: method 'm' has no instructions"},
    {HDR ".method m void()\n  frob 1\n.end\n", "e.masm:3:3: error: unknown opcode 'frob'"},
    {HDR ".method m void()\n  probe 1\n.end\n",
     "e.masm:3:3: error: 'probe' is inserted by the loader (MANTRA_InterpPgo), not written in assembly"},
    {HDR "  ret\n", "e.masm:2:3: error: instruction outside a method"},
    {HDR ".method m void()\n  ldc.i8 12x\n.end\n", "e.masm:3:10: error: bad integer '12x'"},
    {HDR ".method m void()\n  ldc.i8\n.end\n", "e.masm:3:9: error: expected integer"},
    {HDR ".method m void()\n  ldc.i8 9223372036854775808\n.end\n", "e.masm:3:10: error: integer out of range"},
    {HDR ".method m void()\n  ldc.r8 1.5.5\n.end\n", "e.masm:3:10: error: bad floating-point number '1.5.5'"},
    {HDR ".method m void()\n  ldc.i8 1 2\n.end\n", "e.masm:3:12: error: unexpected '2' at the end of the line"},
    {HDR ".method m void()\n  ldloc 0\n.end\n", "e.masm:3:9: error: local 0 out of range (method 'm' has 0)"},
    {HDR ".method m void(int64)\n  ldarg 1\n.end\n", "e.masm:3:9: error: argument 1 out of range (method 'm' has 1)"},
    {HDR ".method m void()\n  nop\n.locals 2\n.end\n", "e.masm:4:1: error: .locals must come before the first instruction"},
    {HDR ".method m void()\n.locals 1\n.locals 1\n.end\n", "e.masm:4:1: error: a second .locals in this method"},
    {HDR ".method m void()\n.locals 70000\n.end\n", "e.masm:3:9: error: local count 70000 out of range (0..65535)"},
    {HDR ".method m void()\n  br nowhere\n.end\n", "e.masm:3:6: error: undefined label 'nowhere'"},
    {HDR ".method m void()\n  br\n.end\n", "e.masm:3:5: error: expected a label"},
    {HDR ".method m void()\nl: nop\nl: ret\n.end\n", "e.masm:4:1: error: duplicate label 'l' (first defined on line 3)"},
    {HDR ".method m void()\n  br l\nl:\n.end\n",
     "e.masm:3:6: error: label 'l' (line 4) is at the end of the method: no instruction follows it"},
    {HDR ".method m void()\n  call g\n  ret\n.end\n", "e.masm:3:8: error: undefined method 'g'"},
    {HDR ".method a.g void()\n ret\n.end\n.method b.g void()\n ret\n.end\n.method m void()\n call g\n ret\n.end\n",
     "e.masm:9:7: error: ambiguous method name 'g' (qualify it with its namespace)"},
    {HDR ".method m void()\n ret\n.end\n.method m int64()\n", "e.masm:5:9: error: duplicate method 'm' (first defined on line 2)"},
    {HDR ".method m void() token 0x06000005\n ret\n.end\n.method n void() token 0x06000005\n",
     "e.masm:5:24: error: duplicate token 0x06000005 (also method 'm' on line 2)"},
    {HDR ".method m void() token 0x02000001\n", "e.masm:2:24: error: token 0x2000001 is not a method token (0x06000001..0x06ffffff)"},
    {HDR ".method m void() tok 1\n", "e.masm:2:18: error: expected 'token' or the end of the line"},
    {HDR ".method m int32()\n", "e.masm:2:16: error: expected a return type (int64, double or void)"},
    {HDR ".method m void(int64 double)\n", "e.masm:2:22: error: expected ',' or ')' in the signature"},
    {HDR ".method m void(void)\n", "e.masm:2:16: error: expected an argument type (int64 or double)"},
    {HDR ".method m void()\n  print.s \"abc\n.end\n", "e.masm:3:11: error: unterminated string literal"},
    {HDR ".method m void()\n  print.s \"a\\qb\"\n.end\n", "e.masm:3:13: error: unknown escape '\\q' in a string literal"},
    {HDR ".method m void()\n  print.s 5\n.end\n", "e.masm:3:11: error: expected a string literal \"...\""},
    {HDR ".method m void()\n  switch a,\n.end\n", "e.masm:3:12: error: expected a label"},
    {HDR ".method m void()\n  @\n.end\n", "e.masm:3:3: error: unexpected '@'"},
    /* the stack check */
    {HDR ".method m void()\n  add\n  ret\n.end\n", "e.masm:3:3: error: stack underflow: 'add' needs 2 values, the stack holds 0"},
    {HDR ".method m int64()\n  ret\n.end\n",
     "e.masm:3:3: error: ret with 0 values on the stack; method 'm' returns a value (needs 1)"},
    {HDR ".method m void()\n  ldc.i8 1\n  ret\n.end\n",
     "e.masm:4:3: error: ret with 1 value on the stack; method 'm' returns void (needs 0)"},
    {HDR ".method m void()\n  nop\n.end\n", "e.masm:3:3: error: control reaches the end of method 'm' without ret"},
    {HDR ".method m void()\n  ldc.i8 1\n  brtrue l\n  ldc.i8 5\nl: ret\n.end\n",
     "e.masm:6:4: error: stack depth mismatch at IL_0017: 1 value on this path, 0 on another"},
    {HDR ".method m void()\nl: ldc.i8 1\n  br l\n.end\n",
     "e.masm:4:3: error: stack depth mismatch at IL_0000: 1 value on this path, 0 on another"},
    {HDR ".method f void(int64,int64)\n ret\n.end\n.method m void()\n  ldc.i8 1\n  call f\n  ret\n.end\n",
     "e.masm:7:3: error: stack underflow: 'call' needs 2 values, the stack holds 1"},
};

START_TEST(diagnostics) {
    const char *src = cases[_i].src;
    mantra_interp_module *m = NULL;
    mantra_interp_diag d;
    int rc = mantra_interp_assemble(src, strlen(src), "e.masm", &m, &d);
    ck_assert_msg(rc == MANTRA_EFORMAT, "case %d assembled (rc %d)", _i, rc);
    ck_assert_ptr_null(m);
    ck_assert_str_eq(d.text, cases[_i].want);
}
END_TEST

START_TEST(encoding_and_offsets) {
    const char *src = HDR "; a comment\n"
                          ".method Ns.Deep.f int64(int64) token 0x06000010 ; trailing comment\n"
                          ".locals 1\n"
                          "top:  ldarg 0          ; IL_0000 (3 bytes)\n"
                          "      ldc.i8 3         ; IL_0003 (9)\n"
                          "      add              ; IL_000c (1)\n"
                          "      switch a, top    ; IL_000d (1 + 4 + 2*4 = 13)\n"
                          "a:    ldc.r8 0.5       ; IL_001a (9)\n"
                          "      conv.i8          ; IL_0023\n"
                          "      call Ns.Deep.f   ; IL_0024 (5)\n"
                          "      ret              ; IL_0029\n"
                          ".end\n";
    mantra_interp_module *m = NULL;
    mantra_interp_diag d;
    ck_assert_msg(mantra_interp_assemble(src, strlen(src), "x.masm", &m, &d) == 0, "%s", d.text);
    mantra_interp_method_identity id;
    ck_assert_int_eq(mantra_interp_module_method(m, 0, &id), 0);
    ck_assert_uint_eq(id.il_size, 0x2a);
    ck_assert_str_eq(id.namespace_name, "Ns.Deep");
    ck_assert_str_eq(id.name, "f");
    ck_assert_uint_eq(id.token, 0x06000010);
    mantra_interp_program *p = NULL;
    mantra_interp_load_options o;
    mantra_interp_load_options_init(&o);
    o.pgo_mode = 0;
    ck_assert_int_eq(mantra_interp_load(m, &o, &p), 0);
    const uint8_t *code;
    size_t size;
    ck_assert_int_eq(mantra_interp_program_code(p, 0, &code, &size), 0);
    ck_assert_uint_eq(size, 0x2a);
    /* switch at 0x0d: count 2, targets relative to 0x1a: a = +0, top = -0x1a */
    ck_assert_uint_eq(code[0x0d], 51); /* opcode numbers: docs/interp.md */
    ck_assert_uint_eq(code[0x0d + 1], 2);
    int32_t rel0, rel1;
    memcpy(&rel0, code + 0x0d + 5, 4);
    memcpy(&rel1, code + 0x0d + 9, 4);
    ck_assert_int_eq(rel0, 0);
    ck_assert_int_eq(rel1, -0x1a);
    size_t mi;
    uint32_t il;
    ck_assert_int_eq(mantra_interp_program_locate(p, code + 0x24, &mi, &il), 0);
    ck_assert_uint_eq(mi, 0);
    ck_assert_uint_eq(il, 0x24);
    ck_assert_int_eq(mantra_interp_program_locate(p, code + size, &mi, &il), MANTRA_EINVAL);
    mantra_interp_program_free(p);
    mantra_interp_module_free(m);
}
END_TEST

START_TEST(guid_layout) {
    const char *src = ".module M {00112233-4455-6677-8899-aabbccddeeff}\n.method m void()\nret\n.end\n";
    mantra_interp_module *m = NULL;
    ck_assert_int_eq(mantra_interp_assemble(src, strlen(src), "g.masm", &m, NULL), 0);
    mantra_interp_method_identity id;
    mantra_interp_module_method(m, 0, &id);
    static const uint8_t want[16] = {0x33, 0x22, 0x11, 0x00, 0x55, 0x44, 0x77, 0x66,
                                     0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
    ck_assert_mem_eq(id.module_guid, want, 16);
    ck_assert_uint_eq(id.token, 0x06000001);
    ck_assert_str_eq(id.signature, "void()");
    mantra_interp_module_free(m);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("interp_asm");
    TCase *tc = tcase_create("asm");
    tcase_add_loop_test(tc, diagnostics, 0, (int)(sizeof cases / sizeof cases[0]));
    tcase_add_test(tc, encoding_and_offsets);
    tcase_add_test(tc, guid_layout);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
