/* test_clretwall_model.c - the registration tables and nettrace metadata that mantra-gen generates
 * (at build time, see tests/clr/CMakeLists.txt) from the .NET runtime's ClrEtwAll.man
 * ($MANTRA_SHARED_DIR/fixtures/manifests/ClrEtwAll-coreclr-2019.man).
 *
 * Expected values were read from the manifest XML itself: provider GUIDs, event ids, versions,
 * levels, keyword masks, task and opcode values, and template fields.
 */
#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "check_main.h"
#include "mantra/event.h"
#include "ClrEtwAll_coreclr_2019_registry.h"
#include "ClrEtwAll_coreclr_2019_writers.h"

#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* nettrace TypeCodes (System.TypeCode) */
enum { TC_BOOLEAN = 3, TC_SBYTE = 5, TC_BYTE = 6, TC_INT16 = 7, TC_UINT16 = 8, TC_INT32 = 9,
       TC_UINT32 = 10, TC_INT64 = 11, TC_UINT64 = 12, TC_SINGLE = 13, TC_DOUBLE = 14,
       TC_DATETIME = 16, TC_GUID = 17, TC_STRING = 18 };

/* ---- a parser for the metadata blob ------------------------------------------------------ */

#define MAX_MD_FIELDS 64
#define MAX_NAME 128

typedef struct md_field {
    int32_t typecode;
    char name[MAX_NAME];
} md_field;

typedef struct md_event {
    int32_t id;
    char name[MAX_NAME];
    int64_t keywords;
    int32_t version;
    int32_t level;
    int32_t field_count;
    md_field fields[MAX_MD_FIELDS];
    bool has_opcode;
    uint8_t opcode;
} md_event;

typedef struct md_reader {
    const uint8_t *p;
    size_t size;
    size_t pos;
    bool ok;
} md_reader;

static uint64_t md_le(md_reader *r, size_t n) {
    uint64_t v = 0;
    if (!r->ok || r->size - r->pos < n) {
        r->ok = false;
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)r->p[r->pos + i] << (8 * i);
    r->pos += n;
    return v;
}

static int32_t md_i32(md_reader *r) {
    uint32_t u = (uint32_t)md_le(r, 4);
    int32_t v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* A NUL-terminated UTF-16LE name; the names in ClrEtwAll are ASCII, anything else fails. */
static void md_name(md_reader *r, char *out) {
    size_t n = 0;
    for (;;) {
        uint16_t u = (uint16_t)md_le(r, 2);
        if (!r->ok)
            return;
        if (u == 0)
            break;
        if (u >= 0x80 || n + 1 >= MAX_NAME) {
            r->ok = false;
            return;
        }
        out[n++] = (char)u;
    }
    out[n] = '\0';
}

/* EventId, EventName, Keywords, Version, Level, field count, fields (TypeCode + name), then the
 * optional tags (here only the Opcode tag: int32 size 1, uint8 kind 1, uint8 opcode). Returns
 * false unless the whole blob parses exactly. */
static bool md_parse(const uint8_t *blob, size_t size, md_event *out) {
    md_reader r = {blob, size, 0, true};
    memset(out, 0, sizeof *out);
    out->id = md_i32(&r);
    md_name(&r, out->name);
    uint64_t kw = md_le(&r, 8);
    memcpy(&out->keywords, &kw, sizeof kw);
    out->version = md_i32(&r);
    out->level = md_i32(&r);
    out->field_count = md_i32(&r);
    if (!r.ok || out->field_count < 0 || out->field_count > MAX_MD_FIELDS)
        return false;
    for (int32_t i = 0; i < out->field_count; i++) {
        out->fields[i].typecode = md_i32(&r);
        md_name(&r, out->fields[i].name);
    }
    while (r.ok && r.pos < r.size) {
        int32_t tag_size = md_i32(&r);
        uint8_t kind = (uint8_t)md_le(&r, 1);
        if (!r.ok || kind != 1 || tag_size != 1 || out->has_opcode)
            return false;
        out->has_opcode = true;
        out->opcode = (uint8_t)md_le(&r, 1);
    }
    return r.ok && r.pos == r.size;
}

/* ---- lookups ------------------------------------------------------------------------------ */

static const mantra_provider_desc *provider_named(const char *name) {
    for (size_t i = 0; i < MANTRA_CLRETWALL_CORECLR_2019_PROVIDER_COUNT; i++)
        if (strcmp(mantra_ClrEtwAll_coreclr_2019_providers[i]->name, name) == 0)
            return mantra_ClrEtwAll_coreclr_2019_providers[i];
    return NULL;
}

static const mantra_event_desc *event_named(const mantra_provider_desc *p, const char *symbol) {
    const mantra_event_desc *found = NULL;
    for (uint32_t i = 0; i < p->event_count; i++) {
        if (strcmp(p->events[i].symbol, symbol) == 0) {
            ck_assert_msg(found == NULL, "symbol %s twice in %s", symbol, p->name);
            found = &p->events[i];
        }
    }
    ck_assert_msg(found != NULL, "no event %s in %s", symbol, p->name);
    return found;
}

typedef struct expect_field {
    const char *name;
    int32_t typecode;
} expect_field;

typedef struct expect_event {
    const char *provider;
    const char *symbol;
    const char *name;
    uint32_t id;
    uint8_t version, level, opcode;
    uint16_t task;
    uint64_t keywords;
    uint16_t template_fields;           /* desc->field_count */
    bool partial;                       /* MANTRA_EVENT_PARTIAL_METADATA */
    size_t md_fields;                   /* fields the metadata describes */
    const expect_field *fields;
} expect_event;

static void check_event(const expect_event *x) {
    const mantra_provider_desc *p = provider_named(x->provider);
    ck_assert_ptr_nonnull(p);
    const mantra_event_desc *d = event_named(p, x->symbol);
    ck_assert_str_eq(d->name, x->name);
    ck_assert_uint_eq(d->id, x->id);
    ck_assert_uint_eq(d->version, x->version);
    ck_assert_uint_eq(d->level, x->level);
    ck_assert_uint_eq(d->keywords, x->keywords);
    ck_assert_uint_eq(d->opcode, x->opcode);
    ck_assert_uint_eq(d->task, x->task);
    ck_assert_uint_eq(d->field_count, x->template_fields);
    ck_assert_uint_eq(d->flags & MANTRA_EVENT_STACK, MANTRA_EVENT_STACK);
    ck_assert_uint_eq((d->flags & MANTRA_EVENT_PARTIAL_METADATA) != 0, x->partial);

    ck_assert_ptr_nonnull(d->metadata);
    md_event md;
    ck_assert_msg(md_parse(d->metadata, d->metadata_size, &md), "%s: metadata does not parse", x->symbol);
    ck_assert_int_eq(md.id, (int32_t)x->id);
    ck_assert_str_eq(md.name, x->name);
    ck_assert_int_eq(md.keywords, (int64_t)x->keywords);
    ck_assert_int_eq(md.version, x->version);
    ck_assert_int_eq(md.level, x->level);
    ck_assert_int_eq(md.field_count, (int32_t)x->md_fields);
    for (size_t i = 0; i < x->md_fields; i++) {
        ck_assert_str_eq(md.fields[i].name, x->fields[i].name);
        ck_assert_msg(md.fields[i].typecode == x->fields[i].typecode, "%s.%s: TypeCode %d, expected %d",
                      x->symbol, x->fields[i].name, md.fields[i].typecode, x->fields[i].typecode);
    }
    ck_assert_int_eq(md.has_opcode, x->opcode != 0);
    if (x->opcode != 0)
        ck_assert_uint_eq(md.opcode, x->opcode);
}

/* ---- tests -------------------------------------------------------------------------------- */

START_TEST(four_providers_416_events) {
    ck_assert_int_eq(MANTRA_CLRETWALL_CORECLR_2019_PROVIDER_COUNT, 4);
    ck_assert_uint_eq(NELEMS(mantra_ClrEtwAll_coreclr_2019_providers), 4);
    static const struct {
        const mantra_provider_desc *provider;
        const mantra_event_desc *events;
        const mantra_event_state *states;
        size_t table_size;
        const char *name, *prefix;
        mantra_guid guid;
        uint32_t events_expected;
    } want[4] = {
        {&mantra_DotNETRuntime_provider, mantra_DotNETRuntime_events, mantra_DotNETRuntime_states,
         NELEMS(mantra_DotNETRuntime_events), "Microsoft-Windows-DotNETRuntime", "DotNETRuntime",
         {0xe13c0d23u, 0xccbcu, 0x4e12u, {0x93, 0x1b, 0xd9, 0xcc, 0x2e, 0xee, 0x27, 0xe4}}, 184},
        {&mantra_DotNETRuntimeRundown_provider, mantra_DotNETRuntimeRundown_events,
         mantra_DotNETRuntimeRundown_states, NELEMS(mantra_DotNETRuntimeRundown_events),
         "Microsoft-Windows-DotNETRuntimeRundown", "DotNETRuntimeRundown",
         {0xa669021cu, 0xc450u, 0x4609u, {0xa0, 0x35, 0x5a, 0xf5, 0x9a, 0xf4, 0xdf, 0x18}}, 46},
        {&mantra_DotNETRuntimeStress_provider, mantra_DotNETRuntimeStress_events,
         mantra_DotNETRuntimeStress_states, NELEMS(mantra_DotNETRuntimeStress_events),
         "Microsoft-Windows-DotNETRuntimeStress", "DotNETRuntimeStress",
         {0xcc2bcbbau, 0x16b6u, 0x4cf3u, {0x89, 0x90, 0xd7, 0x4c, 0x2e, 0x8a, 0xf5, 0x00}}, 3},
        {&mantra_DotNETRuntimePrivate_provider, mantra_DotNETRuntimePrivate_events,
         mantra_DotNETRuntimePrivate_states, NELEMS(mantra_DotNETRuntimePrivate_events),
         "Microsoft-Windows-DotNETRuntimePrivate", "DotNETRuntimePrivate",
         {0x763fd754u, 0x7086u, 0x4dfeu, {0x95, 0xeb, 0xc0, 0x1a, 0x46, 0xfa, 0xf4, 0xca}}, 183},
    };
    uint32_t total = 0;
    for (size_t i = 0; i < 4; i++) {
        const mantra_provider_desc *p = mantra_ClrEtwAll_coreclr_2019_providers[i];
        ck_assert_ptr_eq(p, want[i].provider);
        ck_assert_str_eq(p->name, want[i].name);
        ck_assert_str_eq(p->prefix, want[i].prefix);
        ck_assert_uint_eq(p->guid.data1, want[i].guid.data1);
        ck_assert_uint_eq(p->guid.data2, want[i].guid.data2);
        ck_assert_uint_eq(p->guid.data3, want[i].guid.data3);
        ck_assert(memcmp(p->guid.data4, want[i].guid.data4, 8) == 0);
        ck_assert_ptr_eq(p->events, want[i].events);
        ck_assert_ptr_eq(p->states, want[i].states);
        ck_assert_uint_eq(p->event_count, want[i].events_expected);
        ck_assert_uint_eq(want[i].table_size, want[i].events_expected);
        total += p->event_count;
    }
    ck_assert_uint_eq(total, 416);
}
END_TEST

/* Every event of every provider: a unique symbol and (id, version), and metadata that parses
 * exactly and agrees with its descriptor. */
START_TEST(every_event_is_consistent) {
    uint32_t total = 0, partial = 0, without_fields = 0;
    for (size_t pi = 0; pi < MANTRA_CLRETWALL_CORECLR_2019_PROVIDER_COUNT; pi++) {
        const mantra_provider_desc *p = mantra_ClrEtwAll_coreclr_2019_providers[pi];
        for (uint32_t i = 0; i < p->event_count; i++) {
            const mantra_event_desc *d = &p->events[i];
            total++;
            ck_assert_ptr_nonnull(d->name);
            ck_assert_ptr_nonnull(d->symbol);
            ck_assert_uint_le(d->level, 5);
            ck_assert_uint_le(d->id, 65535);
            /* the symbol is the name, or the name plus _V<version> */
            size_t nl = strlen(d->name);
            ck_assert_msg(strncmp(d->symbol, d->name, nl) == 0, "%s/%s", d->symbol, d->name);
            for (uint32_t j = 0; j < i; j++) {
                ck_assert_msg(strcmp(p->events[j].symbol, d->symbol) != 0, "%s twice", d->symbol);
                ck_assert_msg(p->events[j].id != d->id || p->events[j].version != d->version,
                              "%s: (id %u, version %u) also %s", p->name, d->id, d->version, p->events[j].symbol);
            }
            md_event md;
            ck_assert_msg(md_parse(d->metadata, d->metadata_size, &md), "%s: metadata does not parse", d->symbol);
            ck_assert_int_eq(md.id, (int32_t)d->id);
            ck_assert_str_eq(md.name, d->name);
            ck_assert_int_eq(md.keywords, (int64_t)d->keywords);
            ck_assert_int_eq(md.version, d->version);
            ck_assert_int_eq(md.level, d->level);
            ck_assert_int_eq(md.has_opcode, d->opcode != 0);
            if (md.has_opcode)
                ck_assert_uint_eq(md.opcode, d->opcode);
            if (d->flags & MANTRA_EVENT_PARTIAL_METADATA) {
                ck_assert_int_lt(md.field_count, d->field_count);
                partial++;
            } else {
                ck_assert_int_eq(md.field_count, d->field_count);
            }
            if (d->field_count == 0)
                without_fields++;
            for (int32_t f = 0; f < md.field_count; f++) {
                int32_t tc = md.fields[f].typecode;
                ck_assert_msg(tc == TC_BOOLEAN || (tc >= TC_SBYTE && tc <= TC_DOUBLE) || tc == TC_DATETIME ||
                                  tc == TC_GUID || tc == TC_STRING,
                              "%s.%s: TypeCode %d", d->symbol, md.fields[f].name, tc);
                ck_assert_msg(md.fields[f].name[0] != '\0', "%s: field %d has no name", d->symbol, f);
            }
        }
    }
    ck_assert_uint_eq(total, 416);
    /* ClrEtwAll: 22 events have no template; 44 Private events use the empty template Startup and
     * GCPerHeapHistory v2 the empty template GCPerHeapHistory */
    ck_assert_uint_eq(without_fields, 22 + 44 + 1);
    ck_assert_uint_gt(partial, 0);
}
END_TEST

START_TEST(method_load_verbose_v2) {
    static const expect_field fields[] = {
        {"MethodID", TC_UINT64},        {"ModuleID", TC_UINT64},      {"MethodStartAddress", TC_UINT64},
        {"MethodSize", TC_UINT32},      {"MethodToken", TC_UINT32},   {"MethodFlags", TC_UINT32},
        {"MethodNamespace", TC_STRING}, {"MethodName", TC_STRING},    {"MethodSignature", TC_STRING},
        {"ClrInstanceID", TC_UINT16},   {"ReJITID", TC_UINT64},
    };
    static const expect_event x = {"Microsoft-Windows-DotNETRuntime", "MethodLoadVerbose_V2", "MethodLoadVerbose",
                                   143, 2, 4, 37, 9, 0x30, 11, false, NELEMS(fields), fields};
    check_event(&x);
    /* and the generated index constant points at it */
    ck_assert_str_eq(mantra_DotNETRuntime_events[MANTRA_DotNETRuntime_EVENT_MethodLoadVerbose_V2].symbol,
                     "MethodLoadVerbose_V2");
}
END_TEST

/* A rundown event (task CLRMethodRundown = 1, opcode MethodDCEndVerbose = 40). */
START_TEST(rundown_method_dc_end_verbose_v1) {
    static const expect_field fields[] = {
        {"MethodID", TC_UINT64},        {"ModuleID", TC_UINT64},      {"MethodStartAddress", TC_UINT64},
        {"MethodSize", TC_UINT32},      {"MethodToken", TC_UINT32},   {"MethodFlags", TC_UINT32},
        {"MethodNamespace", TC_STRING}, {"MethodName", TC_STRING},    {"MethodSignature", TC_STRING},
        {"ClrInstanceID", TC_UINT16},
    };
    static const expect_event x = {"Microsoft-Windows-DotNETRuntimeRundown", "MethodDCEndVerbose_V1",
                                   "MethodDCEndVerbose", 144, 1, 4, 40, 1, 0x30, 10, false, NELEMS(fields), fields};
    check_event(&x);
}
END_TEST

/* An event without a template: GCRestartEEEnd v0 (opcode 132 of task GarbageCollection). */
START_TEST(no_template_gc_restart_ee_end) {
    static const expect_event x = {"Microsoft-Windows-DotNETRuntime", "GCRestartEEEnd", "GCRestartEEEnd",
                                   3, 0, 4, 132, 1, 0x1, 0, false, 0, NULL};
    check_event(&x);
}
END_TEST

/* The Private provider's GCPerHeapHistory v2 (symbol without _V2) has an empty template. */
START_TEST(empty_template_gc_per_heap_history) {
    static const expect_event x = {"Microsoft-Windows-DotNETRuntimePrivate", "GCPerHeapHistory", "GCPerHeapHistory",
                                   4, 2, 4, 17, 1, 0x1, 0, false, 0, NULL};
    check_event(&x);
    /* the writer takes no argument */
    int (*writer)(void) = mantra_DotNETRuntimePrivate_GCPerHeapHistory_write;
    ck_assert(writer != NULL);
}
END_TEST

/* Counted arrays end the described fields: MethodILToNativeMap (level Verbose) describes its first
 * four fields and is flagged as partial. */
START_TEST(partial_method_il_to_native_map) {
    static const expect_field fields[] = {
        {"MethodID", TC_UINT64}, {"ReJITID", TC_UINT64}, {"MethodExtent", TC_BYTE}, {"CountOfMapEntries", TC_UINT16},
    };
    static const expect_event x = {"Microsoft-Windows-DotNETRuntime", "MethodILToNativeMap", "MethodILToNativeMap",
                                   190, 0, 5, 87, 9, 0x20000, 7, true, NELEMS(fields), fields};
    check_event(&x);
}
END_TEST

/* The Stress provider: no keywords, opcode win:Start (1); an AnsiString ends the described fields. */
START_TEST(stress_log_event_v1) {
    static const expect_field fields[] = {{"Facility", TC_UINT32}, {"LogLevel", TC_BYTE}};
    static const expect_event x = {"Microsoft-Windows-DotNETRuntimeStress", "StressLogEvent_V1", "StressLogEvent",
                                   0, 1, 4, 1, 1, 0x0, 4, true, NELEMS(fields), fields};
    check_event(&x);
}
END_TEST

/* Registration: every provider once (twice is harmless), and a listener enables every event. */
START_TEST(register_and_enable) {
    ck_assert_int_eq(mantra_ClrEtwAll_coreclr_2019_register(), 0);
    ck_assert_int_eq(mantra_ClrEtwAll_coreclr_2019_register(), 0);
    mantra_set_listener(NULL, NULL);
    ck_assert(!MANTRA_DotNETRuntime_MethodLoadVerbose_V2_enabled());
    ck_assert(!MANTRA_DotNETRuntimeRundown_MethodDCEndVerbose_V1_enabled());
    for (size_t pi = 0; pi < MANTRA_CLRETWALL_CORECLR_2019_PROVIDER_COUNT; pi++) {
        const mantra_provider_desc *p = mantra_ClrEtwAll_coreclr_2019_providers[pi];
        for (uint32_t i = 0; i < p->event_count; i++)
            ck_assert_uint_eq(atomic_load(&p->states[i].enabled), 0);
    }
}
END_TEST

static void count_events(void *ctx, const mantra_event_desc *desc, const uint8_t *payload, size_t size) {
    (void)desc;
    (void)payload;
    (void)size;
    (*(unsigned *)ctx)++;
}

START_TEST(listener_enables_every_event) {
    static unsigned seen;
    ck_assert_int_eq(mantra_ClrEtwAll_coreclr_2019_register(), 0);
    mantra_set_listener(count_events, &seen);
    for (size_t pi = 0; pi < MANTRA_CLRETWALL_CORECLR_2019_PROVIDER_COUNT; pi++) {
        const mantra_provider_desc *p = mantra_ClrEtwAll_coreclr_2019_providers[pi];
        for (uint32_t i = 0; i < p->event_count; i++)
            ck_assert_msg(atomic_load(&p->states[i].enabled) != 0, "%s not enabled", p->events[i].symbol);
    }
    ck_assert(MANTRA_DotNETRuntime_MethodLoadVerbose_V2_enabled());
    ck_assert(MANTRA_DotNETRuntimePrivate_GCPerHeapHistory_enabled());
    ck_assert_int_eq(mantra_DotNETRuntimePrivate_GCPerHeapHistory_write(), MANTRA_WRITE_OK);
    ck_assert_uint_eq(seen, 1);
    mantra_set_listener(NULL, NULL);
    ck_assert(!MANTRA_DotNETRuntime_MethodLoadVerbose_V2_enabled());
    ck_assert_int_eq(mantra_DotNETRuntimePrivate_GCPerHeapHistory_write(), MANTRA_WRITE_DISABLED);
    ck_assert_uint_eq(seen, 1);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("clretwall-model");
    TCase *tc = tcase_create("model");
    tcase_add_test(tc, four_providers_416_events);
    tcase_add_test(tc, every_event_is_consistent);
    tcase_add_test(tc, method_load_verbose_v2);
    tcase_add_test(tc, rundown_method_dc_end_verbose_v1);
    tcase_add_test(tc, no_template_gc_restart_ee_end);
    tcase_add_test(tc, empty_template_gc_per_heap_history);
    tcase_add_test(tc, partial_method_il_to_native_map);
    tcase_add_test(tc, stress_log_event_v1);
    tcase_add_test(tc, register_and_enable);
    tcase_add_test(tc, listener_enables_every_event);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
