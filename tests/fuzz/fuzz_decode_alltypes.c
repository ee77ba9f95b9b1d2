/* libFuzzer target: the generated typed readers of tests/golden/alltypes.yaml (every field type,
 * counted arrays, binaries, struct arrays walked with their _next() functions) on arbitrary bytes.
 * Byte 0 picks the decoder and the pointer size; the rest is the payload. A decoder must never
 * read outside the payload, whatever the counts and lengths inside it say. */
#include <stddef.h>
#include <stdint.h>

#include "alltypes_readers.h"

static volatile uint64_t g_sink;

static void touch(const uint8_t *p, size_t n) {
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += p[i];
    g_sink += s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    unsigned which = data[0] & 0x7u;
    unsigned ps = (data[0] & 0x8u) ? 4u : 8u;
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    char utf8[64];
    switch (which) {
    case 0: {
        mantra_AllTypes_Scalars_fields f;
        if (mantra_AllTypes_Scalars_decode(p, n, ps, &f) >= 0)
            g_sink += f.U64 + f.P;
        break;
    }
    case 1: {
        mantra_AllTypes_Strings_fields f;
        if (mantra_AllTypes_Strings_decode(p, n, ps, &f) >= 0) {
            g_sink += mantra_str16_to_utf8(f.Wide, utf8, sizeof utf8);
            g_sink += (uint64_t)mantra_str16_equals_utf8(f.Wide2, "x");
            touch((const uint8_t *)f.Narrow.data, f.Narrow.len);
        }
        break;
    }
    case 2: {
        mantra_AllTypes_Arrays_fields f;
        if (mantra_AllTypes_Arrays_decode(p, n, ps, &f) >= 0) {
            for (size_t i = 0; i < f.Values.count; i++)
                g_sink += mantra_array_u32(f.Values, i);
            touch(f.Signed.data, f.Signed.count * 8);
            touch(f.Ptrs.data, f.Ptrs.count * ps);
            touch(f.Blob.data, f.Blob.size);
            touch(f.Ids.data, f.Ids.count * 16);
        }
        break;
    }
    case 3: {
        mantra_AllTypes_Structs_fields f;
        if (mantra_AllTypes_Structs_decode(p, n, ps, &f) >= 0) {
            mantra_cursor c = mantra_cursor_of(f.Items, ps);
            for (size_t i = 0; i < f.Items.count; i++) {
                mantra_AllTypes_tpl_Structs_Items_elem e;
                if (mantra_AllTypes_tpl_Structs_Items_next(&c, &e) < 0)
                    break;
                touch(e.Sub.data, e.Sub.count * 4);
                g_sink += mantra_str16_to_utf8(e.Name, utf8, sizeof utf8);
            }
        }
        break;
    }
    default: {
        mantra_AllTypes_Empty_fields f;
        g_sink += (uint64_t)(mantra_AllTypes_Empty_decode(p, n, ps, &f) + 2);
        break;
    }
    }
    return 0;
}
