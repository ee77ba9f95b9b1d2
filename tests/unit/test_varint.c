/* LEB128 and zig-zag helpers shared by the nettrace writer and reader (common/varint-internal.h). */
#include <check.h>

#include "check_main.h"
#include "common/varint-internal.h"

START_TEST(known_encodings) {
    uint8_t b[10];
    ck_assert_uint_eq(cm_varint_put(b, 0), 1);
    ck_assert_uint_eq(b[0], 0x00);
    ck_assert_uint_eq(cm_varint_put(b, 127), 1);
    ck_assert_uint_eq(b[0], 0x7f);
    ck_assert_uint_eq(cm_varint_put(b, 128), 2);
    ck_assert_uint_eq(b[0], 0x80);
    ck_assert_uint_eq(b[1], 0x01);
    ck_assert_uint_eq(cm_varint_put(b, 300), 2);
    ck_assert_uint_eq(b[0], 0xac);
    ck_assert_uint_eq(b[1], 0x02);
    ck_assert_uint_eq(cm_varint_put(b, UINT32_MAX), 5);
    static const uint8_t u32max[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
    ck_assert_mem_eq(b, u32max, 5);
    ck_assert_uint_eq(cm_varint_put(b, UINT64_MAX), 10);
    ck_assert_uint_eq(b[9], 0x01);
}
END_TEST

START_TEST(round_trip_and_sizes) {
    static const uint64_t values[] = {0, 1, 127, 128, 16383, 16384, UINT32_MAX, (uint64_t)UINT32_MAX + 1,
                                      UINT64_MAX / 2, UINT64_MAX};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        uint8_t b[10];
        size_t n = cm_varint_put(b, values[i]);
        ck_assert_uint_eq(n, cm_varint_size(values[i]));
        uint64_t v = 0;
        ck_assert_uint_eq(cm_varint_get(b, n, 10, &v), n);
        ck_assert(v == values[i]);
        /* every truncation is refused */
        for (size_t k = 0; k < n; k++)
            ck_assert_uint_eq(cm_varint_get(b, k, 10, &v), 0);
    }
}
END_TEST

START_TEST(limits_are_enforced) {
    uint64_t v;
    static const uint8_t six[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    ck_assert_uint_eq(cm_varint_get(six, sizeof six, 5, &v), 0);  /* too long for 32 bits */
    ck_assert_uint_eq(cm_varint_get(six, sizeof six, 10, &v), 6); /* fine for 64 */
    ck_assert(v == (uint64_t)1 << 35);
    static const uint8_t over[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    ck_assert_uint_eq(cm_varint_get(over, sizeof over, 10, &v), 0); /* more than 64 bits */
    static const uint8_t eleven[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    ck_assert_uint_eq(cm_varint_get(eleven, sizeof eleven, 10, &v), 0);
}
END_TEST

START_TEST(zigzag) {
    ck_assert(cm_zigzag_encode(0) == 0);
    ck_assert(cm_zigzag_encode(-1) == 1);
    ck_assert(cm_zigzag_encode(1) == 2);
    ck_assert(cm_zigzag_encode(INT64_MIN) == UINT64_MAX);
    ck_assert(cm_zigzag_decode(3) == -2);
    ck_assert(cm_zigzag_decode(UINT64_MAX) == INT64_MIN);
    ck_assert(cm_zigzag_decode(cm_zigzag_encode(INT64_MAX)) == INT64_MAX);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("varint");
    TCase *t = tcase_create("core");
    tcase_add_test(t, known_encodings);
    tcase_add_test(t, round_trip_and_sizes);
    tcase_add_test(t, limits_are_enforced);
    tcase_add_test(t, zigzag);
    suite_add_tcase(s, t);
    return s;
}

MANTRA_CHECK_MAIN(suite)
