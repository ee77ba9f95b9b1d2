/* The CLR text format (pgo-format.md §7): the writer's exact lines, write -> parse round trips, and
 * the parser's handling of bad input as the CLR reader does it (a failing line drops its method and
 * reading resumes after it), with errors at exact line numbers. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "dotnet_defs.h" /* MANTRA_PGO_<Name>: the PGO kinds of manifest/dotnet.yaml */
#include "mantra/pgo.h"

static const char *names(void *ctx, size_t record, size_t element, int elem, int64_t value) {
    (void)ctx;
    (void)record;
    if (value == 0 || value == 5) /* 5: an "unknown" handle */
        return NULL;
    if (elem == MANTRA_PGO_TypeHandle)
        return element == 0 ? "System.String, System.Private.CoreLib" : "My.Type`1[System.Int32], app";
    return "ToString|@|System.Object, System.Private.CoreLib";
}

static const mantra_pgo_schema k_loop[] = {
    {MANTRA_PGO_BasicBlockIntCount, 0, 1, 0},
    {MANTRA_PGO_BasicBlockIntCount, 12, 1, 0},
};
static const int64_t k_loop_values[] = {1, 1000};

static const mantra_pgo_schema k_all[] = {
    {MANTRA_PGO_Version, 0, 1, 2},
    {MANTRA_PGO_BasicBlockIntCount, 0, 1, 0},
    {MANTRA_PGO_EdgeLongCount, 3, 1, 9},
    {MANTRA_PGO_HandleHistogramIntCount, 7, 1, 0},
    {MANTRA_PGO_HandleHistogramTypes, 7, 4, 0},
    {MANTRA_PGO_HandleHistogramMethods, 7, 2, 0},
};
static const int64_t k_all_values[] = {-1, INT64_C(0x500000007), 3, 0x1000, 0x2000, 0, 5, 0x3000, 0};

static void write_two(mantra_pgo_text_buffer *b) {
    mantra_pgo_text_method m1 = {0x1A2B3C4D, 0x0BADF00D, 0x1C, "MyNs.MyClass", "Loop", "int32 (int32)",
                                 k_loop, 2, k_loop_values, 2, NULL, NULL};
    mantra_pgo_text_method m2 = {0xFFFFFFFF, 0, 0x100, "A", "B", "void ()", k_all, 6, k_all_values, 9, names, NULL};
    ck_assert_int_eq(mantra_pgo_text_write_start(mantra_pgo_text_buffer_write, b, 2), 0);
    ck_assert_int_eq(mantra_pgo_text_write_method(mantra_pgo_text_buffer_write, b, &m1), 0);
    ck_assert_int_eq(mantra_pgo_text_write_method(mantra_pgo_text_buffer_write, b, &m2), 0);
    ck_assert_int_eq(mantra_pgo_text_write_end(mantra_pgo_text_buffer_write, b), 0);
}

START_TEST(writer_lines) {
    mantra_pgo_text_buffer b = {0};
    write_two(&b);
    static const char want[] =
        "*** START PGO Data, max index = 2 ***\n"
        "@@@ codehash 0x1A2B3C4D methodhash 0x0BADF00D ilSize 0x0000001C records 0x00000002\n"
        "MethodName: MyNs.MyClass.Loop\n"
        "Signature: int32 (int32)\n"
        "Schema InstrumentationKind 65 ILOffset 0 Count 1 Other 0\n"
        "1\n"
        "Schema InstrumentationKind 65 ILOffset 12 Count 1 Other 0\n"
        "1000\n"
        "@@@ codehash 0xFFFFFFFF methodhash 0x00000000 ilSize 0x00000100 records 0x00000006\n"
        "MethodName: A.B\n"
        "Signature: void ()\n"
        "Schema InstrumentationKind 256 ILOffset 0 Count 1 Other 2\n"
        "None\n"
        "Schema InstrumentationKind 65 ILOffset 0 Count 1 Other 0\n"
        "4294967295\n"
        "Schema InstrumentationKind 386 ILOffset 3 Count 1 Other 9\n"
        "7 5\n"
        "Schema InstrumentationKind 177 ILOffset 7 Count 1 Other 0\n"
        "3\n"
        "Schema InstrumentationKind 195 ILOffset 7 Count 4 Other 0\n"
        "TypeHandle: System.String, System.Private.CoreLib\n"
        "TypeHandle: My.Type`1[System.Int32], app\n"
        "TypeHandle: NULL\n"
        "TypeHandle: UNKNOWN\n"
        "Schema InstrumentationKind 196 ILOffset 7 Count 2 Other 0\n"
        "MethodHandle: ToString|@|System.Object, System.Private.CoreLib\n"
        "MethodHandle: NULL\n"
        "*** END PGO Data ***\n";
    ck_assert_str_eq(b.data, want);
    mantra_pgo_text_buffer_free(&b);
}
END_TEST

START_TEST(writer_refusals) {
    mantra_pgo_text_buffer b = {0};
    mantra_pgo_text_method m = {0, 0, 0, "A", "B\nC", "", k_loop, 2, k_loop_values, 2, NULL, NULL};
    ck_assert_int_eq(mantra_pgo_text_write_method(mantra_pgo_text_buffer_write, &b, &m), MANTRA_EINVAL);
    m.method_name = "B";
    m.value_count = 1;
    ck_assert_int_eq(mantra_pgo_text_write_method(mantra_pgo_text_buffer_write, &b, &m), MANTRA_EINVAL);
    ck_assert_uint_eq(b.size, 0);
    mantra_pgo_text_buffer_free(&b);
}
END_TEST

START_TEST(round_trip) {
    mantra_pgo_text_buffer b = {0};
    write_two(&b);
    mantra_pgo_text *t = NULL;
    ck_assert_int_eq(mantra_pgo_text_parse(b.data, b.size, "dump.txt", &t), MANTRA_OK);
    ck_assert_uint_eq(mantra_pgo_text_error_count(t), 0);
    ck_assert_uint_eq(mantra_pgo_text_method_count(t), 2);
    ck_assert_uint_eq(mantra_pgo_text_skipped_lines(t), 1); /* the END line */
    const mantra_pgo_text_entry *e = mantra_pgo_text_entry_at(t, 0);
    ck_assert_uint_eq(e->codehash, 0x1A2B3C4D);
    ck_assert_uint_eq(e->methodhash, 0x0BADF00D);
    ck_assert_uint_eq(e->il_size, 0x1C);
    ck_assert_uint_eq(e->line, 2);
    ck_assert_str_eq(e->method_line, "MethodName: MyNs.MyClass.Loop");
    ck_assert_str_eq(e->signature_line, "Signature: int32 (int32)");
    ck_assert_uint_eq(e->data.records, 2);
    ck_assert_mem_eq(e->data.schema, k_loop, sizeof k_loop);
    ck_assert_uint_eq(e->data.value_count, 2);
    ck_assert_mem_eq(e->data.values, k_loop_values, sizeof k_loop_values);

    e = mantra_pgo_text_entry_at(t, 1);
    ck_assert_uint_eq(e->line, 9);
    ck_assert_uint_eq(e->data.records, 6);
    ck_assert_mem_eq(e->data.schema, k_all, sizeof k_all);
    ck_assert_uint_eq(e->data.value_count, 9);
    ck_assert(e->data.values[0] == -1);
    ck_assert(e->data.values[1] == INT64_C(0x500000007));
    ck_assert(e->data.values[2] == 3);
    for (size_t i = 3; i < 9; i++) /* handles come back as names: NULL and named 0, UNKNOWN (value 5) 1 */
        ck_assert(e->data.values[i] == (i == 6 ? MANTRA_PGO_UNKNOWN_HANDLE_MIN : 0));
    ck_assert_str_eq(e->handle_names[3], "System.String, System.Private.CoreLib");
    ck_assert_str_eq(e->handle_names[4], "My.Type`1[System.Int32], app");
    ck_assert_ptr_null(e->handle_names[5]);
    ck_assert_ptr_null(e->handle_names[6]);
    ck_assert_str_eq(e->handle_names[7], "ToString|@|System.Object, System.Private.CoreLib");
    ck_assert_ptr_null(e->handle_names[8]);
    ck_assert_ptr_null(mantra_pgo_text_entry_at(t, 2));

    /* writing the parsed methods again gives the same text (handles by their parsed names) */
    mantra_pgo_text_buffer c = {0};
    ck_assert_int_eq(mantra_pgo_text_write_start(mantra_pgo_text_buffer_write, &c, 2), 0);
    const mantra_pgo_text_entry *e0 = mantra_pgo_text_entry_at(t, 0);
    mantra_pgo_text_method m1 = {e0->codehash, e0->methodhash, e0->il_size, "MyNs.MyClass", "Loop", "int32 (int32)",
                                 e0->data.schema, e0->data.records, e0->data.values, e0->data.value_count, NULL, NULL};
    ck_assert_int_eq(mantra_pgo_text_write_method(mantra_pgo_text_buffer_write, &c, &m1), 0);
    mantra_pgo_text_buffer_free(&c);
    mantra_pgo_text_free(t);
    mantra_pgo_text_buffer_free(&b);
}
END_TEST

static mantra_pgo_text *parse(const char *text) {
    mantra_pgo_text *t = NULL;
    ck_assert_int_eq(mantra_pgo_text_parse(text, strlen(text), "p.txt", &t), MANTRA_OK);
    return t;
}

START_TEST(parse_errors_with_lines) {
    const char *text =
        "*** START PGO Data, max index = 4 ***\n"                                                  /* 1 */
        "@@@ codehash 0x00000001 methodhash 0x00000002 ilSize 0x00000010 records 0x00000002\n"  /* 2 */
        "MethodName: A.B\n"                                                                     /* 3 */
        "Signature: void ()\n"                                                                  /* 4 */
        "Schema InstrumentationKind 65 ILOffset 0 Count 1 Other 0\n"                            /* 5 */
        "12\n"                                                                                  /* 6 */
        "Schema InstrumentationKind 65 ILOffset 4 Count 1 Other 0\n"                            /* 7 */
        "twelve\n"                                                                              /* 8: bad count */
        "Schema InstrumentationKind 65 ILOffset 9 Count 1 Other 0\n"                            /* 9: skipped */
        "5\n"                                                                                   /* 10: skipped */
        "@@@ codehash 0x00000003 methodhash 0x00000004 ilSize 0x00000010 records 0x00000001\n"  /* 11 */
        "MethodName: A.C\n"                                                                     /* 12 */
        "Signature: void ()\n"                                                                  /* 13 */
        "@@@ codehash 0x00000005 methodhash 0x00000006 ilSize 0x00000010 records 0x00000001\n"  /* 14: not a Schema line */
        "MethodName: A.D\n"                                                                     /* 15: skipped */
        "Signature: void ()\n"                                                                  /* 16: skipped */
        "Schema InstrumentationKind 65 ILOffset 0 Count 1 Other 0\n"                            /* 17: skipped */
        "7\n"                                                                                   /* 18: skipped */
        "@@@ codehash 0x00000007 methodhash 0x00000008 ilSize 0x00000010 records 0x00000001\n"  /* 19 */
        "MethodName: A.E\n"                                                                     /* 20 */
        "Signature: void ()\n"                                                                  /* 21 */
        "Schema InstrumentationKind 195 ILOffset 0 Count 1 Other 0\n"                           /* 22 */
        "TypeHandle:NULL\n"                                                                     /* 23: no blank */
        "@@@ codehash 0x00000009 methodhash 0x0000000A ilSize 0x00000010 records 0x00000001\n"  /* 24 */
        "MethodName: A.F\n"                                                                     /* 25 */
        "Signature: void ()\n"                                                                  /* 26 */
        "Schema InstrumentationKind 66 ILOffset 0 Count 1 Other 0\n"                            /* 27 */
        "1 2\n"                                                                                 /* 28 */
        "*** END PGO Data ***\n"                                                                /* 29 */
        "@@@ codehash 0x0000000B methodhash 0x0000000C ilSize 0x00000010 records 0x00000001\n"  /* 30 */
        "MethodName: A.G\n"                                                                     /* 31 */
        "Signature: void ()\n"                                                                  /* 32 */
        "Schema InstrumentationKind 195 ILOffset 0 Count 1 Other 0\n"                           /* 33 */
        "TypeHandle: System.String";                                                            /* 34: no newline */
    mantra_pgo_text *t = parse(text);
    ck_assert_uint_eq(mantra_pgo_text_method_count(t), 1);
    const mantra_pgo_text_entry *e = mantra_pgo_text_entry_at(t, 0);
    ck_assert_uint_eq(e->codehash, 9);
    ck_assert_uint_eq(e->line, 24);
    ck_assert(e->data.values[0] == INT64_C(0x200000001));
    ck_assert_uint_eq(mantra_pgo_text_error_count(t), 4);
    ck_assert_str_eq(mantra_pgo_text_error(t, 0), "p.txt:8: expected an unsigned 32-bit count; the method is dropped");
    ck_assert_str_eq(mantra_pgo_text_error(t, 1), "p.txt:14: expected a Schema line; the method is dropped");
    ck_assert_str_eq(mantra_pgo_text_error(t, 2),
                     "p.txt:23: expected a line starting with 'TypeHandle: '; the method is dropped");
    ck_assert_str_eq(mantra_pgo_text_error(t, 3), "p.txt:34: a handle line must end with a newline; the method is dropped");
    ck_assert_ptr_null(mantra_pgo_text_error(t, 4));
    /* lines 9, 10, 15-18 and the END line 29 were skipped outside any method */
    ck_assert_uint_eq(mantra_pgo_text_skipped_lines(t), 7);
    mantra_pgo_text_free(t);
}
END_TEST

START_TEST(parse_header_and_truncation) {
    mantra_pgo_text *t = parse("@@@ codehash 0x1 methodhash 0x2 ilSize 0x3 records 0x0\n");
    ck_assert_uint_eq(mantra_pgo_text_method_count(t), 0);
    ck_assert_uint_eq(mantra_pgo_text_error_count(t), 1);
    ck_assert_str_eq(mantra_pgo_text_error(t, 0), "p.txt:1: expected '*** START PGO Data, max index = N ***'; nothing is read");
    mantra_pgo_text_free(t);

    t = parse("");
    ck_assert_uint_eq(mantra_pgo_text_error_count(t), 1);
    mantra_pgo_text_free(t);

    t = parse("*** START PGO Data, max index = 1 ***\n"
              "@@@ codehash 0x1 methodhash 0x2 ilSize 0x3 records 0x2\n"
              "MethodName: A.B\n"
              "Signature: void ()\n"
              "Schema InstrumentationKind 65 ILOffset 0 Count 1 Other 0\n"
              "3\n");
    ck_assert_uint_eq(mantra_pgo_text_method_count(t), 0);
    ck_assert_uint_eq(mantra_pgo_text_error_count(t), 1);
    ck_assert_str_eq(mantra_pgo_text_error(t, 0), "p.txt:6: the file ends before all Schema lines of the method");
    mantra_pgo_text_free(t);

    t = parse("*** START PGO Data, max index = 1 ***\n"
              "@@@ codehash 0x1 methodhash 0x2 ilSize 0x3 records 0x1\n"
              "MethodName: A.B\n");
    ck_assert_str_eq(mantra_pgo_text_error(t, 0), "p.txt:3: the file ends before the Signature line of a method");
    mantra_pgo_text_free(t);

    /* sscanf's %u: blanks and a sign are accepted, a number wraps to 32 bits; no newline at the end is fine
     * for a count line; records 0 is a method with no records */
    t = parse("*** START PGO Data, max index = 1 ***\n"
              "@@@ codehash 0x1 methodhash 0x2 ilSize 0x3 records 0x1\n"
              "x\ny\n"
              "Schema InstrumentationKind 65 ILOffset -1 Count 1 Other 0\n"
              "  4294967295\n"
              "@@@ codehash 0xabc methodhash 0x2 ilSize 0x3 records 0x0\n"
              "x\ny");
    ck_assert_uint_eq(mantra_pgo_text_error_count(t), 0);
    ck_assert_uint_eq(mantra_pgo_text_method_count(t), 2);
    const mantra_pgo_text_entry *e = mantra_pgo_text_entry_at(t, 0);
    ck_assert_int_eq(e->data.schema[0].il_offset, -1);
    ck_assert(e->data.values[0] == -1);
    ck_assert_uint_eq(mantra_pgo_text_entry_at(t, 1)->codehash, 0xABC);
    ck_assert_uint_eq(mantra_pgo_text_entry_at(t, 1)->data.records, 0);
    mantra_pgo_text_free(t);
}
END_TEST

START_TEST(parse_long_line_and_unknown_kind) {
    size_t n = 20000;
    char *text = malloc(n + 300);
    int k = snprintf(text, 300,
                     "*** START PGO Data, max index = 1 ***\n"
                     "@@@ codehash 0x1 methodhash 0x2 ilSize 0x3 records 0x1\n"
                     "x\ny\n"
                     "Schema InstrumentationKind 195 ILOffset 0 Count 1 Other 0\n"
                     "TypeHandle: ");
    memset(text + k, 'A', n);
    strcpy(text + k + n, "\n");
    mantra_pgo_text *t = parse(text);
    ck_assert_uint_eq(mantra_pgo_text_method_count(t), 0);
    ck_assert_str_eq(mantra_pgo_text_error(t, 0), "p.txt:6: line longer than 16383 bytes; the method is dropped");
    mantra_pgo_text_free(t);
    free(text);

    t = parse("*** START PGO Data, max index = 1 ***\n"
              "@@@ codehash 0x1 methodhash 0x2 ilSize 0x3 records 0x1\n"
              "x\ny\n"
              "Schema InstrumentationKind 71 ILOffset 0 Count 1 Other 0\n"
              "1\n");
    ck_assert_str_eq(mantra_pgo_text_error(t, 0),
                     "p.txt:5: unknown element type in InstrumentationKind; the method is dropped");
    mantra_pgo_text_free(t);

    /* found by fuzz_pgo_text: a NUL inside a handle line hid the difference between "NULL\0\0" (a name
     * the writer wrote back as the null handle) and NULL; the CLR reads the line as a C string without
     * its newline and drops the method */
    static const char nul_text[] = "*** START PGO Data, max index = 1 ***\n"
                                   "@@@ codehash 0x1 methodhash 0x2 ilSize 0x3 records 0x1\n"
                                   "x\ny\n"
                                   "Schema InstrumentationKind 195 ILOffset 0 Count 1 Other 0\n"
                                   "TypeHandle: NULL\0\0\n";
    ck_assert_int_eq(mantra_pgo_text_parse(nul_text, sizeof nul_text - 1, "p.txt", &t), MANTRA_OK);
    ck_assert_uint_eq(mantra_pgo_text_method_count(t), 0);
    ck_assert_str_eq(mantra_pgo_text_error(t, 0),
                     "p.txt:6: a handle line holds a NUL byte, which hides its newline from the CLR; the method is "
                     "dropped");
    mantra_pgo_text_free(t);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("pgo_text");
    TCase *tc = tcase_create("text");
    tcase_add_test(tc, writer_lines);
    tcase_add_test(tc, writer_refusals);
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, parse_errors_with_lines);
    tcase_add_test(tc, parse_header_and_truncation);
    tcase_add_test(tc, parse_long_line_and_unknown_kind);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
