/* mantra/metadata.h: exact V5 metadata blobs. Layouts: microsoft/perfview,
 * src/TraceEvent/EventPipe/NetTraceFormat_v5.md (metadata record, V1 fields, tags, V2Params fields), as
 * dotnet/runtime writes them (src/native/eventpipe/ep-metadata-generator.c) and microsoft/perfview reads them
 * (src/TraceEvent/EventPipe/EventPipeMetadata.cs). */
#include <check.h>

#include "check_main.h"
#include "mantra/metadata.h"

#define U32(v) (uint8_t)((v) & 0xff), (uint8_t)(((v) >> 8) & 0xff), 0, 0

/* V2Params as in the arraytypes fixture (TestEvent1): arrays force V2Params, V1 count 0. */
START_TEST(v2params_worked_example) {
    mantra_metadata_builder *b;
    ck_assert_int_eq(mantra_metadata_builder_new(&b), 0);
    ck_assert_int_eq(mantra_metadata_begin(b, 1, "T", 0, 0, 4, 0), 0);
    ck_assert_int_eq(mantra_metadata_array(b, "arg0", MANTRA_TYPE_UINT32), 0);
    ck_assert_int_eq(mantra_metadata_array(b, "arg1", MANTRA_TYPE_INT16), 0);
    ck_assert_int_eq(mantra_metadata_field(b, "arg2", MANTRA_TYPE_INT64), 0);
    const uint8_t *blob;
    size_t n;
    ck_assert_int_eq(mantra_metadata_finish(b, &blob, &n), 0);
    static const uint8_t want[] = {
        U32(1), 'T', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, U32(0), U32(4), /* id, name, keywords, version, level */
        U32(0),                                                        /* V1 FieldCount 0 */
        0x42, 0, 0, 0, 2,                                              /* tag: 66 bytes, V2Params */
        U32(3),
        U32(22), 'a', 0, 'r', 0, 'g', 0, '0', 0, 0, 0, U32(19), U32(10),
        U32(22), 'a', 0, 'r', 0, 'g', 0, '1', 0, 0, 0, U32(19), U32(7),
        U32(18), 'a', 0, 'r', 0, 'g', 0, '2', 0, 0, 0, U32(11)};
    ck_assert_uint_eq(n, sizeof want);
    ck_assert_mem_eq(blob, want, sizeof want);
    mantra_metadata_builder_free(b);
}
END_TEST

/* V1 fields: nested Object fields in a V1 list (type, count, members, then the name) + Opcode tag. */
START_TEST(v1_nested_structs_and_opcode) {
    mantra_metadata_builder *b;
    ck_assert_int_eq(mantra_metadata_builder_new(&b), 0);
    ck_assert_int_eq(mantra_metadata_begin(b, 0x1234, "Ev", UINT64_C(0x8000000000000001), 2, 5, 10), 0);
    ck_assert_int_eq(mantra_metadata_begin_struct(b, "Pt"), 0);
    ck_assert_int_eq(mantra_metadata_field(b, "X", MANTRA_TYPE_INT32), 0);
    ck_assert_int_eq(mantra_metadata_begin_struct(b, "In"), 0);
    ck_assert_int_eq(mantra_metadata_field(b, "F", MANTRA_TYPE_BOOLEAN), 0);
    ck_assert_int_eq(mantra_metadata_end_struct(b), 0);
    ck_assert_int_eq(mantra_metadata_end_struct(b), 0);
    ck_assert_int_eq(mantra_metadata_field(b, "Z", MANTRA_TYPE_STRING), 0);
    const uint8_t *blob;
    size_t n;
    ck_assert_int_eq(mantra_metadata_finish(b, &blob, &n), 0);
    static const uint8_t want[] = {
        0x34, 0x12, 0, 0, 'E', 0, 'v', 0, 0, 0,
        1, 0, 0, 0, 0, 0, 0, 0x80, U32(2), U32(5),
        U32(2),                                  /* FieldCount */
        U32(1), U32(2),                          /* Pt: Object with 2 members */
        U32(9), 'X', 0, 0, 0,                    /*   X Int32 */
        U32(1), U32(1), U32(3), 'F', 0, 0, 0,    /*   In: Object { F Boolean } */
        'I', 0, 'n', 0, 0, 0,                    /*   name of In */
        'P', 0, 't', 0, 0, 0,                    /* name of Pt */
        U32(18), 'Z', 0, 0, 0,                   /* Z String */
        U32(1), 1, 10};                          /* Opcode tag: size 1, kind 1, opcode 10 */
    ck_assert_uint_eq(n, sizeof want);
    ck_assert_mem_eq(blob, want, sizeof want);
    /* the same description with V2Params forced */
    ck_assert_int_eq(mantra_metadata_begin(b, 3, "", 0, 0, 0, 0), 0);
    ck_assert_int_eq(mantra_metadata_force_v2(b, 1), 0);
    ck_assert_int_eq(mantra_metadata_field(b, "A", MANTRA_TYPE_BYTE), 0);
    ck_assert_int_eq(mantra_metadata_finish(b, &blob, &n), 0);
    static const uint8_t want2[] = {U32(3), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, U32(0), U32(0), U32(0),
                                    U32(16), 2, U32(1), U32(12), 'A', 0, 0, 0, U32(6)};
    ck_assert_uint_eq(n, sizeof want2);
    ck_assert_mem_eq(blob, want2, sizeof want2);
    mantra_metadata_builder_free(b);
}
END_TEST

/* V2 fields: an array of structs and a struct in V2 form; FieldSize covers the nested fields. */
START_TEST(v2_struct_array) {
    mantra_metadata_builder *b;
    ck_assert_int_eq(mantra_metadata_builder_new(&b), 0);
    ck_assert_int_eq(mantra_metadata_begin(b, 2, "", 0, 0, 0, 0), 0);
    ck_assert_int_eq(mantra_metadata_begin_struct_array(b, "Items"), 0);
    ck_assert_int_eq(mantra_metadata_field(b, "A", MANTRA_TYPE_UINT16), 0);
    ck_assert_int_eq(mantra_metadata_field(b, "B", MANTRA_TYPE_STRING), 0);
    ck_assert_int_eq(mantra_metadata_end_struct(b), 0);
    ck_assert_int_eq(mantra_metadata_begin_struct(b, "S"), 0);
    ck_assert_int_eq(mantra_metadata_field(b, "C", MANTRA_TYPE_GUID), 0);
    ck_assert_int_eq(mantra_metadata_end_struct(b), 0);
    const uint8_t *blob;
    size_t n;
    ck_assert_int_eq(mantra_metadata_finish(b, &blob, &n), 0);
    static const uint8_t want[] = {
        U32(2), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, U32(0), U32(0), U32(0),
        U32(84), 2, U32(2),
        /* Items: 4 + 12 (name) + 4 (Array) + 4 (Object) + 4 (count) + 12 + 12 = 52 */
        U32(52), 'I', 0, 't', 0, 'e', 0, 'm', 0, 's', 0, 0, 0, U32(19), U32(1), U32(2),
        U32(12), 'A', 0, 0, 0, U32(8),
        U32(12), 'B', 0, 0, 0, U32(18),
        /* S: 4 + 4 + 4 (Object) + 4 (count) + 12 = 28 */
        U32(28), 'S', 0, 0, 0, U32(1), U32(1), U32(12), 'C', 0, 0, 0, U32(17)};
    ck_assert_uint_eq(n, sizeof want);
    ck_assert_mem_eq(blob, want, sizeof want);
    mantra_metadata_builder_free(b);
}
END_TEST

START_TEST(builder_errors) {
    mantra_metadata_builder *b;
    const uint8_t *blob;
    size_t n;
    ck_assert_int_eq(mantra_metadata_builder_new(&b), 0);
    ck_assert_int_eq(mantra_metadata_field(b, "A", MANTRA_TYPE_BYTE), MANTRA_ESTATE);
    ck_assert_int_eq(mantra_metadata_finish(b, &blob, &n), MANTRA_ESTATE);
    ck_assert_int_eq(mantra_metadata_begin(b, 1, "\xc3", 0, 0, 0, 0), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_metadata_begin(b, 1, "E", 0, 0, 0, 0), 0);
    ck_assert_int_eq(mantra_metadata_field(b, "A", MANTRA_TYPE_ARRAY), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_metadata_field(b, "A", MANTRA_TYPE_OBJECT), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_metadata_field(b, "A", 2), MANTRA_EINVAL); /* DBNull */
    ck_assert_int_eq(mantra_metadata_array(b, "A", MANTRA_TYPE_ARRAY), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_metadata_end_struct(b), MANTRA_ESTATE);
    ck_assert_int_eq(mantra_metadata_field(b, "\xff", MANTRA_TYPE_BYTE), MANTRA_EINVAL);
    ck_assert_str_eq(mantra_metadata_last_error(b), "name is not valid UTF-8");
    for (int i = 0; i < MANTRA_METADATA_MAX_DEPTH; i++)
        ck_assert_int_eq(mantra_metadata_begin_struct(b, "S"), 0);
    ck_assert_int_eq(mantra_metadata_begin_struct(b, "S"), MANTRA_ERANGE);
    ck_assert_int_eq(mantra_metadata_finish(b, &blob, &n), MANTRA_ESTATE);
    ck_assert_int_eq(mantra_metadata_builder_new(NULL), MANTRA_EINVAL);
    mantra_metadata_builder_free(b);
    mantra_metadata_builder_free(NULL);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("metadata");
    TCase *tc = tcase_create("builder");
    tcase_add_test(tc, v2params_worked_example);
    tcase_add_test(tc, v1_nested_structs_and_opcode);
    tcase_add_test(tc, v2_struct_array);
    tcase_add_test(tc, builder_errors);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
