/* The status vocabulary (mantra/status.h) and the type names (mantra/types.h): every code has its
 * name and description, and anything else (positive, below the last code, INT_MIN) gets the
 * fallback. */
#include <check.h>
#include <limits.h>

#include "check_main.h"
#include "mantra/status.h"
#include "mantra/types.h"

START_TEST(every_code_named) {
    ck_assert_str_eq(mantra_status_name(MANTRA_OK), "MANTRA_OK");
    ck_assert_str_eq(mantra_status_name(MANTRA_EINVAL), "MANTRA_EINVAL");
    ck_assert_str_eq(mantra_status_name(MANTRA_ENOMEM), "MANTRA_ENOMEM");
    ck_assert_str_eq(mantra_status_name(MANTRA_EIO), "MANTRA_EIO");
    ck_assert_str_eq(mantra_status_name(MANTRA_ENOSPC), "MANTRA_ENOSPC");
    ck_assert_str_eq(mantra_status_name(MANTRA_ESTATE), "MANTRA_ESTATE");
    ck_assert_str_eq(mantra_status_name(MANTRA_ERANGE), "MANTRA_ERANGE");
    ck_assert_str_eq(mantra_status_name(MANTRA_EORDER), "MANTRA_EORDER");
    ck_assert_str_eq(mantra_status_name(MANTRA_EFORMAT), "MANTRA_EFORMAT");
    ck_assert_str_eq(mantra_status_name(MANTRA_ETRUNCATED), "MANTRA_ETRUNCATED");
    ck_assert_str_eq(mantra_status_name(MANTRA_EUNSUPPORTED), "MANTRA_EUNSUPPORTED");
    ck_assert_str_eq(mantra_strerror(MANTRA_OK), "success");
    ck_assert_str_eq(mantra_strerror(MANTRA_EIO), "I/O error");
    ck_assert_str_eq(mantra_strerror(MANTRA_ETRUNCATED), "input ends early");
    ck_assert_str_eq(mantra_strerror(MANTRA_EUNSUPPORTED), "not supported");
    ck_assert_str_eq(mantra_status_name(MANTRA_ENOENT), "MANTRA_ENOENT");
    ck_assert_str_eq(mantra_strerror(MANTRA_ENOENT), "not found");
    ck_assert_str_eq(mantra_status_name(MANTRA_ETIMEDOUT), "MANTRA_ETIMEDOUT");
    ck_assert_str_eq(mantra_strerror(MANTRA_ETIMEDOUT), "timed out");
    ck_assert_str_eq(mantra_status_name(MANTRA_EDATAINCOMPLETE), "MANTRA_EDATAINCOMPLETE");
    ck_assert_str_eq(mantra_strerror(MANTRA_EDATAINCOMPLETE), "data incomplete (not there at this point)");
    ck_assert_str_eq(mantra_status_name(MANTRA_EFLAGS), "MANTRA_EFLAGS");
    ck_assert_str_eq(mantra_strerror(MANTRA_EFLAGS), "not enabled by the flags chosen at start");
}
END_TEST

START_TEST(unknown_codes) {
    const int bad[] = {1, 7, -15, -100, INT_MIN, INT_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_str_eq(mantra_status_name(bad[i]), "?");
        ck_assert_str_eq(mantra_strerror(bad[i]), "unknown status");
    }
}
END_TEST

START_TEST(type_names) {
    ck_assert_str_eq(mantra_type_name(MANTRA_TYPE_EMPTY), "Empty");
    ck_assert_str_eq(mantra_type_name(MANTRA_TYPE_UINT32), "UInt32");
    ck_assert_str_eq(mantra_type_name(MANTRA_TYPE_GUID), "Guid");
    ck_assert_str_eq(mantra_type_name(MANTRA_TYPE_BOOLEAN8), "Boolean8");
    ck_assert_str_eq(mantra_type_name(MANTRA_TYPE_STRING8), "String8");
    ck_assert_str_eq(mantra_type_name(MANTRA_TYPE_POINTER), "Pointer");
    ck_assert_str_eq(mantra_type_name(MANTRA_TYPE_BINARY), "Binary");
    ck_assert_str_eq(mantra_type_name(27), "?");
    ck_assert_str_eq(mantra_type_name(0x103), "?");
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("status");
    TCase *t = tcase_create("names");
    tcase_add_test(t, every_code_named);
    tcase_add_test(t, unknown_codes);
    tcase_add_test(t, type_names);
    suite_add_tcase(s, t);
    return s;
}

MANTRA_CHECK_MAIN(suite)
