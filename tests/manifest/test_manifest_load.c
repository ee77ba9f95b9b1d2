/* The run-time manifest loader on the project's manifests: exact definitions of manifest/dotnet.yaml
 * and tests/golden/alltypes.yaml, lookups, GUIDs (given and derived), maps, memory loads. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "manifest/manifest_test_util.h"
#include "mantra/manifest.h"

static const char *guid_text(const mantra_guid *g) {
    static char buf[37];
    mantra_manifest_guid_format(g, buf);
    return buf;
}

/* ---- GUIDs ------------------------------------------------------------------------------------ */

static const char *derived(const char *name) {
    mantra_guid g;
    ck_assert_int_eq(mantra_manifest_eventsource_guid(name, &g), 0);
    return guid_text(&g);
}

START_TEST(eventsource_guids) {
    /* values from generator/mantra_gen/resolve.py eventsource_guid() */
    ck_assert_str_eq(derived("System.Runtime"), "49592c0f-5a05-516d-aa4b-a64e02026c89");
    ck_assert_str_eq(derived("Microsoft-DotNETCore-EventPipe"), "92f528a6-f5b8-5160-a7ee-b33da7739e29");
    ck_assert_str_eq(derived("Mantra-Test-AllTypes"), "0a7ca70b-5551-5fdf-d974-7080bcdc47e8");
    ck_assert_str_eq(derived(""), "4445ee6c-fd5a-5b15-047a-5866ffa76aa6");
    /* case does not matter */
    ck_assert_str_eq(derived("system.runtime"), "49592c0f-5a05-516d-aa4b-a64e02026c89");
    mantra_guid g;
    ck_assert_int_eq(mantra_manifest_eventsource_guid("bad \xff", &g), -1);
}
END_TEST

START_TEST(guid_parse_and_format) {
    mantra_guid g;
    ck_assert_int_eq(mantra_manifest_guid_parse("{E13C0D23-CCBC-4E12-931B-D9CC2EEE27E4}", &g), 0);
    ck_assert_uint_eq(g.data1, 0xe13c0d23u);
    ck_assert_uint_eq(g.data2, 0xccbcu);
    ck_assert_uint_eq(g.data3, 0x4e12u);
    ck_assert_uint_eq(g.data4[0], 0x93);
    ck_assert_uint_eq(g.data4[7], 0xe4);
    ck_assert_str_eq(guid_text(&g), "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4");
    ck_assert_int_eq(mantra_manifest_guid_parse("e13c0d23-ccbc-4e12-931b-d9cc2eee27e", &g), -1);
    ck_assert_int_eq(mantra_manifest_guid_parse("e13c0d23-ccbc-4e12-931b-d9cc2eee27eg", &g), -1);
    ck_assert_int_eq(mantra_manifest_guid_parse("e13c0d23ccbc-4e12-931b-d9cc2eee27e4a", &g), -1);
    ck_assert_int_eq(mantra_manifest_guid_parse("", &g), -1);
}
END_TEST

/* ---- manifest/dotnet.yaml ------------------------------------------------------------------------ */

START_TEST(dotnet_yaml) {
    mantra_manifest *m = mt_load_file(mt_source_path("manifest/dotnet.yaml"));
    ck_assert_uint_eq(mantra_manifest_provider_count(m), 6);
    ck_assert_uint_eq(mantra_manifest_event_count(m), 45);
    static const struct {
        const char *name, *guid;
        unsigned derived, keywords, maps, templates, events;
    } want[] = {
        {"Microsoft-Windows-DotNETRuntime", "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4", 0, 36, 3, 17, 19},
        {"Microsoft-Windows-DotNETRuntimeRundown", "a669021c-c450-4609-a035-5af59af4df18", 0, 12, 2, 4, 14},
        {"Microsoft-DotNETCore-SampleProfiler", "3c530d44-97ae-513a-1e6d-783e8f8e03a9", 0, 0, 1, 1, 1},
        {"Microsoft-DotNETCore-EventPipe", "92f528a6-f5b8-5160-a7ee-b33da7739e29", 1, 0, 0, 1, 1},
        {"Mantra-Demo", "38e013e8-4f24-548f-e99c-557dba31e3b9", 1, 4, 1, 4, 4},
        {"Mantra-Interp", "7c1ce2ec-07a8-586f-7fde-316f6d2deed7", 1, 2, 1, 2, 6},
    };
    for (uint32_t i = 0; i < 6; i++) {
        const mantra_manifest_provider *p = mantra_manifest_provider_at(m, i);
        ck_assert_str_eq(p->name, want[i].name);
        ck_assert_str_eq(guid_text(&p->guid), want[i].guid);
        ck_assert_uint_eq(p->guid_derived, want[i].derived);
        ck_assert_uint_eq(p->keyword_count, want[i].keywords);
        ck_assert_uint_eq(p->map_count, want[i].maps);
        ck_assert_uint_eq(p->template_count, want[i].templates);
        ck_assert_uint_eq(p->event_count, want[i].events);
        ck_assert_ptr_eq(mantra_manifest_find_provider(m, want[i].name), p);
        ck_assert_ptr_eq(mantra_manifest_find_provider_by_guid(m, &p->guid), p);
    }
    ck_assert_ptr_null(mantra_manifest_provider_at(m, 6));
    ck_assert_ptr_null(mantra_manifest_find_provider(m, "Microsoft-Windows-DotNETRuntimePrivate"));
    mantra_guid zero = {0, 0, 0, {0}};
    ck_assert_ptr_null(mantra_manifest_find_provider_by_guid(m, &zero));

    const mantra_manifest_provider *rt = mantra_manifest_find_provider(m, "Microsoft-Windows-DotNETRuntime");
    const mantra_manifest_event *e = mantra_manifest_find_event(rt, 143, 2);
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e->name, "MethodLoadVerbose");
    ck_assert_str_eq(e->symbol, "MethodLoadVerbose_V2");
    ck_assert_ptr_eq(e->provider, rt);
    ck_assert_uint_eq(e->level, MANTRA_LEVEL_INFORMATIONAL);
    ck_assert_uint_eq(e->keywords, 0x30); /* Jit | NGen */
    ck_assert_uint_eq(e->task, 9);
    ck_assert_str_eq(e->task_name, "CLRMethod");
    ck_assert_uint_eq(e->opcode, 37);
    ck_assert_str_eq(e->opcode_name, "MethodLoadVerbose");
    ck_assert_uint_eq(e->stack, 1);
    ck_assert_str_eq(e->tpl->name, "MethodLoadUnloadVerbose_V2");
    ck_assert_str_eq(mt_fields(e->tpl),
                     "MethodID:UInt64/win:HexInt64, ModuleID:UInt64/win:HexInt64, MethodStartAddress:UInt64/win:HexInt64, "
                     "MethodSize:UInt32/win:HexInt32, MethodToken:UInt32/win:HexInt32, MethodFlags:UInt32=MethodFlagsMap, "
                     "MethodNamespace:UnicodeString, MethodName:UnicodeString, MethodSignature:UnicodeString, "
                     "ClrInstanceID:UInt16, ReJITID:UInt64/win:HexInt64");
    ck_assert_ptr_null(mantra_manifest_find_event(rt, 143, 3));
    ck_assert_ptr_null(mantra_manifest_find_event(rt, 143, 256 + 2));
    ck_assert_ptr_null(mantra_manifest_find_event(rt, 9999, 0));
    ck_assert_ptr_null(mantra_manifest_find_event(NULL, 143, 2));
    /* every event is found by its own (id, version), and the sorted view is sorted */
    for (uint32_t i = 0; i < mantra_manifest_provider_count(m); i++) {
        const mantra_manifest_provider *p = mantra_manifest_provider_at(m, i);
        for (uint32_t j = 0; j < p->event_count; j++) {
            ck_assert_ptr_eq(mantra_manifest_find_event(p, p->events[j].id, p->events[j].version), &p->events[j]);
            if (j > 0) {
                const mantra_manifest_event *a = p->events_by_key[j - 1], *b = p->events_by_key[j];
                ck_assert(a->id < b->id || (a->id == b->id && a->version < b->version));
            }
        }
    }

    const mantra_manifest_map *flags = mantra_manifest_find_map(rt, "MethodFlagsMap");
    ck_assert_ptr_nonnull(flags);
    ck_assert_uint_eq(flags->is_bitmap, 1);
    ck_assert_uint_eq(flags->entry_count, 7);
    ck_assert_str_eq(flags->entries[3].message, "Jitted");
    ck_assert_ptr_null(mantra_manifest_find_map(rt, "NoSuchMap"));
    ck_assert_ptr_eq(mantra_manifest_find_template(rt, "MethodLoadUnloadVerbose_V2"), e->tpl);
    ck_assert_ptr_null(mantra_manifest_find_template(rt, "NoSuchTemplate"));

    const mantra_manifest_provider *sp = mantra_manifest_find_provider(m, "Microsoft-DotNETCore-SampleProfiler");
    const mantra_manifest_event *ts = mantra_manifest_find_event(sp, 0, 0);
    ck_assert_str_eq(ts->tpl->name, "ThreadSample"); /* inline fields: a template named after the symbol */
    ck_assert_str_eq(mt_fields(ts->tpl), "Type:Int32=ThreadSampleTypeMap");
    ck_assert_uint_eq(ts->tpl->fields[0].map->is_bitmap, 0);

    const mantra_manifest_provider *ep = mantra_manifest_find_provider(m, "Microsoft-DotNETCore-EventPipe");
    const mantra_manifest_event *pi = mantra_manifest_find_event(ep, 1, 0);
    ck_assert_uint_eq(pi->stack, 0);
    ck_assert_uint_eq(pi->level, MANTRA_LEVEL_LOG_ALWAYS);
    ck_assert_str_eq(mt_fields(pi->tpl), "CommandLine:UnicodeString, OSInformation:UnicodeString, ArchInformation:UnicodeString");

    ck_assert_uint_eq(mantra_manifest_pgo_kind_count(m), 20);
    const mantra_manifest_pgo_kind *k = mantra_manifest_pgo_kind_at(m, 3);
    ck_assert_str_eq(k->name, "TypeHandle");
    ck_assert_uint_eq(k->value, 3);
    ck_assert_int_eq(k->size, -1);
    ck_assert_ptr_null(mantra_manifest_pgo_kind_at(m, 20));
    ck_assert_uint_gt(mantra_manifest_memory_size(m), 0);
    mantra_manifest_free(m);
}
END_TEST

/* ---- tests/golden/alltypes.yaml ------------------------------------------------------------------------ */

START_TEST(alltypes_yaml) {
    mantra_manifest *m = mt_load_file(mt_source_path("tests/golden/alltypes.yaml"));
    ck_assert_uint_eq(mantra_manifest_provider_count(m), 1);
    ck_assert_uint_eq(mantra_manifest_event_count(m), 11);
    const mantra_manifest_provider *p = mantra_manifest_provider_at(m, 0);
    ck_assert_str_eq(p->name, "Mantra-Test-AllTypes");
    ck_assert_str_eq(guid_text(&p->guid), "0a7ca70b-5551-5fdf-d974-7080bcdc47e8");
    ck_assert_uint_eq(p->guid_derived, 1);
    ck_assert_uint_eq(p->keyword_count, 4);
    ck_assert_str_eq(p->keywords[3].name, "High");
    ck_assert_uint_eq(p->keywords[3].mask, 0x8000000000000000ull);
    ck_assert_uint_eq(p->template_count, 9); /* 8 named + RenamedEvent (inline) */
    ck_assert_uint_eq(p->map_count, 2);

    char *text = mt_describe_events(m);
    /* the same lines tests/manifest/dump_events.py prints from the generator's model */
    ck_assert_str_eq(text,
        "Mantra-Test-AllTypes/1/v0 Scalars Scalars level=4 keywords=0x1 task=7 opcode=11 stack=1 tpl=Scalars: I8:Int8, "
        "U8:UInt8, I16:Int16, U16:UInt16, I32:Int32, U32:UInt32=Flags, I64:Int64, U64:UInt64/win:HexInt64, F32:Float, "
        "F64:Double, B:Boolean, G:GUID, P:Pointer, T:FILETIME, C:UInt8=Color\n"
        "Mantra-Test-AllTypes/2/v0 Strings Strings level=5 keywords=0x8000000000000002 task=0 opcode=10 stack=1 "
        "tpl=Strings: Wide:UnicodeString, Narrow:AnsiString, Wide2:UnicodeString\n"
        "Mantra-Test-AllTypes/2/v1 Strings Strings_V1 level=5 keywords=0x2 task=0 opcode=1 stack=1 tpl=Strings: "
        "Wide:UnicodeString, Narrow:AnsiString, Wide2:UnicodeString\n"
        "Mantra-Test-AllTypes/3/v0 Arrays Arrays level=3 keywords=0x4 task=0 opcode=0 stack=1 tpl=Arrays: N:UInt16, "
        "Values:UInt32[N], Signed:Int64[N], Pair:Double[2], Size:UInt32, Blob:Binary<Size>, Fixed:Binary<4>, "
        "Ptrs:Pointer[N], Ids:GUID[2]\n"
        "Mantra-Test-AllTypes/4/v0 Structs Structs level=0 keywords=0x0 task=0 opcode=0 stack=0 tpl=Structs: "
        "Count:UInt32, Items:struct[Count]{Id:UInt64, Name:UnicodeString, K:UInt8, Sub:UInt32[K]}, After:UInt16\n"
        "Mantra-Test-AllTypes/5/v0 Empty Empty level=1 keywords=0x0 task=0 opcode=0 stack=1 tpl=-: \n"
        "Mantra-Test-AllTypes/6/v0 Renamed RenamedEvent level=2 keywords=0x0 task=0 opcode=0 stack=1 "
        "tpl=RenamedEvent: X:UInt8\n"
        "Mantra-Test-AllTypes/8/v0 Buckets Buckets level=4 keywords=0x0 task=0 opcode=0 stack=1 tpl=Buckets: Kind:UInt16, "
        "Count:UInt16, Values:struct[Count]@c{Index:UInt16, Hits:UInt32, Size:Pointer, Tag:UInt8}\n"
        "Mantra-Test-AllTypes/7/v0 Grown Grown level=4 keywords=0x0 task=0 opcode=0 stack=1 tpl=Grown: A:UInt32, "
        "Label:AnsiString\n"
        "Mantra-Test-AllTypes/7/v1 Grown Grown_V1 level=4 keywords=0x0 task=0 opcode=0 stack=1 tpl=Grown_V1: A:UInt32, "
        "Label:UnicodeString, B:UInt64\n"
        "Mantra-Test-AllTypes/7/v3 Grown Grown_V3 level=4 keywords=0x0 task=0 opcode=0 stack=1 tpl=Grown_V3: A:UInt32, "
        "Label:UnicodeString, B:UInt64, C:UInt16\n");
    free(text);

    /* field details the decoder relies on */
    const mantra_manifest_event *arrays = mantra_manifest_find_event(p, 3, 0);
    const mantra_manifest_field *f = arrays->tpl->fields;
    ck_assert_uint_eq(f[0].slot, 0);                 /* N: named by counts */
    ck_assert_uint_eq(f[4].slot, 1);                 /* Size: named by a length */
    ck_assert_uint_eq(f[1].slot, MANTRA_MANIFEST_NO_SLOT);
    ck_assert_uint_eq(arrays->tpl->slot_count, 2);
    ck_assert_uint_eq(f[1].count_kind, MANTRA_MANIFEST_REF_FIELD);
    ck_assert_uint_eq(f[1].count, 0);
    ck_assert_uint_eq(f[3].count_kind, MANTRA_MANIFEST_REF_FIXED);
    ck_assert_uint_eq(f[3].count, 2);
    ck_assert_uint_eq(f[5].length_kind, MANTRA_MANIFEST_REF_FIELD);
    ck_assert_uint_eq(f[5].length, 4);
    ck_assert_uint_eq(f[6].length_kind, MANTRA_MANIFEST_REF_FIXED);
    ck_assert_uint_eq(f[6].length, 4);
    ck_assert_uint_eq(f[1].size, 4);
    ck_assert_uint_eq(f[7].size, 0); /* Pointer: the trace says */
    ck_assert_uint_eq(f[8].size, 16);
    ck_assert_uint_eq(f[1].line, 58);
    ck_assert_uint_eq(f[1].column, 13);
    const mantra_manifest_event *structs = mantra_manifest_find_event(p, 4, 0);
    const mantra_manifest_field *items = &structs->tpl->fields[1];
    ck_assert_uint_eq(items->type, MANTRA_TYPE_OBJECT);
    ck_assert_uint_eq(items->member_count, 4);
    ck_assert_uint_eq(items->members[3].count_kind, MANTRA_MANIFEST_REF_FIELD);
    ck_assert_uint_eq(items->members[3].count, 2);
    ck_assert_uint_eq(items->members[2].slot, 0);
    ck_assert_uint_eq(structs->tpl->struct_slot_count, 1);
    ck_assert_uint_eq(structs->line, 112);
    ck_assert_uint_eq(items->layout, MANTRA_MANIFEST_LAYOUT_PACKED);
    const mantra_manifest_field *buckets = &mantra_manifest_find_event(p, 8, 0)->tpl->fields[2];
    ck_assert_uint_eq(buckets->type, MANTRA_TYPE_OBJECT);
    ck_assert_uint_eq(buckets->layout, MANTRA_MANIFEST_LAYOUT_C);
    ck_assert_uint_eq(structs->column, 9);

    ck_assert_uint_eq(mantra_manifest_pgo_kind_count(m), 2);
    ck_assert_int_eq(mantra_manifest_pgo_kind_at(m, 1)->size, -1);
    mantra_manifest_free(m);
}
END_TEST

/* ---- maps ------------------------------------------------------------------------------------------ */

START_TEST(map_names) {
    static const char yaml[] =
        "providers:\n"
        "  - name: P\n"
        "    maps:\n"
        "      - name: V\n"
        "        kind: value\n"
        "        entries: [{value: 7, message: Seven}, {value: 0, message: Zero}, {value: 0xffffffffffffffff, message: Max}]\n"
        "      - name: B\n"
        "        kind: bitmap\n"
        "        entries: [{value: 0x4, message: C}, {value: 0x1, message: A}, {value: 0x2, message: B}, {value: 0, message: None}]\n"
        "      - name: E\n"
        "        kind: bitmap\n"
        "        entries: []\n";
    mantra_manifest_error *err = NULL;
    mantra_manifest *m = mantra_manifest_load_memory(yaml, sizeof yaml - 1, "maps.yaml", &err);
    ck_assert_ptr_nonnull(m);
    const mantra_manifest_provider *p = mantra_manifest_provider_at(m, 0);
    const mantra_manifest_map *v = mantra_manifest_find_map(p, "V"), *b = mantra_manifest_find_map(p, "B"),
                              *e = mantra_manifest_find_map(p, "E");
    ck_assert_uint_eq(v->entries[0].value, 0); /* sorted */
    ck_assert_uint_eq(v->entries[2].value, UINT64_MAX);
    ck_assert_str_eq(mantra_manifest_map_lookup(v, 7), "Seven");
    ck_assert_str_eq(mantra_manifest_map_lookup(v, UINT64_MAX), "Max");
    ck_assert_ptr_null(mantra_manifest_map_lookup(v, 8));
    char buf[64];
    ck_assert_uint_eq(mantra_manifest_map_format(v, 0, buf, sizeof buf), 4);
    ck_assert_str_eq(buf, "Zero");
    ck_assert_uint_eq(mantra_manifest_map_format(v, 3, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "");
    ck_assert_uint_eq(mantra_manifest_map_format(b, 0x7, buf, sizeof buf), 5);
    ck_assert_str_eq(buf, "A|B|C");
    ck_assert_uint_eq(mantra_manifest_map_format(b, 0x15, buf, sizeof buf), 8);
    ck_assert_str_eq(buf, "A|C|0x10");
    ck_assert_uint_eq(mantra_manifest_map_format(b, 0, buf, sizeof buf), 4);
    ck_assert_str_eq(buf, "None");
    ck_assert_uint_eq(mantra_manifest_map_format(b, 0x10, buf, sizeof buf), 0);
    ck_assert_uint_eq(mantra_manifest_map_format(e, 1, buf, sizeof buf), 0);
    /* truncation is snprintf-like */
    char small[4];
    ck_assert_uint_eq(mantra_manifest_map_format(b, 0x7, small, sizeof small), 5);
    ck_assert_str_eq(small, "A|B");
    ck_assert_uint_eq(mantra_manifest_map_format(b, 0x7, NULL, 0), 5);
    mantra_manifest_free(m);
}
END_TEST

/* ---- the YAML spelling's conveniences -------------------------------------------------------------- */

START_TEST(spelling_variants) {
    static const char yaml[] =
        "\xef\xbb\xbf# a UTF-8 BOM, numbers as strings and in hex, win: prefixes, nulls as defaults\n"
        "providers:\n"
        "  - name: Spelling\n"
        "    guid: '{0A7CA70B-5551-5FDF-D974-7080BCDC47E8}'\n"
        "    prefix: ~\n"
        "    keywords: [{name: K, mask: '0x10'}]\n"
        "    opcodes: [{name: Op, value: 12}]\n"
        "    tasks: [{name: T, value: '3', opcodes: [{name: Op, value: 20}]}]\n"
        "    templates:\n"
        "      - name: Tpl\n"
        "        fields:\n"
        "          - {name: A, type: win:UInt32}\n"
        "          - {name: B, type: win:Int8, count: 1}\n"
        "          - {name: C, type: UInt8, count: '+3'}\n"
        "          - {name: D, type: Binary, length: A}\n"
        "    events:\n"
        "      - {name: E, id: '0x10', version: 1, level: win:Warning, keywords: [K], task: T, opcode: Op, template: Tpl, stack: 'no'}\n"
        "      - {name: F, id: 17, level: 2, opcode: Op, version: ~, keywords: ~, stack: On}\n"
        "      - {name: G, id: 18, opcode: win:Receive, template: F2, symbol: G}\n"
        "      - {name: H, id: 19, symbol: F2, fields: [{name: X, type: Double}]}\n"
        "pgo_kinds:\n";
    mantra_manifest_error *err = NULL;
    mantra_manifest *m = mantra_manifest_load_memory(yaml, sizeof yaml - 1, "spelling.yaml", &err);
    if (m == NULL) {
        char buf[1024];
        mantra_manifest_error_format(err, buf, sizeof buf);
        ck_abort_msg("%s", buf);
    }
    const mantra_manifest_provider *p = mantra_manifest_provider_at(m, 0);
    ck_assert_str_eq(guid_text(&p->guid), "0a7ca70b-5551-5fdf-d974-7080bcdc47e8");
    ck_assert_uint_eq(p->guid_derived, 0);
    const mantra_manifest_event *e = mantra_manifest_find_event(p, 16, 1);
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e->symbol, "E_V1");
    ck_assert_uint_eq(e->level, 3);
    ck_assert_uint_eq(e->keywords, 0x10);
    ck_assert_uint_eq(e->task, 3);
    ck_assert_uint_eq(e->opcode, 20); /* the task's own opcode wins over the provider's */
    ck_assert_uint_eq(e->stack, 0);
    ck_assert_str_eq(mt_fields(e->tpl), "A:UInt32, B:Int8, C:UInt8[3], D:Binary<A>");
    const mantra_manifest_event *f = mantra_manifest_find_event(p, 17, 0);
    ck_assert_uint_eq(f->level, 2);
    ck_assert_uint_eq(f->opcode, 12); /* provider opcode */
    ck_assert_uint_eq(f->stack, 1);
    ck_assert_ptr_null(f->tpl);
    ck_assert_ptr_null(f->task_name);
    const mantra_manifest_event *g = mantra_manifest_find_event(p, 18, 0);
    ck_assert_uint_eq(g->opcode, 240);
    ck_assert_str_eq(g->opcode_name, "win:Receive");
    ck_assert_str_eq(g->tpl->name, "F2"); /* an inline template, named by another event */
    ck_assert_ptr_eq(g->tpl, mantra_manifest_find_event(p, 19, 0)->tpl);
    ck_assert_uint_eq(mantra_manifest_pgo_kind_count(m), 0);
    mantra_manifest_free(m);
}
END_TEST

START_TEST(utf16_input) {
    /* "providers: [{name: P}]\n" in UTF-16LE with a BOM */
    static const char text[] = "providers: [{name: P\xc3\xbc}]\n";
    uint8_t buf[128];
    size_t n = 0;
    buf[n++] = 0xff;
    buf[n++] = 0xfe;
    for (size_t i = 0; text[i]; i++) {
        unsigned c = (unsigned char)text[i];
        if (c == 0xc3) {
            c = 0xfc; /* ü */
            i++;
        }
        buf[n++] = (uint8_t)c;
        buf[n++] = 0;
    }
    mantra_manifest *m = mantra_manifest_load_memory(buf, n, NULL, NULL);
    ck_assert_ptr_nonnull(m);
    ck_assert_str_eq(mantra_manifest_provider_at(m, 0)->name, "P\xc3\xbc");
    mantra_manifest_free(m);
}
END_TEST

START_TEST(missing_file) {
    mantra_manifest_error *err = NULL;
    ck_assert_ptr_null(mantra_manifest_load_file("/nonexistent/dir/x.yaml", &err));
    char buf[256];
    mantra_manifest_error_format(err, buf, sizeof buf);
    ck_assert_str_eq(buf, "/nonexistent/dir/x.yaml:1:1: error: cannot read the file: No such file or directory");
    ck_assert_str_eq(mantra_manifest_error_file(err), "/nonexistent/dir/x.yaml");
    ck_assert_uint_eq(mantra_manifest_error_line(err), 1);
    ck_assert_uint_eq(mantra_manifest_error_column(err), 1);
    ck_assert_ptr_null(mantra_manifest_error_note(err));
    /* the formatted length is returned even when the buffer is small */
    char small[8];
    ck_assert_uint_eq(mantra_manifest_error_format(err, small, sizeof small), strlen(buf));
    ck_assert_str_eq(small, "/nonexi");
    mantra_manifest_error_free(err);
    /* no error object asked for */
    ck_assert_ptr_null(mantra_manifest_load_file("/nonexistent/dir/x.yaml", NULL));
    ck_assert_ptr_null(mantra_manifest_load_memory(NULL, 3, NULL, NULL));
    mantra_manifest_error_free(NULL);
    mantra_manifest_free(NULL);
    ck_assert_int_eq(mantra_manifest_supported(), 1);
}
END_TEST

START_TEST(type_names) {
    ck_assert_str_eq(mantra_manifest_type_name(MANTRA_TYPE_SBYTE), "Int8");
    ck_assert_str_eq(mantra_manifest_type_name(MANTRA_TYPE_DATETIME), "FILETIME");
    ck_assert_str_eq(mantra_manifest_type_name(MANTRA_TYPE_OBJECT), "struct");
    ck_assert_str_eq(mantra_manifest_type_name(0), "?");
    ck_assert_str_eq(mantra_manifest_type_name(99), "?");
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("manifest_load");
    TCase *tc = tcase_create("load");
    tcase_add_test(tc, eventsource_guids);
    tcase_add_test(tc, guid_parse_and_format);
    tcase_add_test(tc, dotnet_yaml);
    tcase_add_test(tc, alltypes_yaml);
    tcase_add_test(tc, map_names);
    tcase_add_test(tc, spelling_variants);
    tcase_add_test(tc, utf16_input);
    tcase_add_test(tc, missing_file);
    tcase_add_test(tc, type_names);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
