/* mantra_pal_reserve_region and mantra_pal_populate (platform/platform-internal.h): one mapping for
 * several session buffers, 2 MB-aligned where the host can split mappings (POSIX), zeroed, whose
 * pages are mapped piece by piece when populated (the rest stays unmapped until then), and whose
 * pieces are freed one by one with mantra_pal_free_buffer while the others keep their bytes. Where
 * the platform cannot (WASI), NULL: the session then allocates buffer by buffer. */
#if !defined(__wasi__)
#define _DEFAULT_SOURCE /* mincore(2) */
#endif
#include <check.h>
#include <stdint.h>
#include <string.h>
#if !defined(__wasi__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "check_main.h"
#include "platform/platform-internal.h"

#define MB ((size_t)1 << 20)

#if !defined(__wasi__)
/* Pages of [p, p + size) resident in memory (mincore(2)). */
static size_t resident_pages(const uint8_t *p, size_t size) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE), n = size / page, in = 0;
    unsigned char v[5 * 256 * 4]; /* 5 MB of 1 KB pages at the most */
    ck_assert_uint_le(n, sizeof v);
    ck_assert_int_eq(mincore((void *)(uintptr_t)p, size, v), 0);
    for (size_t i = 0; i < n; i++)
        in += v[i] & 1u;
    return in;
}
#endif

START_TEST(region_pieces_free_alone) {
    uint8_t *p = mantra_pal_reserve_region(5 * MB);
#if defined(__wasi__)
    ck_assert_ptr_null(p);
#else
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq((uintptr_t)p % (2 * MB), 0);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    /* reserved only: nothing mapped; each populated piece is, and only it */
    ck_assert_uint_eq(resident_pages(p, 5 * MB), 0);
    mantra_pal_populate(p + 2 * MB, 2 * MB);
    ck_assert_uint_eq(resident_pages(p + 2 * MB, 2 * MB), 2 * MB / page);
    ck_assert_uint_eq(resident_pages(p, 2 * MB), 0);
    mantra_pal_populate(p, 2 * MB);
    mantra_pal_populate(p + 4 * MB, MB);
    ck_assert_uint_eq(resident_pages(p, 5 * MB), 5 * MB / page);
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
