/* Chunking into JitInstrumentationDataVerbose payloads (pgo-format.md §4 item 4) and reassembly by
 * dotnet-pgo's rules (§5): boundaries at 40,000 and 40,001 bytes, several chunks, and duplicate,
 * out-of-order and post-final chunks with what is kept and what is counted. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "mantra/pgo.h"

START_TEST(chunk_boundaries) {
    uint32_t flags;
    size_t off, len;
    ck_assert_uint_eq(mantra_pgo_chunk_count(0), 0);
    ck_assert_int_eq(mantra_pgo_chunk(0, 0, &flags, &off, &len), MANTRA_EINVAL);

    ck_assert_uint_eq(mantra_pgo_chunk_count(1), 1);
    ck_assert_int_eq(mantra_pgo_chunk(1, 0, &flags, &off, &len), MANTRA_OK);
    ck_assert_uint_eq(flags, 0x80000000u);
    ck_assert_uint_eq(len, 1);

    /* exactly 40,000 bytes: one chunk, flagged final */
    ck_assert_uint_eq(mantra_pgo_chunk_count(40000), 1);
    ck_assert_int_eq(mantra_pgo_chunk(40000, 0, &flags, &off, &len), MANTRA_OK);
    ck_assert_uint_eq(flags, 0x80000000u);
    ck_assert_uint_eq(off, 0);
    ck_assert_uint_eq(len, 40000);
    ck_assert_int_eq(mantra_pgo_chunk(40000, 1, &flags, &off, &len), MANTRA_EINVAL);

    /* 40,001 bytes: chunk 0 (40,000) and chunk 1|final (1 byte) */
    ck_assert_uint_eq(mantra_pgo_chunk_count(40001), 2);
    ck_assert_int_eq(mantra_pgo_chunk(40001, 0, &flags, &off, &len), MANTRA_OK);
    ck_assert_uint_eq(flags, 0);
    ck_assert_uint_eq(off, 0);
    ck_assert_uint_eq(len, 40000);
    ck_assert_int_eq(mantra_pgo_chunk(40001, 1, &flags, &off, &len), MANTRA_OK);
    ck_assert_uint_eq(flags, 0x80000001u);
    ck_assert_uint_eq(off, 40000);
    ck_assert_uint_eq(len, 1);

    /* several: 120,000 = 3 full chunks; 125,000 = 3 full + 5,000 */
    ck_assert_uint_eq(mantra_pgo_chunk_count(120000), 3);
    ck_assert_int_eq(mantra_pgo_chunk(120000, 2, &flags, &off, &len), MANTRA_OK);
    ck_assert_uint_eq(flags, 0x80000002u);
    ck_assert_uint_eq(len, 40000);
    ck_assert_uint_eq(mantra_pgo_chunk_count(125000), 4);
    ck_assert_int_eq(mantra_pgo_chunk(125000, 1, &flags, &off, &len), MANTRA_OK);
    ck_assert_uint_eq(flags, 1);
    ck_assert_uint_eq(off, 40000);
    ck_assert_int_eq(mantra_pgo_chunk(125000, 3, &flags, &off, &len), MANTRA_OK);
    ck_assert_uint_eq(flags, 0x80000003u);
    ck_assert_uint_eq(off, 120000);
    ck_assert_uint_eq(len, 5000);
}
END_TEST

/* Feeds every chunk of blob (key) in order. */
static void feed(mantra_pgo_reassembler *r, uint64_t key, const uint8_t *blob, size_t size) {
    size_t n = mantra_pgo_chunk_count(size);
    for (size_t i = 0; i < n; i++) {
        uint32_t flags;
        size_t off, len;
        ck_assert_int_eq(mantra_pgo_chunk(size, i, &flags, &off, &len), MANTRA_OK);
        ck_assert_int_eq(mantra_pgo_reassembler_add(r, key, flags, blob + off, len), i + 1 == n ? 1 : 0);
    }
}

START_TEST(chunk_then_reassemble) {
    size_t size = 125000;
    uint8_t *blob = malloc(size);
    for (size_t i = 0; i < size; i++)
        blob[i] = (uint8_t)(i * 7 + (i >> 8));
    mantra_pgo_reassembler *r = mantra_pgo_reassembler_new();
    feed(r, 42, blob, size);
    feed(r, 43, blob, 40001);
    feed(r, 44, blob, 40000);
    ck_assert_int_eq(mantra_pgo_reassembler_get(r, 0, NULL, NULL, NULL), MANTRA_ESTATE);
    ck_assert_uint_eq(mantra_pgo_reassembler_finish(r), 3);
    uint64_t key;
    const uint8_t *data;
    size_t got;
    ck_assert_int_eq(mantra_pgo_reassembler_get(r, 0, &key, &data, &got), MANTRA_OK);
    ck_assert_uint_eq(key, 42);
    ck_assert_uint_eq(got, size);
    ck_assert_mem_eq(data, blob, size);
    ck_assert_int_eq(mantra_pgo_reassembler_get(r, 1, &key, &data, &got), MANTRA_OK);
    ck_assert_uint_eq(key, 43);
    ck_assert_uint_eq(got, 40001);
    ck_assert_int_eq(mantra_pgo_reassembler_get(r, 2, &key, &data, &got), MANTRA_OK);
    ck_assert_uint_eq(key, 44);
    ck_assert_uint_eq(got, 40000);
    ck_assert_int_eq(mantra_pgo_reassembler_get(r, 3, &key, &data, &got), MANTRA_EINVAL);
    mantra_pgo_reassembly_stats st;
    mantra_pgo_reassembler_stats(r, &st);
    ck_assert_uint_eq(st.chunks, 4 + 2 + 1);
    ck_assert_uint_eq(st.complete, 3);
    ck_assert_uint_eq(st.chunks_dropped, 0);
    ck_assert_uint_eq(st.incomplete, 0);
    ck_assert_int_eq(mantra_pgo_reassembler_add(r, 1, 0x80000000u, blob, 1), MANTRA_ESTATE);
    mantra_pgo_reassembler_free(r);
    free(blob);
}
END_TEST

static const uint8_t A[] = {1, 2, 3}, B[] = {4, 5}, C[] = {6};

START_TEST(duplicate_out_of_order_post_final) {
    mantra_pgo_reassembler *r = mantra_pgo_reassembler_new();
    /* key 1: complete, then the same sequence again (a second emission): the duplicate chunk 0
     * arrives after the final chunk and erases everything of key 1; the rest of the second
     * emission (chunk 1|final) then finds no entry and is out of order. */
    ck_assert_int_eq(mantra_pgo_reassembler_add(r, 1, 0, A, 3), 0);
    ck_assert_int_eq(mantra_pgo_reassembler_add(r, 1, 0x80000001u, B, 2), 1);
    ck_assert_int_eq(mantra_pgo_reassembler_add(r, 1, 0, A, 3), 2);
    ck_assert_int_eq(mantra_pgo_reassembler_add(r, 1, 0x80000001u, B, 2), 2);
    /* key 2: chunk 0 twice (a duplicate before the final one): out of order, discarded; then a
     * fresh chunk 0 starts afresh and completes */
    ck_assert_int_eq(mantra_pgo_reassembler_add(r, 2, 0, A, 3), 0);
    ck_assert_int_eq(mantra_pgo_reassembler_add(r, 2, 0, A, 3), 2);
    ck_assert_int_eq(mantra_pgo_reassembler_add(r, 2, 0, C, 1), 0);
    ck_assert_int_eq(mantra_pgo_reassembler_add(r, 2, 0x80000001u, B, 2), 1);
    /* key 3: chunk 1 before chunk 0 */
    ck_assert_int_eq(mantra_pgo_reassembler_add(r, 3, 1, B, 2), 2);
    /* key 4: 0, 2 (skips 1) */
    ck_assert_int_eq(mantra_pgo_reassembler_add(r, 4, 0, A, 3), 0);
    ck_assert_int_eq(mantra_pgo_reassembler_add(r, 4, 0x80000002u, B, 2), 2);
    /* key 5: never final */
    ck_assert_int_eq(mantra_pgo_reassembler_add(r, 5, 0, A, 3), 0);
    /* key 6: a single final chunk; key 7: complete, discarded after final, then complete again
     * (handed out at its second completion, after key 6) */
    ck_assert_int_eq(mantra_pgo_reassembler_add(r, 7, 0x80000000u, A, 3), 1);
    ck_assert_int_eq(mantra_pgo_reassembler_add(r, 6, 0x80000000u, C, 1), 1);
    ck_assert_int_eq(mantra_pgo_reassembler_add(r, 7, 0x80000000u, A, 3), 2);
    ck_assert_int_eq(mantra_pgo_reassembler_add(r, 7, 0x80000000u, B, 2), 1);

    ck_assert_uint_eq(mantra_pgo_reassembler_finish(r), 3);
    uint64_t key;
    const uint8_t *data;
    size_t size;
    ck_assert_int_eq(mantra_pgo_reassembler_get(r, 0, &key, &data, &size), MANTRA_OK);
    ck_assert_uint_eq(key, 2);
    ck_assert_uint_eq(size, 3);
    static const uint8_t want2[] = {6, 4, 5};
    ck_assert_mem_eq(data, want2, 3);
    ck_assert_int_eq(mantra_pgo_reassembler_get(r, 1, &key, &data, &size), MANTRA_OK);
    ck_assert_uint_eq(key, 6);
    ck_assert_int_eq(mantra_pgo_reassembler_get(r, 2, &key, &data, &size), MANTRA_OK);
    ck_assert_uint_eq(key, 7);
    ck_assert_uint_eq(size, 2);
    ck_assert_mem_eq(data, B, 2);

    mantra_pgo_reassembly_stats st;
    mantra_pgo_reassembler_stats(r, &st);
    ck_assert_uint_eq(st.chunks, 16);
    ck_assert_uint_eq(st.complete, 3);
    ck_assert_uint_eq(st.incomplete, 1);          /* key 5 */
    ck_assert_uint_eq(st.discard_after_final, 2); /* key 1, key 7 */
    ck_assert_uint_eq(st.discard_out_of_order, 4); /* key 1 (second chunk 1), key 2, key 3, key 4 */
    /* dropped: key 1: 2 held + 1, then 1; key 2: 1 held + 1; key 3: 1; key 4: 1 held + 1; key 7: 1 held + 1 */
    ck_assert_uint_eq(st.chunks_dropped, 3 + 1 + 2 + 1 + 2 + 2);
    mantra_pgo_reassembler_free(r);
}
END_TEST

START_TEST(zero_length_chunks) {
    /* a chunk of 0 bytes still counts in the sequence */
    mantra_pgo_reassembler *r = mantra_pgo_reassembler_new();
    ck_assert_int_eq(mantra_pgo_reassembler_add(r, 9, 0, NULL, 0), 0);
    ck_assert_int_eq(mantra_pgo_reassembler_add(r, 9, 0x80000001u, C, 1), 1);
    ck_assert_int_eq(mantra_pgo_reassembler_add(r, 9, 0, NULL, 5), MANTRA_EINVAL);
    ck_assert_uint_eq(mantra_pgo_reassembler_finish(r), 1);
    size_t size;
    ck_assert_int_eq(mantra_pgo_reassembler_get(r, 0, NULL, NULL, &size), MANTRA_OK);
    ck_assert_uint_eq(size, 1);
    mantra_pgo_reassembler_free(r);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("pgo_chunks");
    TCase *tc = tcase_create("chunks");
    tcase_add_test(tc, chunk_boundaries);
    tcase_add_test(tc, chunk_then_reassemble);
    tcase_add_test(tc, duplicate_out_of_order_post_final);
    tcase_add_test(tc, zero_length_chunks);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
