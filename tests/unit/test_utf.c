/* UTF-16 view helpers of mantra/decode.h and the UTF-8 payload paths of mantra_payload_*. */
#include <check.h>

#include "check_main.h"
#include "mantra/decode.h"
#include "mantra/event.h"

static mantra_str16 view(const uint16_t *units, size_t n, uint8_t *buf) {
    for (size_t i = 0; i < n; i++) {
        buf[2 * i] = (uint8_t)units[i];
        buf[2 * i + 1] = (uint8_t)(units[i] >> 8);
    }
    return (mantra_str16){buf, n};
}

START_TEST(to_utf8_all_lengths) {
    /* 'A' (1 byte), U+00E9 (2), U+20AC (3), U+1D11E as a surrogate pair (4). */
    static const uint16_t u[] = {0x41, 0xe9, 0x20ac, 0xd834, 0xdd1e};
    uint8_t buf[16];
    char out[32];
    mantra_str16 s = view(u, 5, buf);
    ck_assert_uint_eq(mantra_str16_to_utf8(s, out, sizeof out), 10);
    ck_assert_str_eq(out, "A\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e");
}
END_TEST

START_TEST(to_utf8_truncates_at_character_boundary) {
    static const uint16_t u[] = {0x41, 0x20ac, 0x42};
    uint8_t buf[8];
    char out[4];
    mantra_str16 s = view(u, 3, buf);
    /* needs 5 bytes; 4 of room holds "A" and the NUL, not a partial euro sign */
    ck_assert_uint_eq(mantra_str16_to_utf8(s, out, sizeof out), 5);
    ck_assert_str_eq(out, "A");
    ck_assert_uint_eq(mantra_str16_to_utf8(s, NULL, 0), 5);
}
END_TEST

START_TEST(unpaired_surrogates_become_replacement) {
    static const uint16_t u[] = {0xdc00, 0x41, 0xd800};
    uint8_t buf[8];
    char out[16];
    mantra_str16 s = view(u, 3, buf);
    ck_assert_uint_eq(mantra_str16_to_utf8(s, out, sizeof out), 7);
    ck_assert_str_eq(out, "\xef\xbf\xbd" "A" "\xef\xbf\xbd");
    ck_assert(mantra_str16_equals_utf8(s, "\xef\xbf\xbd" "A" "\xef\xbf\xbd"));
}
END_TEST

START_TEST(equals_utf8) {
    static const uint16_t u[] = {0x68, 0x69};
    uint8_t buf[4];
    mantra_str16 s = view(u, 2, buf);
    ck_assert(mantra_str16_equals_utf8(s, "hi"));
    ck_assert(!mantra_str16_equals_utf8(s, "h"));
    ck_assert(!mantra_str16_equals_utf8(s, "hix"));
    ck_assert(!mantra_str16_equals_utf8(s, "\xff"));
    ck_assert(mantra_str16_equals_utf8((mantra_str16){NULL, 0}, ""));
}
END_TEST

START_TEST(payload_size_and_serialize) {
    const uint16_t wide[] = {0x263a, 0};
    const mantra_data d[] = {
        {"\xf0\x9f\x98\x80", 0, MANTRA_DATA_UTF8_AS_UTF16Z}, /* U+1F600: 2 units + NUL = 6 bytes */
        {wide, 0, MANTRA_DATA_UTF16Z},                        /* 1 unit + NUL = 4 */
        {"ab", 0, MANTRA_DATA_UTF8Z},                         /* 3 */
        {NULL, 3, MANTRA_DATA_BYTES},                         /* 3 zero bytes */
        {NULL, 0, MANTRA_DATA_UTF8_AS_UTF16Z},                /* NULL string: just the NUL, 2 */
    };
    ck_assert_int_eq(mantra_payload_size(d, 5), 18);
    uint8_t out[18];
    ck_assert_int_eq(mantra_payload_serialize(d, 5, out, sizeof out), 18);
    static const uint8_t want[] = {0x3d, 0xd8, 0x00, 0xde, 0, 0, 0x3a, 0x26, 0, 0, 'a', 'b', 0, 0, 0, 0, 0, 0};
    ck_assert_mem_eq(out, want, sizeof want);
    ck_assert_int_eq(mantra_payload_serialize(d, 5, out, 17), MANTRA_WRITE_TOO_LARGE);
}
END_TEST

START_TEST(payload_limits) {
    const mantra_data big[] = {{NULL, MANTRA_MAX_PAYLOAD, MANTRA_DATA_BYTES}, {NULL, 1, MANTRA_DATA_BYTES}};
    ck_assert_int_eq(mantra_payload_size(big, 1), MANTRA_MAX_PAYLOAD);
    ck_assert_int_eq(mantra_payload_size(big, 2), MANTRA_WRITE_TOO_LARGE);
    const mantra_data huge[] = {{NULL, UINT64_MAX, MANTRA_DATA_BYTES}};
    ck_assert_int_eq(mantra_payload_size(huge, 1), MANTRA_WRITE_TOO_LARGE);
    ck_assert(mantra_array_bytes(UINT64_MAX / 2, 4) == UINT64_MAX);
    ck_assert(mantra_array_bytes(3, 4) == 12);
    const mantra_data badkind[] = {{"x", 0, 99}};
    ck_assert_int_eq(mantra_payload_size(badkind, 1), MANTRA_WRITE_BAD_STRING);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("utf");
    TCase *t = tcase_create("core");
    tcase_add_test(t, to_utf8_all_lengths);
    tcase_add_test(t, to_utf8_truncates_at_character_boundary);
    tcase_add_test(t, unpaired_surrogates_become_replacement);
    tcase_add_test(t, equals_utf8);
    tcase_add_test(t, payload_size_and_serialize);
    tcase_add_test(t, payload_limits);
    suite_add_tcase(s, t);
    return s;
}

MANTRA_CHECK_MAIN(suite)
