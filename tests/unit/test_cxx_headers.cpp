// The public headers and generated headers used from C++ (C++17, the project's warning set):
// a writer through the inline enabled check, a listener, and a typed decode, all from C++.
#include <check.h>

#include <cstdint>
#include <cstring>

#include "check_main.h"
#include "dotnet_readers.h"
#include "dotnet_writers.h"
#include "mantra/decode.h"
#include "mantra/event.h"

namespace {

uint8_t g_payload[MANTRA_MAX_PAYLOAD];
size_t g_size;
int g_calls;

extern "C" void capture(void *, const mantra_event_desc *, const uint8_t *payload, size_t size) {
    std::memcpy(g_payload, payload, size);
    g_size = size;
    g_calls++;
}

}  // namespace

START_TEST(write_and_decode_from_cxx) {
    ck_assert_int_eq(mantra_dotnet_register(), 0);
    ck_assert(!MANTRA_DotNETRuntime_MethodLoadVerbose_V2_enabled());
    ck_assert_int_eq(mantra_DotNETRuntime_MethodLoadVerbose_V2_write(1, 2, 3, 4, 5, 6, "N", "M", "S", 7, 8),
                     MANTRA_WRITE_DISABLED);
    mantra_set_listener(capture, nullptr);
    ck_assert(MANTRA_DotNETRuntime_MethodLoadVerbose_V2_enabled());
    ck_assert_int_eq(mantra_DotNETRuntime_MethodLoadVerbose_V2_write(1, 2, 3, 4, 5, 6, "N", "M", "S\xc3\xa9", 7, 8),
                     MANTRA_WRITE_OK);
    mantra_set_listener(nullptr, nullptr);
    ck_assert_int_eq(g_calls, 1);
    ck_assert_uint_eq(g_size, 8 * 3 + 4 * 3 + 4 + 4 + 6 + 2 + 8);
    mantra_DotNETRuntime_MethodLoadVerbose_V2_fields f;
    ck_assert_int_eq(mantra_DotNETRuntime_MethodLoadVerbose_V2_decode(g_payload, g_size, 8, &f), MANTRA_DECODE_OK);
    ck_assert(f.MethodID == 1 && f.ModuleID == 2 && f.MethodStartAddress == 3 && f.ReJITID == 8);
    ck_assert_uint_eq(f.ClrInstanceID, 7);
    ck_assert(mantra_str16_equals_utf8(f.MethodSignature, "S\xc3\xa9"));
}
END_TEST

static Suite *suite() {
    Suite *s = suite_create("cxx");
    TCase *t = tcase_create("headers");
    tcase_add_test(t, write_and_decode_from_cxx);
    suite_add_tcase(s, t);
    return s;
}

MANTRA_CHECK_MAIN(suite)
