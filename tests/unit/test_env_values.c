/* Environment values (runtime/src/platform/env_values.c): mantra_pal_getenv_set (unset and empty
 * alike), mantra_pal_parse_uint (digits of the base and nothing else, at most max; a bad character
 * wins over an overflow) and mantra_pal_getenv_u32 (a decimal number in [0, max], else the
 * fallback), with the spellings the callers meet. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_main.h"
#include "mantra/status.h"
#include "platform/platform-internal.h"

#define VAR "MANTRA_TEST_ENV_VALUE"

/* VAR = value (NULL: unset). */
static void set_var(const char *value) {
    if (value)
        ck_assert_int_eq(setenv(VAR, value, 1), 0);
    else
        ck_assert_int_eq(unsetenv(VAR), 0);
}

START_TEST(getenv_set_treats_empty_as_unset) {
    set_var(NULL);
    ck_assert_ptr_null(mantra_pal_getenv_set(VAR));
    set_var("");
    ck_assert_ptr_null(mantra_pal_getenv_set(VAR));
    ck_assert_ptr_nonnull(mantra_pal_getenv(VAR)); /* the raw look-up still sees it */
    set_var(" ");
    ck_assert_str_eq(mantra_pal_getenv_set(VAR), " ");
    set_var("0");
    ck_assert_str_eq(mantra_pal_getenv_set(VAR), "0");
    set_var(NULL);
}
END_TEST

START_TEST(getenv_u32_exact_results) {
    /* max 4096, fallback 16 (MANTRA_SESSION_POOL_MB's) and 77 (a fallback no case parses to) */
    static const struct {
        const char *value; /* NULL: unset */
        uint32_t want;
    } cases[] = {
        {NULL, 77u},
        {"", 77u},
        {"0", 0u},
        {"16", 16u},
        {"4096", 4096u}, /* max */
        {"4097", 77u},   /* max + 1 */
        {"-1", 77u},
        {"+5", 77u},
        {" 5", 77u},
        {"5 ", 77u},
        {"5x", 77u},
        {"0x10", 77u}, /* decimal only */
        {"1e3", 77u},
        {"1234567890123456789012345", 77u}, /* 25 digits: over every integer type */
        {"0016", 16u},                      /* leading zeros */
        {"000000000000000000000000004096", 4096u},
        {"0000", 0u},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        set_var(cases[k].value);
        uint32_t got = mantra_pal_getenv_u32(VAR, 4096u, 77u);
        ck_assert_msg(got == cases[k].want, "case %zu (%s): %u, expected %u", k,
                      cases[k].value ? cases[k].value : "unset", got, cases[k].want);
    }
    /* the whole uint32_t range */
    set_var("4294967295");
    ck_assert_uint_eq(mantra_pal_getenv_u32(VAR, UINT32_MAX, 7u), 4294967295u);
    set_var("4294967296");
    ck_assert_uint_eq(mantra_pal_getenv_u32(VAR, UINT32_MAX, 7u), 7u);
    /* max 0: only zero */
    set_var("0");
    ck_assert_uint_eq(mantra_pal_getenv_u32(VAR, 0u, 7u), 0u);
    set_var("5");
    ck_assert_uint_eq(mantra_pal_getenv_u32(VAR, 0u, 7u), 7u);
    set_var(NULL);
}
END_TEST

/* mantra_pal_parse_uint: the status and value of each spelling; *out untouched on failure. */
static void parse_case(const char *s, unsigned base, uint64_t max, int want_rc, uint64_t want) {
    uint64_t out = UINT64_C(0xdeadbeef);
    int rc = mantra_pal_parse_uint(s, base, max, &out);
    ck_assert_msg(rc == want_rc, "\"%s\" base %u max %llu: rc %d, expected %d", s ? s : "NULL", base,
                  (unsigned long long)max, rc, want_rc);
    uint64_t expect = want_rc == MANTRA_OK ? want : UINT64_C(0xdeadbeef);
    ck_assert_msg(out == expect, "\"%s\" base %u: %llu, expected %llu", s ? s : "NULL", base, (unsigned long long)out,
                  (unsigned long long)expect);
}

START_TEST(parse_uint_statuses) {
    parse_case(NULL, 10, 100, MANTRA_EINVAL, 0);
    parse_case("", 10, 100, MANTRA_EINVAL, 0);
    parse_case("0", 10, 100, MANTRA_OK, 0);
    parse_case("16", 10, 100, MANTRA_OK, 16);
    parse_case("100", 10, 100, MANTRA_OK, 100);
    parse_case("101", 10, 100, MANTRA_ERANGE, 0);
    parse_case("-1", 10, 100, MANTRA_EINVAL, 0);
    parse_case(" 5", 10, 100, MANTRA_EINVAL, 0);
    parse_case("5 ", 10, 100, MANTRA_EINVAL, 0);
    parse_case("5x", 10, 100, MANTRA_EINVAL, 0);
    parse_case("0x10", 10, 100, MANTRA_EINVAL, 0);
    parse_case("0x10", 16, 100, MANTRA_EINVAL, 0); /* the prefix is the caller's */
    parse_case("007", 10, 100, MANTRA_OK, 7);
    parse_case("1234567890123456789012345", 10, UINT64_MAX, MANTRA_ERANGE, 0);
    parse_case("1234567890123456789012345x", 10, UINT64_MAX, MANTRA_EINVAL, 0); /* not a number wins */
    parse_case("18446744073709551615", 10, UINT64_MAX, MANTRA_OK, UINT64_MAX);
    parse_case("18446744073709551616", 10, UINT64_MAX, MANTRA_ERANGE, 0);
    parse_case("99999999999999999999", 10, UINT64_MAX, MANTRA_ERANGE, 0);
    parse_case("9", 10, 0, MANTRA_ERANGE, 0); /* a digit over max on its own */
    parse_case("00", 10, 0, MANTRA_OK, 0);
    /* base 16 */
    parse_case("10", 16, UINT32_MAX, MANTRA_OK, 16);
    parse_case("fF", 16, UINT32_MAX, MANTRA_OK, 255);
    parse_case("ffffffff", 16, UINT32_MAX, MANTRA_OK, UINT32_MAX);
    parse_case("100000000", 16, UINT32_MAX, MANTRA_ERANGE, 0);
    parse_case("1g", 16, UINT32_MAX, MANTRA_EINVAL, 0);
    parse_case("ffffffffffffffff", 16, UINT64_MAX, MANTRA_OK, UINT64_MAX);
    parse_case("10000000000000000", 16, UINT64_MAX, MANTRA_ERANGE, 0);
    parse_case("a", 10, 100, MANTRA_EINVAL, 0); /* hex digits in base 10 */
    parse_case("5", 8, 100, MANTRA_EINVAL, 0);  /* bases other than 10 and 16 */
}
END_TEST

START_TEST(tmpdir_from_env) {
    const char *env = getenv("TMPDIR");
    char saved[4096] = "";
    if (env)
        snprintf(saved, sizeof saved, "%s", env);
    ck_assert_int_eq(setenv("TMPDIR", "/var/mantra-tmp", 1), 0);
    ck_assert_str_eq(mantra_pal_tmpdir(), "/var/mantra-tmp");
    ck_assert_int_eq(setenv("TMPDIR", "", 1), 0);
    ck_assert_str_eq(mantra_pal_tmpdir(), "/tmp");
    ck_assert_int_eq(unsetenv("TMPDIR"), 0);
    ck_assert_str_eq(mantra_pal_tmpdir(), "/tmp");
    if (env)
        ck_assert_int_eq(setenv("TMPDIR", saved, 1), 0);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("env_values");
    TCase *tc = tcase_create("env");
    tcase_add_test(tc, getenv_set_treats_empty_as_unset);
    tcase_add_test(tc, getenv_u32_exact_results);
    tcase_add_test(tc, parse_uint_statuses);
    tcase_add_test(tc, tmpdir_from_env);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
