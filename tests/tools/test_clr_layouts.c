/* Struct layouts of the built-in runtime data (manifest/clr/runtime.args, docs/manifest.md "Struct
 * layout"): `mantra dump --json` and `mantra stats --json` of a trace of our own making, written with
 * pgo_trace.c (runtime events with empty metadata, as the runtime writes them), into the build tree.
 *
 *   - GCFitBucketInfo (209), whose Values the runtime copies as a C array (16-byte elements), with the
 *     bytes of a real .NET 10 payload (issue 31): Index 0/1/2/4, Count 7/3/1/1, Size 0x3a8/0x410/
 *     0x350/0xa60 (they add up to TotalSize 0x1568), and no decode error;
 *   - GCLOHCompact (208), whose Values (one per heap) the runtime copies as a C array too (32-byte
 *     elements: 4 bytes of padding after TimeRelocate; a real .NET 10 payload with two heaps is 68
 *     bytes, 8 more than the packed reading takes), crafted with padding bytes that must be skipped;
 *   - BulkType (15), whose Values stay packed, in the same trace;
 *   - the runtime's events newer than the shared ClrEtwAll.man (manifest/clr/additions.yaml):
 *     WaitHandleWaitStart/Stop (301/302) and AllocationSampled (303). */
#define _POSIX_C_SOURCE 200809L

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check_main.h"
#include "gen/run_tool.h"
#include "tools/pgo_trace.h"

static const char *tool(void) { return run_tool_env("MANTRA_TOOL", "build/tools/mantra"); }

static char *path_of(const char *name) {
    const char *dir = run_tool_env("MANTRA_LAYOUT_TEST_DIR", "build/tests/tools/clr-layouts");
    mkdir(dir, 0777);
    return run_tool_path(dir, name);
}

/* The real payload of issue 31: ClrInstanceID 0, BucketKind 1, TotalSize 0x1568, Count 4, then four
 * 16-byte {u16 Index, 2 bytes padding, u32 Count, u64 Size}. */
static const uint8_t FIT_BUCKETS[] = {
    0x00, 0x00, 0x01, 0x00, 0x68, 0x15, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0xa8, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x10, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x50, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x04, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x60, 0x0a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

/* GCLOHCompact: ClrInstanceID 0, Count 2, then two 32-byte {u32 TimePlan, u32 TimeCompact, u32
 * TimeRelocate, 4 bytes padding (0xAA here), u64 TotalRefs, u64 ZeroRefs}. */
static const uint8_t LOH_COMPACT[] = {
    0x00, 0x00, 0x02, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0xaa, 0xaa, 0xaa, 0xaa,
    0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x01, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x0a, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x1e, 0x00, 0x00, 0x00, 0xaa, 0xaa, 0xaa, 0xaa,
    0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

/* One BulkType (packed) with one type: TypeID 0x7000, ModuleID 0x1000, TypeNameID 5, Flags 6,
 * CorElementType 0x12, Name "T", one type parameter 0x7001. */
static size_t bulk_type(uint8_t *p) {
    static const uint8_t b[] = {
        0x01, 0x00, 0x00, 0x00, 0x00, 0x00,                                     /* Count 1, ClrInstanceID 0 */
        0x00, 0x70, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x05, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00, 0x12, 'T', 0x00, 0x00, 0x00,
        0x01, 0x00, 0x00, 0x00, 0x01, 0x70, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    memcpy(p, b, sizeof b);
    return sizeof b;
}

START_TEST(events_newer_than_the_fixture) {
    char *trace = path_of("newer.nettrace");
    pgo_trace *t = pgo_trace_open(trace);
    static const uint8_t start[] = {1, 0x34, 0x12, 0, 0, 0, 0, 0, 0, 0, 0};     /* MonitorWait, 0x1234, 0 */
    static const uint8_t stop[] = {0, 0};
    static const uint8_t sampled[] = {1, 0, 0, 0, 0, 0,                          /* Large, ClrInstanceID 0 */
                                      0x00, 0x70, 0, 0, 0, 0, 0, 0,              /* TypeID 0x7000 */
                                      'T', 0, '[', 0, ']', 0, 0, 0,              /* TypeName "T[]" */
                                      0x00, 0x10, 0, 0, 0, 0, 0, 0,              /* Address 0x1000 */
                                      0x80, 0x38, 0x01, 0, 0, 0, 0, 0,           /* ObjectSize 80000 */
                                      0x10, 0, 0, 0, 0, 0, 0, 0};                /* SampledByteOffset 16 */
    pgo_trace_event(t, 301, 0, start, sizeof start);
    pgo_trace_event(t, 302, 0, stop, sizeof stop);
    pgo_trace_event(t, 303, 0, sampled, sizeof sampled);
    pgo_trace_close(t);
    run_tool_result r;
    ck_assert_int_eq(run_tool((const char *[]){tool(), "dump", "--json", trace, NULL}, NULL, &r), 0);
    ck_assert_msg(r.status == 0 && r.err_len == 0, "%d %.2000s", r.status, r.err);
    ck_assert_msg(strstr(r.out, "\"name\":\"WaitHandleWaitStart\",\"task\":\"WaitHandleWait\",\"opcode\":\"Start\"") &&
                      strstr(r.out, "\"fields\":{\"WaitSource\":1,\"AssociatedObjectID\":4660,\"ClrInstanceID\":0}") &&
                      strstr(r.out, "\"maps\":{\"WaitSource\":\"MonitorWait\"}"),
                  "%.3000s", r.out);
    ck_assert_msg(strstr(r.out, "\"name\":\"WaitHandleWaitStop\"") &&
                      strstr(r.out, "\"fields\":{\"ClrInstanceID\":0}"), "%.3000s", r.out);
    ck_assert_msg(strstr(r.out, "\"name\":\"AllocationSampled\"") &&
                      strstr(r.out, "\"fields\":{\"AllocationKind\":1,\"ClrInstanceID\":0,\"TypeID\":28672,"
                                    "\"TypeName\":\"T[]\",\"Address\":4096,\"ObjectSize\":80000,"
                                    "\"SampledByteOffset\":16}"),
                  "%.3000s", r.out);
    run_tool_free(&r);
    ck_assert_int_eq(run_tool((const char *[]){tool(), "stats", "--json", trace, NULL}, NULL, &r), 0);
    ck_assert_msg(r.status == 0 && strstr(r.out, "\"errors\":[]") && strstr(r.out, "\"decode_errors\":0"),
                  "%.3000s", r.out);
    run_tool_free(&r);
    free(trace);
}
END_TEST

START_TEST(gc_fit_bucket_info_and_loh_compact_aligned_bulk_type_packed) {
    char *trace = path_of("layouts.nettrace");
    pgo_trace *t = pgo_trace_open(trace);
    ck_assert_uint_eq(sizeof FIT_BUCKETS, 78); /* the payload size of the decode error */
    pgo_trace_event(t, 209, 0, FIT_BUCKETS, sizeof FIT_BUCKETS);
    ck_assert_uint_eq(sizeof LOH_COMPACT, 68); /* the payload size of a real two-heap event */
    pgo_trace_event(t, 208, 0, LOH_COMPACT, sizeof LOH_COMPACT);
    uint8_t p[128];
    pgo_trace_event(t, 15, 0, p, bulk_type(p));
    pgo_trace_close(t);

    run_tool_result r;
    ck_assert_int_eq(run_tool((const char *[]){tool(), "dump", "--json", trace, NULL}, NULL, &r), 0);
    ck_assert_msg(r.status == 0 && r.err_len == 0, "%d %.2000s", r.status, r.err);
    ck_assert_msg(strstr(r.out, "\"name\":\"GCFitBucketInfo\"") != NULL, "%.3000s", r.out);
    ck_assert_msg(strstr(r.out, "\"fields\":{\"ClrInstanceID\":0,\"BucketKind\":1,\"TotalSize\":5480,\"Count\":4,"
                                "\"Values\":[{\"Index\":0,\"Count\":7,\"Size\":936},"    /* 0x3a8 */
                                "{\"Index\":1,\"Count\":3,\"Size\":1040},"                 /* 0x410 */
                                "{\"Index\":2,\"Count\":1,\"Size\":848},"                  /* 0x350 */
                                "{\"Index\":4,\"Count\":1,\"Size\":2656}]}") != NULL,      /* 0xa60 */
                  "%.3000s", r.out);
    ck_assert_uint_eq(936 + 1040 + 848 + 2656, 0x1568); /* the sizes add up to TotalSize */
    ck_assert_msg(strstr(r.out, "\"name\":\"GCLOHCompact\"") != NULL, "%.3000s", r.out);
    ck_assert_msg(strstr(r.out, "\"fields\":{\"ClrInstanceID\":0,\"Count\":2,"
                                "\"Values\":[{\"TimePlan\":1,\"TimeCompact\":2,\"TimeRelocate\":3,"
                                "\"TotalRefs\":81684111829661576,\"ZeroRefs\":5},"     /* 0x0122334455667788 */
                                "{\"TimePlan\":10,\"TimeCompact\":20,\"TimeRelocate\":30,"
                                "\"TotalRefs\":40,\"ZeroRefs\":0}]}") != NULL,
                  "%.3000s", r.out);
    ck_assert_msg(strstr(r.out, "\"Values\":[{\"TypeID\":28672,\"ModuleID\":4096,\"TypeNameID\":5,\"Flags\":6,"
                                "\"CorElementType\":18,\"Name\":\"T\",\"TypeParameterCount\":1,"
                                "\"TypeParameters\":[28673]}]") != NULL,
                  "%.3000s", r.out);
    run_tool_free(&r);

    ck_assert_int_eq(run_tool((const char *[]){tool(), "stats", "--json", trace, NULL}, NULL, &r), 0);
    ck_assert_msg(r.status == 0, "%d %.2000s", r.status, r.err);
    ck_assert_msg(strstr(r.out, "\"errors\":[]") != NULL, "%.3000s", r.out);
    ck_assert_msg(strstr(r.out, "\"Microsoft-Windows-DotNETRuntime/209/v0\":1") != NULL, "%.3000s", r.out);
    ck_assert_msg(strstr(r.out, "\"Microsoft-Windows-DotNETRuntime/208/v0\":1") != NULL, "%.3000s", r.out);
    run_tool_free(&r);
    free(trace);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("clr_layouts");
    TCase *tc = tcase_create("layouts");
    tcase_add_test(tc, gc_fit_bucket_info_and_loh_compact_aligned_bulk_type_packed);
    tcase_add_test(tc, events_newer_than_the_fixture);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
