/* mantra pgo (tools/mantra/pgo*.c): crafted traces written with pgo_trace.c into the build tree
 * ($MANTRA_PGO_TEST_DIR); exact JSON, text and stderr. Rules checked: dotnet-pgo's reassembly
 * (pgo-format.md §5: duplicate, out-of-order and post-final chunks discard the method, a later
 * chunk 0 starts afresh, incomplete methods are counted), multi-chunk data over 40,000 bytes, merging
 * of two traces (§8), --check, --top, bad payloads, truncated and unreadable traces, usage errors,
 * and event 298 with empty metadata decoded by `mantra dump` with its Data (the registry's partial
 * description completed by the manifest). */
#define _POSIX_C_SOURCE 200809L

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "gen/run_tool.h"
#include "tools/pgo_cli.h"
#include "tools/pgo_trace.h"

static char *path_of(const char *name) { return pgo_cli_path("build/tests/tools/pgo-convert", name); }

static void run(run_tool_result *r, const char *const *args) { pgo_cli_run(r, args); }

/* "PATH" + suffix in a new string. */
static char *with(const char *path, const char *suffix) {
    char *s = malloc(strlen(path) + strlen(suffix) + 1);
    ck_assert_ptr_nonnull(s);
    strcpy(s, path);
    strcat(s, suffix);
    return s;
}

static char *slurp(const char *path) {
    size_t n;
    char *s = run_tool_read_file(path, &n);
    ck_assert_msg(s != NULL, "%s", path);
    return s;
}

/* `mantra pgo TRACE -o JSON --format json`, which must succeed; the JSON document. */
static char *convert_json(run_tool_result *r, const char *trace, const char *json) {
    run(r, (const char *[]){trace, "-o", json, "--format", "json", NULL});
    ck_assert_msg(r->status == 0, "%.3000s", r->err);
    return slurp(json);
}

static const mantra_guid GUID_A = {0x11223344, 0x5566, 0x7788, {1, 2, 3, 4, 5, 6, 7, 8}};
#define BB MANTRA_PGO_BasicBlockIntCount
/* The JSON stats' "unnamed_by" object of a profile without unnamed handles. */
#define UNNAMED_NONE                                                                                      \
    "\"unnamed_by\":{\"type_unknown\":0,\"type_nameless\":0,\"type_depth\":0,\"method_no_details\":0,"     \
    "\"method_nameless\":0,\"mibc_token\":0,\"image_unknown\":0,\"image_cell\":0}"

/* The module of every crafted method: app.dll, module 0x1000, assembly 0x2000. */
static pgo_trace *open_app(const char *path) {
    pgo_trace *t = pgo_trace_open(path);
    pgo_trace_module(t, 0x1000, 0x2000, "/app/app.dll", &GUID_A);
    pgo_trace_assembly(t, 0x2000, "app, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null");
    return t;
}

static void two_blocks(pgo_trace *t, uint64_t id, uint32_t token, const char *name, int64_t a, int64_t b) {
    mantra_pgo_schema s[] = {{BB, 0, 1, 0}, {BB, 12, 1, 0}};
    int64_t v[] = {a, b};
    pgo_trace_method(t, id, 0x1000, token, "Ns.C", name, "int32 (int32)", s, 2, v, 2);
}

#define JSON_HEAD(tok, name, runs)                                                                         \
    "{\"module\":\"app\",\"module_path\":\"/app/app.dll\",\"pdb_guid\":\"11223344-5566-7788-0102-030405060708\"," \
    "\"token\":" tok ",\"namespace\":\"Ns.C\",\"name\":\"" name "\",\"signature\":\"int32 (int32)\",\"il_size\":0,"  \
    "\"runs\":" runs ",\"type\":null,\"method_args\":[],\"records\":["
#define REC(il, v) "{\"kind\":65,\"kind_name\":\"BasicBlockIntCount\",\"il_offset\":" il ",\"count\":1,\"other\":0,\"values\":[" v "]}"

START_TEST(chunk_rules_as_dotnet_pgo) {
    char *trace = path_of("rules.nettrace"), *json = path_of("rules.json");
    pgo_trace *t = open_app(trace);
    static const uint8_t blob[] = {0x0c, 0x80, 0x82, 0x02, 0x0a, 0x04, 0xbf, 0x7f}; /* BB IL 0 count 5 */
    /* A: one final chunk: kept */
    pgo_trace_chunk(t, 0, 0x80000000u, 0xA, 0x1000, 0x06000001, "Ns.C", "A", "void ()", blob, sizeof blob);
    /* B: chunk 0 twice (duplicate): discarded; its final chunk 1 then has no chunk 0: discarded again */
    pgo_trace_chunk(t, 0, 0, 0xB, 0x1000, 0x06000002, "Ns.C", "B", "void ()", blob, 4);
    pgo_trace_chunk(t, 0, 0, 0xB, 0x1000, 0x06000002, "Ns.C", "B", "void ()", blob, 4);
    pgo_trace_chunk(t, 0, 0x80000001u, 0xB, 0x1000, 0x06000002, "Ns.C", "B", "void ()", blob + 4, 4);
    /* C: a chunk after its final chunk: discarded */
    pgo_trace_chunk(t, 0, 0x80000000u, 0xC, 0x1000, 0x06000003, "Ns.C", "C", "void ()", blob, sizeof blob);
    pgo_trace_chunk(t, 0, 0x80000001u, 0xC, 0x1000, 0x06000003, "Ns.C", "C", "void ()", blob, sizeof blob);
    /* D: chunk 1 first (out of order): discarded; then a fresh chunk 0 + final chunk 1: kept */
    pgo_trace_chunk(t, 0, 0x80000001u, 0xD, 0x1000, 0x06000004, "Ns.C", "D", "void ()", blob + 4, 4);
    pgo_trace_chunk(t, 0, 0, 0xD, 0x1000, 0x06000004, "Ns.C", "D", "void ()", blob, 4);
    pgo_trace_chunk(t, 0, 0x80000001u, 0xD, 0x1000, 0x06000004, "Ns.C", "D", "void ()", blob + 4, 4);
    /* E: never finished: incomplete */
    pgo_trace_chunk(t, 0, 0, 0xE, 0x1000, 0x06000005, "Ns.C", "E", "void ()", blob, 4);
    /* F: the same MethodID on another ClrInstanceID is another method: kept */
    pgo_trace_chunk(t, 1, 0x80000000u, 0xA, 0x1000, 0x06000006, "Ns.C", "F", "void ()", blob, sizeof blob);
    pgo_trace_close(t);

    run_tool_result r;
    char *out = convert_json(&r, trace, json);
    ck_assert_msg(strstr(out, "\"stats\":{\"traces\":1,\"truncated_traces\":0,\"unreadable_traces\":0,\"profiles\":0,\"events\":11,"
                              "\"bad_payloads\":0,\"chunks_dropped\":6,\"discard_out_of_order\":3,"
                              "\"discard_after_final\":1,\"incomplete\":1,\"undecodable\":0,\"methods_read\":3,"
                              "\"methods\":3,\"merged\":0,\"merge_conflicts\":0,\"handles\":0,\"handles_unnamed\":0," UNNAMED_NONE "}}\n") != NULL,
                  "%.3000s", out);
    /* completion order: A, D, F */
    const char *a = strstr(out, "\"name\":\"A\""), *f = strstr(out, "\"name\":\"F\""), *d = strstr(out, "\"name\":\"D\"");
    ck_assert_msg(a && f && d && a < d && d < f && !strstr(out, "\"name\":\"B\"") && !strstr(out, "\"name\":\"C\""),
                  "%.3000s", out);
    ck_assert_msg(strstr(r.err, "rules.nettrace: offset ") && strstr(r.err, ": event #4: method 0xb: chunk 0 is out of order: "
                                                                     "the method's data is discarded (dotnet-pgo's rule)"),
                  "%.3000s", r.err);
    ck_assert_msg(strstr(r.err, "method 0xc: chunk 1 comes after the final chunk"), "%.3000s", r.err);
    ck_assert_msg(strstr(r.err, "rules.nettrace: 1 method without a final chunk: not converted\n"), "%.3000s", r.err);
    ck_assert_msg(strstr(r.err, "mantra pgo: 3 methods from 1 trace (11 instrumentation events, 3 methods read, 0 merged); "
                                "dropped: 3 out of order, 1 after the final chunk (6 chunks), 1 incomplete, 0 bad payloads, "
                                "0 undecodable; 0 merge conflicts; 0 of 0 handles unnamed\n"),
                  "%.3000s", r.err);
    run_tool_free(&r);
    free(out);
    free(trace);
    free(json);
}
END_TEST

START_TEST(multi_chunk_method) {
    char *trace = path_of("big.nettrace"), *json = path_of("big.json");
    enum { N = 12000 };
    mantra_pgo_schema *s = malloc(N * sizeof *s);
    int64_t *v = malloc(N * sizeof *v);
    int64_t sum = 0;
    for (int i = 0; i < N; i++) {
        s[i] = (mantra_pgo_schema){BB, i * 3, 1, 0};
        v[i] = (i % 2) ? 100000 + i : 7; /* alternating: large deltas, 5-byte integers */
        sum += v[i];
    }
    int64_t size = mantra_pgo_encode(s, N, v, N, NULL, 0);
    ck_assert_int_gt(size, 80000); /* three chunks */
    pgo_trace *t = open_app(trace);
    pgo_trace_method(t, 0x77, 0x1000, 0x06000077, "Ns.C", "Big", "void ()", s, N, v, N);
    pgo_trace_close(t);
    run_tool_result r;
    char *out = convert_json(&r, trace, json);
    ck_assert_msg(strstr(out, "\"events\":3,") && strstr(out, "\"methods_read\":1,") && strstr(out, "\"chunks_dropped\":0,"),
                  "%.300s", out);
    /* every record and value came back */
    int64_t got = 0;
    size_t records = 0;
    for (const char *p = out; (p = strstr(p, "\"values\":[")) != NULL; p++) {
        got += strtoll(p + 10, NULL, 10);
        records++;
    }
    ck_assert_uint_eq(records, N);
    ck_assert_int_eq(got, sum);
    ck_assert_msg(strstr(out, REC("35997", "111999") "]}") != NULL, "last record");
    run_tool_free(&r);
    free(out);
    free(s);
    free(v);
    free(trace);
    free(json);
}
END_TEST

START_TEST(two_traces_merge) {
    char *t1 = path_of("m1.nettrace"), *t2 = path_of("m2.nettrace"), *json = path_of("m.json"),
         *txt = path_of("m.txt");
    pgo_trace *t = open_app(t1);
    two_blocks(t, 0x10, 0x06000001, "Loop", 5, 1000);
    two_blocks(t, 0x11, 0x06000002, "Only1", 1, 2);
    pgo_trace_close(t);
    t = open_app(t2); /* another run: other MethodIDs and ModuleIDs, same module identity */
    two_blocks(t, 0x90, 0x06000001, "Loop", 7, 4294967295); /* FourByte sums saturate */
    {
        /* a record that matches nothing is appended; Version max; NumRuns sum */
        mantra_pgo_schema s[] = {{BB, 0, 1, 0}, {MANTRA_PGO_EdgeIntCount, 0, 1, 12}, {MANTRA_PGO_Version, 0, 1, 3}};
        int64_t v[] = {2, 9};
        pgo_trace_method(t, 0x91, 0x1000, 0x06000003, "Ns.C", "Only2", "int32 (int32)", s, 3, v, 2);
        pgo_trace_method(t, 0x92, 0x1000, 0x06000002, "Ns.C", "Only1", "int32 (int32)", s, 3, v, 2);
    }
    pgo_trace_close(t);
    run_tool_result r;
    run(&r, (const char *[]){t1, t2, "-o", json, "--format", "json", NULL});
    ck_assert_int_eq(r.status, 0);
    char *out = slurp(json);
    const char *expect =
        "{\"methods\":[\n" JSON_HEAD("100663297", "Loop", "2") REC("0", "12") "," REC("12", "4294967295")
        ",{\"kind\":320,\"kind_name\":\"NumRuns\",\"il_offset\":0,\"count\":1,\"other\":2}]},\n" JSON_HEAD("100663298", "Only1", "2")
            REC("0", "3") /* a merged method's records in canonical order: ILOffset, kind, Other */
        ",{\"kind\":385,\"kind_name\":\"EdgeIntCount\",\"il_offset\":0,\"count\":1,\"other\":12,\"values\":[9]},"
            REC("12", "2")
        ",{\"kind\":256,\"kind_name\":\"Version\",\"il_offset\":0,\"count\":1,\"other\":3}"
        ",{\"kind\":320,\"kind_name\":\"NumRuns\",\"il_offset\":0,\"count\":1,\"other\":2}]},\n" JSON_HEAD("100663299", "Only2", "1")
            REC("0", "2") ",{\"kind\":385,\"kind_name\":\"EdgeIntCount\",\"il_offset\":0,\"count\":1,\"other\":12,\"values\":[9]}"
        ",{\"kind\":256,\"kind_name\":\"Version\",\"il_offset\":0,\"count\":1,\"other\":3}]}\n"
        "],\"stats\":{\"traces\":2,\"truncated_traces\":0,\"unreadable_traces\":0,\"profiles\":0,\"events\":5,\"bad_payloads\":0,"
        "\"chunks_dropped\":0,\"discard_out_of_order\":0,\"discard_after_final\":0,\"incomplete\":0,\"undecodable\":0,"
        "\"methods_read\":5,\"methods\":3,\"merged\":2,\"merge_conflicts\":0,\"handles\":0,\"handles_unnamed\":0," UNNAMED_NONE "}}\n";
    ck_assert_str_eq(out, expect);
    run_tool_free(&r);
    free(out);

    /* the text profile parses back with --check */
    run(&r, (const char *[]){t1, t2, "-o", txt, NULL});
    ck_assert_int_eq(r.status, 0);
    run_tool_free(&r);
    out = slurp(txt);
    const char *head =
                          "*** START PGO Data, max index = 3 ***\n"
                          "@@@ codehash 0x00000000 methodhash 0x00000000 ilSize 0x00000000 records 0x00000003\n"
                          "MethodName: Ns.C.Loop\nSignature: int32 (int32)\n"
                          "Schema InstrumentationKind 65 ILOffset 0 Count 1 Other 0\n12\n"
                          "Schema InstrumentationKind 65 ILOffset 12 Count 1 Other 0\n4294967295\n"
                          "Schema InstrumentationKind 320 ILOffset 0 Count 1 Other 2\nNone\n@@@ ";
    ck_assert_msg(strncmp(out, head, strlen(head)) == 0,
                  "%.3000s", out);
    free(out);
    run(&r, (const char *[]){"--check", txt, NULL});
    ck_assert_int_eq(r.status, 0);
    char *want = with(txt, ": 3 methods, 0 errors, 1 lines skipped\n");
    ck_assert_str_eq(r.out, want);
    free(want);
    run_tool_free(&r);

    /* --top on the traces and on the profile */
    run(&r, (const char *[]){"--top", "2", t1, t2, NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.out, "rank     block count  method (module, token) / hottest blocks: IL offset, count\n"
                            "   1      4294967307  Ns.C.Loop (app, 0x06000001)\n"
                            "          4294967295    IL_000c\n"
                            "                  12    IL_0000\n"
                            "   2               5  Ns.C.Only1 (app, 0x06000002)\n"
                            "                   3    IL_0000\n"
                            "                   2    IL_000c\n");
    run_tool_free(&r);
    run(&r, (const char *[]){"--top", "1", txt, NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.out, "   1      4294967307  Ns.C.Loop (") != NULL, "%.3000s", r.out);
    run_tool_free(&r);
    free(t1);
    free(t2);
    free(json);
    free(txt);
}
END_TEST

START_TEST(check_reports_located_errors) {
    char *bad = path_of("bad.txt");
    FILE *f = fopen(bad, "w");
    ck_assert_ptr_nonnull(f);
    fputs("*** START PGO Data, max index = 1 ***\n"
          "@@@ codehash 0x00000001 methodhash 0x00000002 ilSize 0x00000003 records 0x00000001\n"
          "MethodName: a.b\nSignature: x\n"
          "Schema InstrumentationKind 65 ILOffset 0 Count 1 Other 0\n"
          "notanumber\n*** END PGO Data ***\n",
          f);
    fclose(f);
    run_tool_result r;
    run(&r, (const char *[]){"--check", bad, NULL});
    ck_assert_int_eq(r.status, 1);
    char *prefix = with(bad, ":6: ");
    ck_assert_msg(strncmp(r.err, prefix, strlen(prefix)) == 0, "%.3000s", r.err);
    free(prefix);
    run_tool_free(&r);
    free(bad);
}
END_TEST

START_TEST(bad_payloads_counted_never_crash) {
    char *small = path_of("bad.nettrace"), *trace = path_of("garbage.nettrace"), *json = path_of("garbage.json");
    pgo_trace *t = open_app(small);
    static const uint8_t short_payload[] = {0, 0, 0, 0, 0x80, 0xFF, 0, 0, 0}; /* ends inside MethodID */
    pgo_trace_event(t, 298, 0, short_payload, sizeof short_payload);
    static const uint8_t junk[] = {0x0c, 0xFF, 0xFF, 0xFF}; /* a final chunk that does not decode */
    pgo_trace_chunk(t, 0, 0x80000000u, 0x5, 0x1000, 0x06000005, "Ns.C", "Junk", "void ()", junk, sizeof junk);
    pgo_trace_close(t);
    run_tool_result r;
    run(&r, (const char *[]){small, "-o", json, "--format", "json", NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.err, ": event #2: JitInstrumentationDataVerbose: bad payload (9 bytes: the payload ends inside "
                                "the fields before Data): ignored\n"),
                  "%.3000s", r.err);
    ck_assert_msg(strstr(r.err, ": event #3: method 0x5: its data (4 bytes) does not decode at byte 1 (MANTRA_ETRUNCATED): "
                                "ignored\n"),
                  "%.3000s", r.err);
    ck_assert_msg(strstr(r.err, "1 bad payloads, 1 undecodable;"), "%.3000s", r.err);
    run_tool_free(&r);

    t = open_app(trace);
    uint64_t x = 88172645463325252ull; /* xorshift: garbage payloads of every event the converter reads */
    static const uint32_t ids[] = {298, 297, 15, 72, 152, 154, 143, 145};
    for (int i = 0; i < 400; i++) {
        uint8_t p[96];
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t n = (size_t)(x % sizeof p);
        for (size_t k = 0; k < n; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            p[k] = (uint8_t)(x >> 24);
        }
        uint32_t id = ids[i % 8];
        pgo_trace_event(t, id, id == 152 ? 2 : (id == 145 || id == 154) ? 1 : 0, p, n);
    }
    two_blocks(t, 0x10, 0x06000001, "Loop", 5, 1000);
    pgo_trace_close(t);
    char *out = convert_json(&r, trace, json);
    ck_assert_msg(strstr(out, "\"name\":\"Loop\"") != NULL, "%.3000s", out);
    ck_assert_msg(strstr(out, "\"bad_payloads\":") && !strstr(out, "\"bad_payloads\":0,"), "%.3000s", out);
    ck_assert_msg(strstr(r.err, "more warnings are only counted (see the summary)\n"), "%.3000s", r.err);
    run_tool_free(&r);
    free(out);
    free(small);
    free(trace);
    free(json);
}
END_TEST

START_TEST(truncated_and_unreadable) {
    char *trace = path_of("cut.nettrace"), *cut = path_of("cut-short.nettrace"), *txt = path_of("cut.txt");
    pgo_trace *t = open_app(trace);
    for (uint32_t i = 0; i < 4000; i++) /* several 64 KB blocks */
        two_blocks(t, 0x100 + i, 0x06000100 + i, "M", i, 1);
    pgo_trace_close(t);
    size_t n;
    char *bytes = run_tool_read_file(trace, &n);
    FILE *f = fopen(cut, "wb");
    fwrite(bytes, 1, n / 2, f);
    fclose(f);
    free(bytes);
    run_tool_result r;
    run(&r, (const char *[]){cut, "-o", txt, NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.err, "cut-short.nettrace: the trace is truncated (offset ") != NULL, "%.3000s", r.err);
    ck_assert_msg(strstr(r.err, "): converting what was complete\n") != NULL, "%.3000s", r.err);
    char *out = slurp(txt);
    unsigned methods = 0;
    ck_assert_int_eq(sscanf(out, "*** START PGO Data, max index = %u ***", &methods), 1);
    ck_assert_msg(methods > 100 && methods < 4000, "%u", methods);
    free(out);
    run_tool_free(&r);

    char *missing = path_of("does-not-exist.nettrace");
    run(&r, (const char *[]){missing, "-o", txt, NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "does-not-exist.nettrace: cannot read the trace: ") != NULL, "%.3000s", r.err);
    run_tool_free(&r);
    /* neither a trace nor a profile (a text profile, JSON or a .mibc would be read as one) */
    char *junk = path_of("junk.bin");
    FILE *j = fopen(junk, "wb");
    fputs("hello, not a trace\n", j);
    fclose(j);
    run(&r, (const char *[]){junk, "-o", cut, NULL});
    ck_assert_int_eq(r.status, 1);
    run_tool_free(&r);
    free(junk);
    free(missing);
    free(trace);
    free(cut);
    free(txt);
}
END_TEST

START_TEST(usage) {
    static const char *const cases[][4] = {
        {NULL}, {"x.nettrace", NULL}, {"--frob", "x", "-o", "y"}, {"x", "-o", "y", "--format"},
        {"--top", "many", "x", NULL}, {"--check", NULL}, {"--check", "a", "b", NULL}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_tool_result r;
        run(&r, cases[i]);
        ck_assert_msg(r.status == 2, "case %zu: %d %s", i, r.status, r.err);
        ck_assert_msg(strstr(r.err, "Try 'mantra pgo --help'.\n") != NULL, "case %zu: %s", i, r.err);
        run_tool_free(&r);
    }
    run_tool_result r;
    run(&r, (const char *[]){"--help", NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strncmp(r.out, "Usage: mantra pgo ", 18) == 0, "%.3000s", r.out);
    run_tool_free(&r);
}
END_TEST

/* JitInstrumentationData (297) has no names: they come from MethodLoadVerbose (143) of the same
 * MethodID, the IL size from MethodJittingStarted (145). */
static size_t put_utf16(uint8_t *p, const char *s) {
    size_t n = 0;
    for (; *s; s++) {
        p[n++] = (uint8_t)*s;
        p[n++] = 0;
    }
    p[n++] = 0;
    p[n++] = 0;
    return n;
}

/* The test payloads below are laid out by hand from ClrEtwAll.man's templates, independently of the
 * generated readers the converter uses. PUT appends a value's bytes to p at n. */
#define PUT(v) (memcpy(p + n, &(v), sizeof(v)), n += sizeof(v))

/* A final-chunk JitInstrumentationData (297) of method carrying blob; its size. */
static size_t event_297(uint8_t *p, uint64_t method, const uint8_t *blob, uint32_t size) {
    size_t n = 0;
    uint16_t clr = 0;
    uint32_t flags = 0x80000000u;
    PUT(clr), PUT(flags), PUT(size), PUT(method);
    memcpy(p + n, blob, size);
    return n + size;
}

/* The fields of MethodLoadVerbose / MethodDC*Verbose V0 (MethodID .. MethodSignature, signature
 * "void ()"); the size. Versions 1 and 2 append ClrInstanceID, then ReJITID. */
static size_t method_verbose(uint8_t *p, uint64_t method, uint32_t token, const char *ns, const char *name) {
    size_t n = 0;
    uint64_t module = 0x1000, start = 0x9000;
    uint32_t msize = 10, mflags = 8;
    PUT(method), PUT(module), PUT(start), PUT(msize), PUT(token), PUT(mflags);
    n += put_utf16(p + n, ns);
    n += put_utf16(p + n, name);
    n += put_utf16(p + n, "void ()");
    return n;
}

START_TEST(event_297_named_by_method_events) {
    char *trace = path_of("e297.nettrace"), *json = path_of("e297.json");
    pgo_trace *t = open_app(trace);
    static const uint8_t blob[] = {0x0c, 0x80, 0x82, 0x02, 0x0a, 0x04, 0xbf, 0x7f};
    uint8_t p[256];
    uint16_t clr = 0;
    uint64_t method = 0x42, module = 0x1000;
    uint32_t token = 0x06000042, il = 28;
    pgo_trace_event(t, 297, 0, p, event_297(p, method, blob, sizeof blob));
    size_t n = method_verbose(p, method, token, "Ns.C", "Named"); /* MethodLoadVerbose V1 */
    PUT(clr);
    pgo_trace_event(t, 143, 1, p, n);
    n = 0; /* MethodJittingStarted V1 */
    PUT(method), PUT(module), PUT(token), PUT(il);
    n += put_utf16(p + n, "Ns.C");
    n += put_utf16(p + n, "Named");
    n += put_utf16(p + n, "void ()");
    PUT(clr);
    pgo_trace_event(t, 145, 1, p, n);
    pgo_trace_close(t);
    run_tool_result r;
    char *out = convert_json(&r, trace, json);
    ck_assert_msg(strstr(out, "{\"module\":\"app\",\"module_path\":\"/app/app.dll\",\"pdb_guid\":\"11223344-5566-7788-0102-"
                              "030405060708\",\"token\":100663362,\"namespace\":\"Ns.C\",\"name\":\"Named\",\"signature\":"
                              "\"void ()\",\"il_size\":28,\"runs\":1,\"type\":null,\"method_args\":[],\"records\":[" REC("0", "5") "]}") != NULL,
                  "%.3000s", out);
    run_tool_free(&r);
    free(out);
    free(trace);
    free(json);
}
END_TEST

/* Every version the runtime writes: a rundown MethodDCEndVerbose V1 (no ReJITID; manifest/dotnet.yaml
 * declares only V2, so the built-in runtime data's reader reads it, as real .NET traces need) names a
 * 297 method. A naming event that does not fit its template (a ModuleLoad V2 cut inside its PDB
 * fields, a MethodLoadVerbose V2 with a byte after ReJITID) is warned about with its place, counted in
 * the summary and ignored; a version newer than every manifest's (MethodLoadVerbose V3 with a field
 * appended) is read by the newest reader. */
START_TEST(naming_events_of_every_version) {
    char *trace = path_of("versions.nettrace"), *json = path_of("versions.json");
    pgo_trace *t = open_app(trace);
    static const uint8_t blob[] = {0x0c, 0x80, 0x82, 0x02, 0x0a, 0x04, 0xbf, 0x7f};
    uint8_t p[256];
    uint16_t clr = 0;
    uint32_t zero = 0;
    uint64_t module2 = 0x1001, rejit = 0;
    pgo_trace_event(t, 297, 0, p, event_297(p, 0x42, blob, sizeof blob));
    pgo_trace_event(t, 297, 0, p, event_297(p, 0x43, blob, sizeof blob));
    size_t n = method_verbose(p, 0x42, 0x06000042, "Ns.Rundown", "FromV1"); /* MethodDCEndVerbose V1 */
    PUT(clr);
    pgo_trace_rundown_event(t, 144, 1, p, n);
    n = method_verbose(p, 0x43, 0x06000043, "Ns.Bad", "Trailing"); /* V2 with a byte too many: does not fit */
    PUT(clr), PUT(rejit);
    p[n++] = 0x55;
    pgo_trace_event(t, 143, 2, p, n);
    n = 0; /* ModuleLoad V2 of 0x1001 cut after its native path */
    PUT(module2), PUT(module2), PUT(zero), PUT(zero);
    n += put_utf16(p + n, "/app/cut.dll");
    n += put_utf16(p + n, "");
    pgo_trace_event(t, 152, 2, p, n);
    size_t cut = n;
    n = method_verbose(p, 0x43, 0x06000043, "Ns.New", "FromV3"); /* V3 (newer than any manifest): one field more */
    PUT(clr), PUT(rejit), PUT(zero);
    pgo_trace_event(t, 143, 3, p, n);
    pgo_trace_close(t);
    run_tool_result r;
    char *out = convert_json(&r, trace, json);
    ck_assert_msg(strstr(out, "\"namespace\":\"Ns.Rundown\",\"name\":\"FromV1\"") != NULL, "%.3000s", out);
    ck_assert_msg(strstr(out, "\"namespace\":\"Ns.New\",\"name\":\"FromV3\"") != NULL, "%.3000s", out);
    ck_assert_msg(strstr(out, "Trailing") == NULL, "%.3000s", out);
    char line[256];
    snprintf(line, sizeof line, ": event #%d: Microsoft-Windows-DotNETRuntime/143/v2: the payload (%d bytes) does not fit its "
             "template (bytes after the last field): ignored\n", 5, (int)(8 * 3 + 4 * 3 + 2 * (7 + 9 + 8) + 2 + 8 + 1));
    ck_assert_msg(strstr(r.err, line) != NULL, "%s\n%.3000s", line, r.err);
    snprintf(line, sizeof line, ": event #6: Microsoft-Windows-DotNETRuntime/152/v2: the payload (%zu bytes) does not fit its "
             "template (the payload ends inside a field): ignored\n", cut);
    ck_assert_msg(strstr(r.err, line) != NULL, "%s\n%.3000s", line, r.err);
    ck_assert_msg(strstr(r.err, "\nmantra pgo: 2 module, assembly, method or type events did not fit their template: ignored\n"),
                  "%.3000s", r.err);
    run_tool_free(&r);
    free(out);
    free(trace);
    free(json);
}
END_TEST

/* Handles named as the runtime's dump names them: BulkType names rebuilt assembly-qualified
 * (generic arguments from TypeParameters), a nested type's enclosing type from a method namespace,
 * a method handle from MethodDetails + MethodLoadVerbose; 0 is NULL, 1..33 and unnamed UNKNOWN. */

START_TEST(handles_named_like_the_runtime) {
    char *trace = path_of("handles.nettrace"), *txt = path_of("handles.txt");
    pgo_trace *t = open_app(trace);
    uint8_t p[512];
    size_t n = 0;
    uint16_t clr = 0;
    uint8_t cor = 0x12;
    uint32_t zero = 0, one = 1, count = 3, token = 0x06000010;
    uint64_t list = 0x7000, i32 = 0x7001, inner = 0x7002, module = 0x1000, method = 0xA000;
    PUT(count), PUT(clr); /* BulkType */
    PUT(list), PUT(module), PUT(zero), PUT(zero), PUT(cor);
    n += put_utf16(p + n, "System.Collections.Generic.List`1[System.Int32]");
    PUT(one), PUT(i32);
    PUT(i32), PUT(module), PUT(zero), PUT(zero), PUT(cor);
    n += put_utf16(p + n, "System.Int32");
    PUT(zero);
    PUT(inner), PUT(module), PUT(zero), PUT(zero), PUT(cor);
    n += put_utf16(p + n, "Inner");
    PUT(zero);
    pgo_trace_event(t, 15, 0, p, n);
    n = 0; /* MethodDetails of method 0xA000: type Inner */
    PUT(method), PUT(inner), PUT(token), PUT(zero), PUT(module);
    pgo_trace_event(t, 72, 0, p, n);
    n = method_verbose(p, method, token, "Ns.Outer+Inner", "Run"); /* MethodLoadVerbose V1 of 0xA000 */
    PUT(clr);
    pgo_trace_event(t, 143, 1, p, n);
    mantra_pgo_schema s[] = {{MANTRA_PGO_HandleHistogramIntCount, 5, 1, 0},
                             {MANTRA_PGO_HandleHistogramTypes, 5, 5, 0},
                             {MANTRA_PGO_HandleHistogramMethods, 9, 2, 0}};
    int64_t v[] = {10, 0x7000, 0x7002, 0, 7, 0x7777, 0xA000, 0}; /* 7: an "unknown" handle (1..33) */
    pgo_trace_method(t, 0x50, 0x1000, 0x06000050, "Ns.C", "Calls", "void ()", s, 3, v, 8);
    pgo_trace_close(t);
    run_tool_result r;
    run(&r, (const char *[]){trace, "-o", txt, NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.err, "; 1 of 4 handles unnamed\n") != NULL, "%.3000s", r.err);
    char *out = slurp(txt);
#define APP ", app, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null"
    ck_assert_str_eq(out, "*** START PGO Data, max index = 1 ***\n"
                          "@@@ codehash 0x00000000 methodhash 0x00000000 ilSize 0x00000000 records 0x00000003\n"
                          "MethodName: Ns.C.Calls\nSignature: void ()\n"
                          "Schema InstrumentationKind 177 ILOffset 5 Count 1 Other 0\n10\n"
                          "Schema InstrumentationKind 195 ILOffset 5 Count 5 Other 0\n"
                          "TypeHandle: System.Collections.Generic.List`1[[System.Int32" APP "]]" APP "\n"
                          "TypeHandle: Ns.Outer+Inner" APP "\n"
                          "TypeHandle: NULL\nTypeHandle: UNKNOWN\nTypeHandle: UNKNOWN\n"
                          "Schema InstrumentationKind 196 ILOffset 9 Count 2 Other 0\n"
                          "MethodHandle: Run|@|Ns.Outer+Inner" APP "\n"
                          "MethodHandle: NULL\n"
                          "*** END PGO Data ***\n");
#undef APP
    run_tool_free(&r);
    free(out);
    free(trace);
    free(txt);
}
END_TEST
/* Issue 30 item 1: with dotnet-pgo's keywords (0x1F000080018) BulkType has no names; TypeLoadStop
 * names every type ("Outer+Inner`2<A,B>[]", arguments unqualified in angle brackets) and the handles
 * come out as the runtime's dump writes them: arguments assembly-qualified in double brackets from
 * BulkType's TypeParameters, the modifier of an array, pointer or byref after its element's name,
 * compiler-generated names with angle brackets kept. TypeLoadStop before or after BulkType. What
 * stays unnamed is counted by reason, and the summary says which keyword would have named it. */
START_TEST(handles_named_from_type_loads) {
    char *trace = path_of("typeloads.nettrace"), *txt = path_of("typeloads.txt"), *json = path_of("typeloads.json");
    pgo_trace *t = open_app(trace);
    pgo_trace_type_load(t, 0x8001, "System.Int32");
    pgo_trace_type_load(t, 0x8003, "System.Collections.Generic.Dictionary`2+Entry<System.Int32,System.String>");
    uint8_t p[1024];
    size_t n;
    uint16_t clr = 0;
    const uint64_t entry_args[] = {0x8001, 0x8002}, entry[] = {0x8003}, s_type[] = {0x8006}, i32[] = {0x8001};
    const pgo_trace_type types[] = {
        {0x8001, 0x1000, 0x11, NULL, 0, NULL},
        {0x8002, 0x1000, 0x11, NULL, 0, NULL},
        {0x8003, 0x1000, 0x11, NULL, 2, entry_args},
        {0x8004, 0x1000, 0x11, NULL, 1, entry},  /* Entry<...>[] */
        {0x8005, 0x1000, 0x11, NULL, 1, s_type}, /* Ns.S* */
        {0x8006, 0x1000, 0x11, NULL, 0, NULL},
        {0x8007, 0x1000, 0x11, NULL, 1, s_type}, /* Ns.S& */
        {0x8008, 0x1000, 0x11, NULL, 1, i32},    /* System.Int32[,] */
        {0x8009, 0x1000, 0x11, NULL, 1, i32},    /* Ns.<Gen>d__1`1<System.Int32> */
        {0x800A, 0x1000, 0x11, NULL, 0, NULL},   /* Program+<>c */
        {0x800B, 0x1000, 0x11, NULL, 0, NULL},   /* no TypeLoadStop: unnamed */
    };
    pgo_trace_bulk_types(t, types, sizeof types / sizeof types[0]);
    pgo_trace_type_load(t, 0x8002, "System.String");
    pgo_trace_type_load(t, 0x8004, "System.Collections.Generic.Dictionary`2+Entry<System.Int32,System.String>[]");
    pgo_trace_type_load(t, 0x8005, "Ns.S*");
    pgo_trace_type_load(t, 0x8006, "Ns.S");
    pgo_trace_type_load(t, 0x8007, "Ns.S&");
    pgo_trace_type_load(t, 0x8008, "System.Int32[,]");
    pgo_trace_type_load(t, 0x8009, "Ns.<Gen>d__1`1<System.Int32>");
    pgo_trace_type_load(t, 0x800A, "Program+<>c");
    pgo_trace_type_load(t, 0x8001, "Not.The.First"); /* the first TypeLoadStop of a TypeID wins */
    uint32_t zero = 0, token = 0x06000020;
    uint64_t module = 0x1000;
    uint64_t m_nameless = 0xB001, m_named = 0xB002, t_c = 0x800A, t_entry = 0x8003;
    n = 0; /* MethodDetails: 0xB001 (no method event names it), 0xB002 */
    PUT(m_nameless), PUT(t_c), PUT(token), PUT(zero), PUT(module);
    pgo_trace_event(t, 72, 0, p, n);
    n = 0;
    PUT(m_named), PUT(t_entry), PUT(token), PUT(zero), PUT(module);
    pgo_trace_event(t, 72, 0, p, n);
    n = method_verbose(p, m_named, token, "System.Collections.Generic.Dictionary`2+Entry[System.Int32,System.String]",
                       "Get");
    PUT(clr);
    pgo_trace_event(t, 143, 1, p, n);
    mantra_pgo_schema s[] = {{MANTRA_PGO_HandleHistogramTypes, 5, 11, 0}, {MANTRA_PGO_HandleHistogramMethods, 9, 3, 0}};
    int64_t v[] = {0x8003, 0x8004, 0x8005, 0x8007, 0x8008, 0x8009, 0x800A, 0x800B, 0x800C, 0x8002, 0x8001,
                   0xB000, 0xB001, 0xB002};
    pgo_trace_method(t, 0x50, 0x1000, 0x06000050, "Ns.C", "Calls", "void ()", s, 2, v, 14);
    pgo_trace_close(t);
    run_tool_result r;
    run(&r, (const char *[]){trace, "-o", txt, NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.err, "; 4 of 14 handles unnamed\n"
                                "mantra pgo: 1 handle unnamed: types in no BulkType or TypeLoadStop event (keywords "
                                "Type 0x80000, TypeDiagnostic 0x8000000000)\n"
                                "mantra pgo: 1 handle unnamed: types without a name (keyword TypeDiagnostic "
                                "0x8000000000 for TypeLoadStop, or GCHeapAndTypeNames 0x1000000 for BulkType names)\n"
                                "mantra pgo: 1 handle unnamed: methods without MethodDetails (keyword MethodDiagnostic "
                                "0x4000000000)\n"
                                "mantra pgo: 1 handle unnamed: methods that no MethodLoadVerbose, MethodJittingStarted "
                                "or rundown event names (keyword Jit 0x10)\n") != NULL,
                  "%.3000s", r.err);
    run_tool_free(&r);
    char *out = slurp(txt);
#define APP ", app, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null"
#define ENTRY "System.Collections.Generic.Dictionary`2+Entry[[System.Int32" APP "],[System.String" APP "]]"
    ck_assert_str_eq(out, "*** START PGO Data, max index = 1 ***\n"
                          "@@@ codehash 0x00000000 methodhash 0x00000000 ilSize 0x00000000 records 0x00000002\n"
                          "MethodName: Ns.C.Calls\nSignature: void ()\n"
                          "Schema InstrumentationKind 195 ILOffset 5 Count 11 Other 0\n"
                          "TypeHandle: " ENTRY APP "\n"
                          "TypeHandle: " ENTRY "[]" APP "\n"
                          "TypeHandle: Ns.S*" APP "\n"
                          "TypeHandle: Ns.S&" APP "\n"
                          "TypeHandle: System.Int32[,]" APP "\n"
                          "TypeHandle: Ns.<Gen>d__1`1[[System.Int32" APP "]]" APP "\n"
                          "TypeHandle: Program+<>c" APP "\n"
                          "TypeHandle: UNKNOWN\nTypeHandle: UNKNOWN\n"
                          "TypeHandle: System.String" APP "\n"
                          "TypeHandle: System.Int32" APP "\n"
                          "Schema InstrumentationKind 196 ILOffset 9 Count 3 Other 0\n"
                          "MethodHandle: UNKNOWN\nMethodHandle: UNKNOWN\n"
                          "MethodHandle: Get|@|" ENTRY APP "\n"
                          "*** END PGO Data ***\n");
#undef ENTRY
#undef APP
    free(out);
    out = convert_json(&r, trace, json);
    ck_assert_msg(strstr(out, "\"handles\":14,\"handles_unnamed\":4,\"unnamed_by\":{\"type_unknown\":1,"
                              "\"type_nameless\":1,\"type_depth\":0,\"method_no_details\":1,\"method_nameless\":1,\"mibc_token\":0,\"image_unknown\":0,\"image_cell\":0}}}\n") != NULL,
                  "%.3000s", out);
    run_tool_free(&r);
    free(out);
    free(trace);
    free(txt);
    free(json);
}
END_TEST
#undef PUT

/* Regression (issue 10 item 7): event 298 with the runtime's empty metadata used to be reported as
 * "has bytes after the last field of the registered provider's template", without its Data. */
START_TEST(dump_shows_data_of_event_298) {
    char *trace = path_of("dump298.nettrace");
    pgo_trace *t = pgo_trace_open(trace);
    static const uint8_t blob[] = {0x0c, 0x80, 0x82, 0x02, 0x0a, 0x04, 0xbf, 0x7f};
    pgo_trace_chunk(t, 0, 0x80000000u, 0xA, 0x1000, 0x06000001, "Ns.C", "A", "void ()", blob, sizeof blob);
    pgo_trace_close(t);
    const char *argv[] = {run_tool_env("MANTRA_TOOL", "build/tools/mantra"), "dump", "--json", trace, NULL};
    run_tool_result r;
    ck_assert_int_eq(run_tool(argv, NULL, &r), 0);
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.err, "");
    ck_assert_msg(strstr(r.out, "\"fields\":{\"ClrInstanceID\":0,\"MethodFlags\":2147483648,\"DataSize\":8,\"MethodID\":10,"
                                "\"ModuleID\":4096,\"MethodToken\":100663297,\"MethodNamespace\":\"Ns.C\",\"MethodName\":\"A\","
                                "\"MethodSignature\":\"void ()\",\"Data\":\"0c808202" "0a04bf7f\"},\"field_source\":\"manifest\"") != NULL,
                  "%.3000s", r.out);
    run_tool_free(&r);
    free(trace);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("pgo_convert");
    TCase *tc = tcase_create("pgo_convert");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, chunk_rules_as_dotnet_pgo);
    tcase_add_test(tc, multi_chunk_method);
    tcase_add_test(tc, two_traces_merge);
    tcase_add_test(tc, check_reports_located_errors);
    tcase_add_test(tc, bad_payloads_counted_never_crash);
    tcase_add_test(tc, truncated_and_unreadable);
    tcase_add_test(tc, usage);
    tcase_add_test(tc, dump_shows_data_of_event_298);
    tcase_add_test(tc, event_297_named_by_method_events);
    tcase_add_test(tc, naming_events_of_every_version);
    tcase_add_test(tc, handles_named_like_the_runtime);
    tcase_add_test(tc, handles_named_from_type_loads);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
