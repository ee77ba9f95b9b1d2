/* mantra_pal_alloc_region (platform/platform-internal.h): one mapping for several session buffers,
 * 2 MB-aligned where the host can split mappings (POSIX), zeroed and populated, whose pieces are
 * freed one by one with mantra_pal_free_buffer while the others keep their bytes. Where the
 * platform cannot (WASI), NULL: the session then allocates buffer by buffer. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "check_main.h"
#include "platform/platform-internal.h"

#define MB ((size_t)1 << 20)

START_TEST(region_pieces_free_alone) {
    uint8_t *p = mantra_pal_alloc_region(5 * MB);
#if defined(__wasi__)
    ck_assert_ptr_null(p);
#else
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq((uintptr_t)p % (2 * MB), 0);
    size_t nonzero = 0;
    for (size_t i = 0; i < 5 * MB; i++)
        nonzero += p[i] != 0;
    ck_assert_uint_eq(nonzero, 0);
    for (size_t k = 0; k < 5; k++)
        memset(p + k * MB, (int)(0x10 + k), MB);
    mantra_pal_free_buffer(p + 1 * MB, MB); /* a piece in the middle of a huge page */
    mantra_pal_free_buffer(p + 4 * MB, MB); /* the last piece */
    static const size_t left[3] = {0, 2, 3};
    size_t kept[5] = {0};
    for (size_t j = 0; j < 3; j++)
        for (size_t i = 0; i < MB; i++)
            kept[left[j]] += p[left[j] * MB + i] == (uint8_t)(0x10 + left[j]);
    ck_assert_uint_eq(kept[0], MB);
    ck_assert_uint_eq(kept[2], MB);
    ck_assert_uint_eq(kept[3], MB);
    mantra_pal_free_buffer(p, MB);
    mantra_pal_free_buffer(p + 2 * MB, 2 * MB);
#endif
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("buffer_region");
    TCase *tc = tcase_create("region");
    tcase_add_test(tc, region_pieces_free_alone);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
