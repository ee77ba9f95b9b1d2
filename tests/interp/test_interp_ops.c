/* test_interp_ops - every instruction's semantics, exact values: integer and double arithmetic,
 * comparisons, conversions, branches, switch, calls, arguments and locals, output formats, and
 * the run-time faults with their "METHOD+IL_xxxx: REASON" texts. */
#include <math.h>
#include <stdio.h>

#include "check_main.h"
#include "interp_test_util.h"

static char g_text[4096];
static it_out g_out;
static char g_err[256];

/* Runs `body` as `.method T.main RET()` with 4 locals; status of the run. */
static int run_body(const char *ret, const char *body, mantra_interp_value *v) {
    snprintf(g_text, sizeof g_text,
             ".module T 11111111-2222-3333-4444-555555555555\n"
             ".method T.main %s()\n.locals 4\n%s\n.end\n",
             ret, body);
    it_prog p = it_load(g_text, 0, NULL);
    int rc = it_run(&p, "main", NULL, 0, v, &g_out, g_err, sizeof g_err);
    it_free(&p);
    return rc;
}

static int64_t ri(const char *body) {
    mantra_interp_value v;
    ck_assert_msg(run_body("int64", body, &v) == 0, "%s: %s", body, g_err);
    return v.i;
}

static double rd(const char *body) {
    mantra_interp_value v;
    ck_assert_msg(run_body("double", body, &v) == 0, "%s: %s", body, g_err);
    return v.d;
}

static const char *outp(const char *body) {
    mantra_interp_value v;
    ck_assert_msg(run_body("void", body, &v) == 0, "%s: %s", body, g_err);
    return g_out.buf;
}

START_TEST(constants_and_stack) {
    ck_assert_int_eq(ri("ldc.i8 42\nret"), 42);
    ck_assert_int_eq(ri("ldc.i8 -9223372036854775808\nret"), INT64_MIN);
    ck_assert_int_eq(ri("ldc.i8 0x7fffffffffffffff\nret"), INT64_MAX);
    ck_assert_int_eq(ri("ldc.i8 0xffffffffffffffff\nret"), -1);
    ck_assert_int_eq(ri("ldc.i8 7\ndup\nadd\nret"), 14);
    ck_assert_int_eq(ri("ldc.i8 7\nldc.i8 8\npop\nret"), 7);
    ck_assert_int_eq(ri("nop\nldc.i8 1\nret"), 1);
    ck_assert(rd("ldc.r8 2.5\nret") == 2.5);
    ck_assert(rd("ldc.r8 -1e300\nret") == -1e300);
    ck_assert(isinf(rd("ldc.r8 inf\nret")));
}
END_TEST

START_TEST(locals_and_args) {
    ck_assert_int_eq(ri("ldloc 3\nret"), 0); /* locals start at 0 */
    ck_assert_int_eq(ri("ldc.i8 5\nstloc 2\nldloc 2\nldloc 2\nmul\nret"), 25);
    const char *text = ".module T 11111111-2222-3333-4444-555555555555\n"
                       ".method T.f int64(int64,double)\n"
                       "ldarg 1\nconv.i8\nldarg 0\nsub\nldc.i8 100\nstarg 0\nldarg 0\nadd\nret\n.end\n";
    it_prog p = it_load(text, 0, NULL);
    mantra_interp_value args[2], r;
    args[0].i = 3;
    args[1].d = 10.75;
    ck_assert_int_eq(it_run(&p, "f", args, 2, &r, NULL, g_err, sizeof g_err), 0);
    ck_assert_int_eq(r.i, 107); /* (10 - 3) + 100 */
    ck_assert_int_eq(it_run(&p, "T.f", args, 1, &r, NULL, g_err, sizeof g_err), MANTRA_EINVAL);
    ck_assert_str_eq(g_err, "method 'T.f' takes 2 arguments, 1 given");
    ck_assert_int_eq(it_run(&p, "nothere", args, 2, &r, NULL, g_err, sizeof g_err), MANTRA_EINVAL);
    ck_assert_str_eq(g_err, "no method 'nothere'");
    it_free(&p);
}
END_TEST

START_TEST(integer_arithmetic) {
    ck_assert_int_eq(ri("ldc.i8 7\nldc.i8 5\nadd\nret"), 12);
    ck_assert_int_eq(ri("ldc.i8 7\nldc.i8 5\nsub\nret"), 2);
    ck_assert_int_eq(ri("ldc.i8 -7\nldc.i8 5\nmul\nret"), -35);
    ck_assert_int_eq(ri("ldc.i8 -7\nldc.i8 2\ndiv\nret"), -3); /* truncates toward zero */
    ck_assert_int_eq(ri("ldc.i8 -7\nldc.i8 2\nrem\nret"), -1);
    ck_assert_int_eq(ri("ldc.i8 7\nneg\nret"), -7);
    ck_assert_int_eq(ri("ldc.i8 12\nldc.i8 10\nand\nret"), 8);
    ck_assert_int_eq(ri("ldc.i8 12\nldc.i8 10\nor\nret"), 14);
    ck_assert_int_eq(ri("ldc.i8 12\nldc.i8 10\nxor\nret"), 6);
    ck_assert_int_eq(ri("ldc.i8 0\nnot\nret"), -1);
    ck_assert_int_eq(ri("ldc.i8 1\nldc.i8 62\nshl\nret"), INT64_C(1) << 62);
    ck_assert_int_eq(ri("ldc.i8 1\nldc.i8 65\nshl\nret"), 2); /* count & 63 */
    ck_assert_int_eq(ri("ldc.i8 -16\nldc.i8 2\nshr\nret"), -4);
    ck_assert_int_eq(ri("ldc.i8 -16\nldc.i8 60\nshr.un\nret"), 15);
    /* wrapping (two's complement), never undefined */
    ck_assert_int_eq(ri("ldc.i8 0x7fffffffffffffff\nldc.i8 1\nadd\nret"), INT64_MIN);
    ck_assert_int_eq(ri("ldc.i8 -9223372036854775808\nldc.i8 1\nsub\nret"), INT64_MAX);
    ck_assert_int_eq(ri("ldc.i8 0x4000000000000000\nldc.i8 4\nmul\nret"), 0);
    ck_assert_int_eq(ri("ldc.i8 -9223372036854775808\nneg\nret"), INT64_MIN);
}
END_TEST

START_TEST(double_arithmetic) {
    ck_assert(rd("ldc.r8 1.5\nldc.r8 2.25\nadd.r\nret") == 3.75);
    ck_assert(rd("ldc.r8 1.5\nldc.r8 2.25\nsub.r\nret") == -0.75);
    ck_assert(rd("ldc.r8 1.5\nldc.r8 -2\nmul.r\nret") == -3.0);
    ck_assert(rd("ldc.r8 1\nldc.r8 4\ndiv.r\nret") == 0.25);
    ck_assert(rd("ldc.r8 1\nldc.r8 0\ndiv.r\nret") == INFINITY);
    ck_assert(rd("ldc.r8 3.5\nneg.r\nret") == -3.5);
    ck_assert(rd("ldc.i8 -3\nconv.r8\nret") == -3.0);
    ck_assert_int_eq(ri("ldc.r8 -3.99\nconv.i8\nret"), -3);
    ck_assert_int_eq(ri("ldc.r8 9.2233720368547748e18\nconv.i8\nret"), INT64_C(9223372036854774784));
}
END_TEST

START_TEST(comparisons) {
    static const struct {
        const char *op;
        int64_t a, b, want;
    } ic[] = {
        {"ceq", 3, 3, 1}, {"ceq", 3, 4, 0}, {"cne", 3, 4, 1}, {"cne", 3, 3, 0}, {"clt", -1, 0, 1},
        {"clt", 0, 0, 0}, {"cle", 0, 0, 1}, {"cle", 1, 0, 0}, {"cgt", 1, 0, 1}, {"cgt", 0, 0, 0},
        {"cge", 0, 0, 1}, {"cge", -1, 0, 0}, {"clt.un", 1, -1, 1}, {"clt.un", -1, 1, 0},
        {"cgt.un", -1, 1, 1}, {"cgt.un", 1, -1, 0},
    };
    char body[128];
    for (size_t i = 0; i < sizeof ic / sizeof ic[0]; i++) {
        snprintf(body, sizeof body, "ldc.i8 %lld\nldc.i8 %lld\n%s\nret", (long long)ic[i].a, (long long)ic[i].b,
                 ic[i].op);
        ck_assert_msg(ri(body) == ic[i].want, "%s %lld %lld", ic[i].op, (long long)ic[i].a, (long long)ic[i].b);
    }
    static const struct {
        const char *op;
        const char *a, *b;
        int64_t want;
    } dc[] = {
        {"ceq.r", "1.5", "1.5", 1}, {"ceq.r", "nan", "nan", 0}, {"clt.r", "-0.5", "0", 1},
        {"clt.r", "nan", "0", 0},   {"cle.r", "2", "2", 1},     {"cgt.r", "2", "1", 1},
        {"cgt.r", "1", "2", 0},     {"cge.r", "2", "2", 1},     {"cge.r", "nan", "2", 0},
    };
    for (size_t i = 0; i < sizeof dc / sizeof dc[0]; i++) {
        snprintf(body, sizeof body, "ldc.r8 %s\nldc.r8 %s\n%s\nret", dc[i].a, dc[i].b, dc[i].op);
        ck_assert_msg(ri(body) == dc[i].want, "%s %s %s", dc[i].op, dc[i].a, dc[i].b);
    }
}
END_TEST

START_TEST(branches) {
    ck_assert_int_eq(ri("br l\nl: ldc.i8 1\nret"), 1);
    ck_assert_int_eq(ri("ldc.i8 5\nbrtrue t\nldc.i8 0\nret\nt: ldc.i8 1\nret"), 1);
    ck_assert_int_eq(ri("ldc.i8 0\nbrtrue t\nldc.i8 0\nret\nt: ldc.i8 1\nret"), 0);
    ck_assert_int_eq(ri("ldc.i8 0\nbrfalse t\nldc.i8 0\nret\nt: ldc.i8 1\nret"), 1);
    ck_assert_int_eq(ri("ldc.i8 -1\nbrfalse t\nldc.i8 0\nret\nt: ldc.i8 1\nret"), 0);
    static const struct {
        const char *op;
        int64_t a, b, taken;
    } bc[] = {
        {"beq", 2, 2, 1}, {"beq", 2, 3, 0}, {"bne", 2, 3, 1}, {"bne", 2, 2, 0}, {"blt", 1, 2, 1},
        {"blt", 2, 2, 0}, {"ble", 2, 2, 1}, {"ble", 3, 2, 0}, {"bgt", 3, 2, 1}, {"bgt", 2, 2, 0},
        {"bge", 2, 2, 1}, {"bge", 1, 2, 0},
    };
    char body[160];
    for (size_t i = 0; i < sizeof bc / sizeof bc[0]; i++) {
        snprintf(body, sizeof body, "ldc.i8 %lld\nldc.i8 %lld\n%s t\nldc.i8 0\nret\nt: ldc.i8 1\nret",
                 (long long)bc[i].a, (long long)bc[i].b, bc[i].op);
        ck_assert_msg(ri(body) == bc[i].taken, "%s %lld %lld", bc[i].op, (long long)bc[i].a, (long long)bc[i].b);
    }
    /* a backward loop: sum 1..100 */
    ck_assert_int_eq(ri("ldc.i8 100\nstloc 0\nl: ldloc 1\nldloc 0\nadd\nstloc 1\nldloc 0\nldc.i8 1\nsub\n"
                        "dup\nstloc 0\nbrtrue l\nldloc 1\nret"),
                     5050);
}
END_TEST

START_TEST(switch_table) {
    char body[256];
    static const int64_t sel[] = {0, 1, 2, 3, -1, INT64_MIN};
    static const int64_t want[] = {10, 11, 12, 99, 99, 99}; /* out of range (also negative) falls through */
    for (size_t i = 0; i < 6; i++) {
        snprintf(body, sizeof body,
                 "ldc.i8 %lld\nswitch a, b, c\nldc.i8 99\nret\na: ldc.i8 10\nret\nb: ldc.i8 11\nret\n"
                 "c: ldc.i8 12\nret",
                 (long long)sel[i]);
        ck_assert_int_eq(ri(body), want[i]);
    }
}
END_TEST

START_TEST(calls) {
    const char *text = ".module T 11111111-2222-3333-4444-555555555555\n"
                       ".method A.sq int64(int64)\nldarg 0\nldarg 0\nmul\nret\n.end\n"
                       ".method B.half double(double)\nldarg 0\nldc.r8 0.5\nmul.r\nret\n.end\n"
                       ".method A.say void(int64)\nprint.s \"v=\"\nldarg 0\nprint.i\nnewline\nret\n.end\n"
                       ".method A.main int64()\n.locals 1\nldc.i8 9\nstloc 0\nldloc 0\ncall sq\n"
                       "ldc.i8 3\ncall A.sq\nadd\ndup\ncall say\nldc.r8 5\ncall B.half\nconv.i8\nadd\n"
                       "ldloc 0\nadd\nret\n.end\n";
    it_prog p = it_load(text, 0, NULL);
    mantra_interp_value r;
    it_out o;
    ck_assert_int_eq(it_run(&p, "main", NULL, 0, &r, &o, g_err, sizeof g_err), 0);
    ck_assert_int_eq(r.i, 81 + 9 + 2 + 9);
    ck_assert_str_eq(o.buf, "v=90\n");
    /* identities: tokens in file order, namespaces split at the last dot */
    mantra_interp_method_identity id;
    ck_assert_int_eq(mantra_interp_module_method(p.mod, 1, &id), 0);
    ck_assert_str_eq(id.namespace_name, "B");
    ck_assert_str_eq(id.name, "half");
    ck_assert_str_eq(id.signature, "double(double)");
    ck_assert_uint_eq(id.token, 0x06000002);
    ck_assert_str_eq(id.module_name, "T");
    static const uint8_t guid[16] = {0x11, 0x11, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33,
                                     0x44, 0x44, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55};
    ck_assert_mem_eq(id.module_guid, guid, 16);
    ck_assert_int_eq(mantra_interp_module_find(p.mod, "A.main"), 3);
    it_free(&p);
}
END_TEST

START_TEST(deep_recursion_uses_no_c_stack) {
    /* depth 50000: frames live on the interpreter's stacks, not in C recursion */
    const char *text = ".module T 11111111-2222-3333-4444-555555555555\n"
                       ".method down int64(int64)\nldarg 0\nbrfalse z\nldarg 0\nldc.i8 1\nsub\ncall down\n"
                       "ldc.i8 1\nadd\nret\nz: ldc.i8 0\nret\n.end\n";
    it_prog p = it_load(text, 0, NULL);
    mantra_interp_value a, r;
    a.i = 50000;
    ck_assert_int_eq(it_run(&p, "down", &a, 1, &r, NULL, g_err, sizeof g_err), 0);
    ck_assert_int_eq(r.i, 50000);
    a.i = 200000; /* over the default 100000 frames */
    ck_assert_int_eq(it_run(&p, "down", &a, 1, &r, NULL, g_err, sizeof g_err), MANTRA_ESTATE);
    ck_assert_str_eq(g_err, "down+IL_0015: stack overflow (call depth)");
    it_free(&p);
}
END_TEST

START_TEST(output_formats) {
    ck_assert_str_eq(outp("ldc.i8 -12\nprint.i\nnewline\nret"), "-12\n");
    ck_assert_str_eq(outp("ldc.r8 0.1\nprint.r\nprint.s \" \"\nldc.r8 2.5\nprint.r\nprint.s \" \"\n"
                          "ldc.r8 3\nprint.r\nprint.s \" \"\nldc.r8 1e100\nprint.r\nret"),
                     "0.1 2.5 3 1e+100");
    ck_assert_str_eq(outp("ldc.r8 1\nldc.r8 3\ndiv.r\nprint.r\nret"), "0.3333333333333333");
    ck_assert_str_eq(outp("print.s \"a\\tb\\\\c\\\"d\\n\"\nret"), "a\tb\\c\"d\n");
}
END_TEST

START_TEST(faults) {
    mantra_interp_value v;
    ck_assert_int_eq(run_body("int64", "ldc.i8 1\nldc.i8 0\ndiv\nret", &v), MANTRA_ESTATE);
    ck_assert_str_eq(g_err, "T.main+IL_0012: integer division by zero");
    ck_assert_int_eq(run_body("int64", "ldc.i8 1\nldc.i8 0\nrem\nret", &v), MANTRA_ESTATE);
    ck_assert_str_eq(g_err, "T.main+IL_0012: integer division by zero");
    ck_assert_int_eq(run_body("int64", "ldc.i8 -9223372036854775808\nldc.i8 -1\ndiv\nret", &v), MANTRA_ESTATE);
    ck_assert_str_eq(g_err, "T.main+IL_0012: arithmetic overflow");
    ck_assert_int_eq(run_body("int64", "ldc.r8 nan\nconv.i8\nret", &v), MANTRA_ESTATE);
    ck_assert_str_eq(g_err, "T.main+IL_0009: conversion overflow (conv.i8)");
    ck_assert_int_eq(run_body("int64", "ldc.r8 9.3e18\nconv.i8\nret", &v), MANTRA_ESTATE);
}
END_TEST

START_TEST(dispatch_kind) {
#if (defined(__GNUC__) || defined(__clang__)) && !defined(MANTRA_INTERP_SWITCH)
    ck_assert_int_eq(mantra_interp_computed_goto(), 1);
#else
    ck_assert_int_eq(mantra_interp_computed_goto(), 0);
#endif
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("interp_ops");
    TCase *tc = tcase_create("ops");
    tcase_add_test(tc, constants_and_stack);
    tcase_add_test(tc, locals_and_args);
    tcase_add_test(tc, integer_arithmetic);
    tcase_add_test(tc, double_arithmetic);
    tcase_add_test(tc, comparisons);
    tcase_add_test(tc, branches);
    tcase_add_test(tc, switch_table);
    tcase_add_test(tc, calls);
    tcase_add_test(tc, deep_recursion_uses_no_c_stack);
    tcase_add_test(tc, output_formats);
    tcase_add_test(tc, faults);
    tcase_add_test(tc, dispatch_kind);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
