/* Invalid manifests: the loader's exact `FILE:LINE:COL: error: MESSAGE` (and `note:` line, as
 * mantra-gen prints it), one case each. The expected texts are the first diagnostic the Python
 * generator (generator/mantra_gen load + validate) gives for the same input, so both loaders word
 * and locate problems alike. Also: nothing leaks and nothing aborts on any of them (ASan build). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "manifest/manifest_test_util.h"
#include "mantra/manifest.h"

typedef struct bad_case {
    const char *name;
    const char *text;
    const char *want;
} bad_case;

static const bad_case CASES[] = {
    {"syntax_unclosed_flow",
        "providers:\n"
        "  - name: [unclosed\n",
        "bad.yaml:3:1: error: YAML syntax error: did not find expected ',' or ']'\n"
        "bad.yaml:3:1: note: while parsing a flow sequence (started at line 2, column 11)"},
    {"syntax_bad_indent",
        "providers:\n"
        "  - name: P\n"
        "   events: x\n",
        "bad.yaml:3:4: error: YAML syntax error: did not find expected '-' indicator\n"
        "bad.yaml:3:4: note: while parsing a block collection (started at line 2, column 3)"},
    {"empty_file",
        "",
        "bad.yaml:1:1: error: an empty file is not a manifest"},
    {"comments_only",
        "# nothing here\n",
        "bad.yaml:1:1: error: an empty file is not a manifest"},
    {"root_sequence",
        "- a\n"
        "- b\n",
        "bad.yaml:1:1: error: expected a mapping for manifest, got a sequence"},
    {"unknown_top_key",
        "providers: [{name: P}]\n"
        "extra: 1\n",
        "bad.yaml:2:1: error: unknown key 'extra' in manifest\n"
        "bad.yaml:2:1: note: valid keys: providers, pgo_kinds"},
    {"missing_provider_name",
        "providers:\n"
        "  - guid: e13c0d23-ccbc-4e12-931b-d9cc2eee27e4\n",
        "bad.yaml:2:5: error: missing key 'name' in provider"},
    {"duplicate_key",
        "providers:\n"
        "  - name: P\n"
        "    name: Q\n",
        "bad.yaml:3:5: error: duplicate key 'name' in provider\n"
        "bad.yaml:3:5: note: first given at line 2"},
    {"no_providers",
        "providers: []\n",
        "bad.yaml:1:12: error: expected at least one provider in 'providers'"},
    {"providers_null",
        "providers:\n"
        "pgo_kinds: []\n",
        "bad.yaml:1:11: error: expected at least one provider in 'providers'"},
    {"bad_integer",
        "providers:\n"
        "  - name: P\n"
        "    events:\n"
        "      - {name: E, id: abc}\n",
        "bad.yaml:4:23: error: expected an integer for 'id', got 'abc'"},
    {"octal_is_decimal_not_bad",
        "providers:\n"
        "  - name: P\n"
        "    events:\n"
        "      - {name: E, id: 1:30}\n",
        "bad.yaml:4:23: error: expected an integer for 'id', got '1:30'"},
    {"unknown_field_type",
        "providers:\n"
        "  - name: P\n"
        "    templates:\n"
        "      - name: T\n"
        "        fields:\n"
        "          - {name: A, type: UInt128}\n",
        "bad.yaml:6:29: error: unknown field type 'UInt128'\n"
        "bad.yaml:6:29: note: valid types: Int8, UInt8, Int16, UInt16, Int32, UInt32, Int64, UInt64, Float, Double, Boolean, GUID, Pointer, FILETIME, UnicodeString, AnsiString, Binary, struct (scalar types also with 'win:')"},
    {"win_struct",
        "providers:\n"
        "  - name: P\n"
        "    templates:\n"
        "      - name: T\n"
        "        fields:\n"
        "          - {name: A, type: win:struct, count: 2}\n",
        "bad.yaml:6:29: error: unknown field type 'win:struct'\n"
        "bad.yaml:6:29: note: valid types: Int8, UInt8, Int16, UInt16, Int32, UInt32, Int64, UInt64, Float, Double, Boolean, GUID, Pointer, FILETIME, UnicodeString, AnsiString, Binary, struct (scalar types also with 'win:')"},
    {"unknown_level",
        "providers:\n"
        "  - name: P\n"
        "    events:\n"
        "      - {name: E, id: 1, level: Loud}\n",
        "bad.yaml:4:33: error: unknown level 'Loud'\n"
        "bad.yaml:4:33: note: valid levels: LogAlways, Critical, Error, Warning, Informational, Verbose (with or without 'win:'), or a number 0..5"},
    {"level_out_of_range",
        "providers:\n"
        "  - name: P\n"
        "    events:\n"
        "      - {name: E, id: 1, level: 7}\n",
        "bad.yaml:4:33: error: level 7 is out of range 0..5\n"
        "bad.yaml:4:33: note: valid levels: LogAlways, Critical, Error, Warning, Informational, Verbose (with or without 'win:'), or a number 0..5"},
    {"event_id_out_of_range",
        "providers:\n"
        "  - name: P\n"
        "    events:\n"
        "      - {name: E, id: 0x10000}\n",
        "bad.yaml:4:9: error: id 65536 of event 'E' is out of range 0..65535"},
    {"event_version_out_of_range",
        "providers:\n"
        "  - name: P\n"
        "    events:\n"
        "      - {name: E, id: 1, version: -1}\n",
        "bad.yaml:4:9: error: version -1 of event 'E' is out of range 0..255"},
    {"duplicate_event",
        "providers:\n"
        "  - name: P\n"
        "    events:\n"
        "      - {name: E, id: 1}\n"
        "      - {name: E, id: 1, symbol: E2}\n",
        "bad.yaml:5:9: error: event 'E' (id 1, version 0) is defined twice\n"
        "bad.yaml:5:9: note: first defined at line 4"},
    {"event_reuses_id",
        "providers:\n"
        "  - name: P\n"
        "    events:\n"
        "      - {name: E, id: 1, version: 2}\n"
        "      - {name: F, id: 1, version: 2}\n",
        "bad.yaml:5:9: error: event 'F' (id 1, version 2) reuses the id and version of event 'E'\n"
        "bad.yaml:5:9: note: first defined at line 4"},
    {"count_names_later_field",
        "providers:\n"
        "  - name: P\n"
        "    templates:\n"
        "      - name: T\n"
        "        fields:\n"
        "          - {name: V, type: UInt32, count: N}\n"
        "          - {name: N, type: UInt32}\n",
        "bad.yaml:6:13: error: count 'N' of field 'V' does not name an earlier integer field\n"
        "bad.yaml:6:13: note: 'N' comes after 'V'"},
    {"count_names_string",
        "providers:\n"
        "  - name: P\n"
        "    templates:\n"
        "      - name: T\n"
        "        fields:\n"
        "          - {name: S, type: UnicodeString}\n"
        "          - {name: V, type: UInt32, count: S}\n",
        "bad.yaml:7:13: error: count 'S' of field 'V' does not name an earlier integer field\n"
        "bad.yaml:7:13: note: 'S' has type 'UnicodeString'"},
    {"count_names_array",
        "providers:\n"
        "  - name: P\n"
        "    templates:\n"
        "      - name: T\n"
        "        fields:\n"
        "          - {name: N, type: UInt8}\n"
        "          - {name: A, type: UInt8, count: N}\n"
        "          - {name: B, type: UInt8, count: A}\n",
        "bad.yaml:8:13: error: count 'A' of field 'B' does not name an earlier integer field\n"
        "bad.yaml:8:13: note: 'A' is an array"},
    {"count_undefined",
        "providers:\n"
        "  - name: P\n"
        "    templates:\n"
        "      - name: T\n"
        "        fields:\n"
        "          - {name: V, type: UInt32, count: Nope}\n",
        "bad.yaml:6:13: error: count 'Nope' of field 'V' does not name an earlier integer field"},
    {"count_zero",
        "providers:\n"
        "  - name: P\n"
        "    templates:\n"
        "      - name: T\n"
        "        fields:\n"
        "          - {name: V, type: UInt32, count: 0}\n",
        "bad.yaml:6:13: error: count 0 of field 'V' is out of range\n"
        "bad.yaml:6:13: note: a fixed count is at least 1"},
    {"count_on_string",
        "providers:\n"
        "  - name: P\n"
        "    templates:\n"
        "      - name: T\n"
        "        fields:\n"
        "          - {name: S, type: AnsiString, count: 2}\n",
        "bad.yaml:6:13: error: field 'S' of type 'AnsiString' cannot have a count\n"
        "bad.yaml:6:13: note: arrays of strings and of Binary cannot be written"},
    {"length_on_integer",
        "providers:\n"
        "  - name: P\n"
        "    templates:\n"
        "      - name: T\n"
        "        fields:\n"
        "          - {name: V, type: UInt32, length: 4}\n",
        "bad.yaml:6:13: error: field 'V' of type 'UInt32' cannot have a length\n"
        "bad.yaml:6:13: note: only Binary fields take a length"},
    {"binary_without_length",
        "providers:\n"
        "  - name: P\n"
        "    templates:\n"
        "      - name: T\n"
        "        fields:\n"
        "          - {name: B, type: Binary}\n",
        "bad.yaml:6:13: error: field 'B' of type 'Binary' has no length\n"
        "bad.yaml:6:13: note: give it a length: an earlier integer field or a number"},
    {"count_and_length",
        "providers:\n"
        "  - name: P\n"
        "    templates:\n"
        "      - name: T\n"
        "        fields:\n"
        "          - {name: B, type: Binary, length: 2, count: 2}\n",
        "bad.yaml:6:13: error: field 'B' has both a count and a length"},
    {"nested_struct",
        "providers:\n"
        "  - name: P\n"
        "    templates:\n"
        "      - name: T\n"
        "        fields:\n"
        "          - name: S\n"
        "            type: struct\n"
        "            count: 2\n"
        "            fields:\n"
        "              - {name: I, type: struct, count: 2, fields: [{name: X, type: UInt8}]}\n",
        "bad.yaml:10:17: error: struct 'I' is nested in struct 'S'\n"
        "bad.yaml:10:17: note: a struct cannot contain structs"},
    {"struct_without_count",
        "providers:\n"
        "  - name: P\n"
        "    templates:\n"
        "      - name: T\n"
        "        fields:\n"
        "          - {name: S, type: struct, fields: [{name: X, type: UInt8}]}\n",
        "bad.yaml:6:13: error: struct 'S' has no count\n"
        "bad.yaml:6:13: note: a struct is an array: give it a count (an earlier integer field or a number)"},
    {"struct_count_one",
        "providers:\n"
        "  - name: P\n"
        "    templates:\n"
        "      - name: T\n"
        "        fields:\n"
        "          - {name: S, type: struct, count: 1, fields: [{name: X, type: UInt8}]}\n",
        "bad.yaml:6:13: error: struct 'S' has no count\n"
        "bad.yaml:6:13: note: a struct is an array: give it a count (an earlier integer field or a number)"},
    {"struct_without_fields",
        "providers:\n"
        "  - name: P\n"
        "    templates:\n"
        "      - name: T\n"
        "        fields:\n"
        "          - {name: S, type: struct, count: 2}\n",
        "bad.yaml:6:13: error: struct 'S' has no fields"},
    {"struct_member_count_outside",
        "providers:\n"
        "  - name: P\n"
        "    templates:\n"
        "      - name: T\n"
        "        fields:\n"
        "          - {name: N, type: UInt8}\n"
        "          - name: S\n"
        "            type: struct\n"
        "            count: 2\n"
        "            fields:\n"
        "              - {name: X, type: UInt8, count: N}\n",
        "bad.yaml:11:17: error: count 'N' of field 'X' does not name an earlier integer field\n"
        "bad.yaml:11:17: note: a struct member's count must name a member of the same struct"},
    {"fields_on_scalar",
        "providers:\n"
        "  - name: P\n"
        "    templates:\n"
        "      - name: T\n"
        "        fields:\n"
        "          - {name: A, type: UInt8, fields: []}\n",
        "bad.yaml:6:36: error: only a struct field can have 'fields'\n"
        "bad.yaml:6:36: note: field 'A' has type 'UInt8'"},
    {"field_not_mapping",
        "providers:\n"
        "  - name: P\n"
        "    templates:\n"
        "      - name: T\n"
        "        fields:\n"
        "          - A\n",
        "bad.yaml:6:13: error: expected a mapping for field, got 'A'"},
    {"duplicate_field",
        "providers:\n"
        "  - name: P\n"
        "    templates:\n"
        "      - name: T\n"
        "        fields:\n"
        "          - {name: A, type: UInt8}\n"
        "          - {name: A, type: UInt16}\n",
        "bad.yaml:7:13: error: field 'A' is defined twice in template 'T'\n"
        "bad.yaml:7:13: note: first defined at line 6"},
    {"undefined_map",
        "providers:\n"
        "  - name: P\n"
        "    templates:\n"
        "      - name: T\n"
        "        fields:\n"
        "          - {name: A, type: UInt8, map: M}\n",
        "bad.yaml:6:13: error: undefined map 'M'"},
    {"map_on_string",
        "providers:\n"
        "  - name: P\n"
        "    maps:\n"
        "      - {name: M, kind: value, entries: []}\n"
        "    templates:\n"
        "      - name: T\n"
        "        fields:\n"
        "          - {name: A, type: UnicodeString, map: M}\n",
        "bad.yaml:8:13: error: field 'A' of type 'UnicodeString' cannot have a map\n"
        "bad.yaml:8:13: note: maps apply to integer fields"},
    {"unknown_map_kind",
        "providers:\n"
        "  - name: P\n"
        "    maps:\n"
        "      - {name: M, kind: enum}\n",
        "bad.yaml:4:25: error: unknown map kind 'enum'\n"
        "bad.yaml:4:25: note: valid kinds: value, bitmap"},
    {"map_value_twice",
        "providers:\n"
        "  - name: P\n"
        "    maps:\n"
        "      - name: M\n"
        "        kind: value\n"
        "        entries:\n"
        "          - {value: 1, message: A}\n"
        "          - {value: 0x1, message: B}\n",
        "bad.yaml:8:13: error: map 'M' defines value 0x1 twice\n"
        "bad.yaml:8:13: note: first defined at line 7"},
    {"undefined_template",
        "providers:\n"
        "  - name: P\n"
        "    events:\n"
        "      - {name: E, id: 1, template: Nope}\n",
        "bad.yaml:4:9: error: undefined template 'Nope'"},
    {"undefined_keyword",
        "providers:\n"
        "  - name: P\n"
        "    keywords: [{name: K, mask: 1}]\n"
        "    events:\n"
        "      - {name: E, id: 1, keywords: [K, L]}\n",
        "bad.yaml:5:9: error: undefined keyword 'L'"},
    {"undefined_task",
        "providers:\n"
        "  - name: P\n"
        "    events:\n"
        "      - {name: E, id: 1, task: T}\n",
        "bad.yaml:4:9: error: undefined task 'T'"},
    {"opcode_of_other_task",
        "providers:\n"
        "  - name: P\n"
        "    tasks:\n"
        "      - {name: A, value: 1, opcodes: [{name: Go, value: 10}]}\n"
        "      - {name: B, value: 2}\n"
        "    events:\n"
        "      - {name: E, id: 1, task: B, opcode: Go}\n",
        "bad.yaml:7:9: error: undefined opcode 'Go'\n"
        "bad.yaml:7:9: note: opcode 'Go' belongs to task 'A'; an event can use its own task's opcodes, provider opcodes and win: opcodes"},
    {"keyword_two_bits",
        "providers:\n"
        "  - name: P\n"
        "    keywords: [{name: K, mask: 3}]\n",
        "bad.yaml:3:16: error: mask 0x3 of keyword 'K' is not a single bit\n"
        "bad.yaml:3:16: note: a keyword mask is one of the 64 bits 0x1 .. 0x8000000000000000"},
    {"keyword_mask_reused",
        "providers:\n"
        "  - name: P\n"
        "    keywords: [{name: K, mask: 4}, {name: L, mask: 0x4}]\n",
        "bad.yaml:3:36: error: keyword 'L' reuses the mask 0x4 of keyword 'K'\n"
        "bad.yaml:3:36: note: first defined at line 3"},
    {"invalid_guid",
        "providers:\n"
        "  - name: P\n"
        "    guid: e13c0d23-ccbc-4e12-931b\n",
        "bad.yaml:2:5: error: invalid GUID 'e13c0d23-ccbc-4e12-931b' of provider 'P'\n"
        "bad.yaml:2:5: note: write xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx (hexadecimal digits)"},
    {"duplicate_provider",
        "providers:\n"
        "  - name: P\n"
        "  - name: Q\n"
        "  - name: P\n",
        "bad.yaml:4:5: error: provider 'P' is defined twice\n"
        "bad.yaml:4:5: note: first defined at line 2"},
    {"duplicate_guid",
        "providers:\n"
        "  - name: P\n"
        "  - name: Q\n"
        "    guid: '{3857F44B-D9E4-5B43-5BD0-84AE013C326B}'\n",
        "bad.yaml:3:5: error: provider 'Q' reuses the GUID '3857f44b-d9e4-5b43-5bd0-84ae013c326b' of provider 'P'\n"
        "bad.yaml:3:5: note: first defined at line 2"},
    {"fields_and_template",
        "providers:\n"
        "  - name: P\n"
        "    templates: [{name: T}]\n"
        "    events:\n"
        "      - {name: E, id: 1, template: T, fields: [{name: A, type: UInt8}]}\n",
        "bad.yaml:5:39: error: an event cannot have both 'fields' and 'template'"},
    {"inline_template_exists",
        "providers:\n"
        "  - name: P\n"
        "    templates: [{name: E}]\n"
        "    events:\n"
        "      - {name: E, id: 1, fields: [{name: A, type: UInt8}]}\n",
        "bad.yaml:5:26: error: inline fields would create template 'E', which already exists"},
    {"stack_not_bool",
        "providers:\n"
        "  - name: P\n"
        "    events:\n"
        "      - {name: E, id: 1, stack: maybe}\n",
        "bad.yaml:4:33: error: expected true or false for 'stack', got 'maybe'"},
    {"keywords_not_sequence",
        "providers:\n"
        "  - name: P\n"
        "    events:\n"
        "      - {name: E, id: 1, keywords: K}\n",
        "bad.yaml:4:36: error: expected a sequence for 'keywords', got 'K'"},
    {"merge_key",
        "providers:\n"
        "  - &b {name: P}\n"
        "  - {name: Q, <<: *b}\n",
        "bad.yaml:3:15: error: merge key '<<' is not supported in provider"},
    {"undefined_alias",
        "providers:\n"
        "  - *nothing\n",
        "bad.yaml:2:5: error: YAML syntax error: found undefined alias"},
    {"two_documents",
        "providers: [{name: P}]\n"
        "---\n"
        "providers: [{name: Q}]\n",
        "bad.yaml:2:1: error: YAML syntax error: expected a single document in the stream, but found another document"},
    {"invalid_utf8",
        "providers:\n"
        "  - name: P\xc3""\xa9""\xff""\n",
        "bad.yaml:2:13: error: the file is not valid UTF-8 (byte 0xff)"},
    {"control_character",
        "providers:\n"
        "  - name: P\xc3""\xa9""\x01""\n",
        "bad.yaml:2:13: error: YAML syntax error: unacceptable character #x0001: control characters are not allowed"},
    {"long_value_described",
        "providers:\n"
        "  - name: P\n"
        "    events: this is a very long value that goes on and on and on\n",
        "bad.yaml:3:13: error: expected a sequence for 'events', got 'this is a very long value that goes o...'"},
    {"string_expected",
        "providers:\n"
        "  - name: {a: b}\n",
        "bad.yaml:2:11: error: expected a string for 'name', got a mapping"},
    {"pgo_bad_size",
        "providers: [{name: P}]\n"
        "pgo_kinds:\n"
        "  - {name: K, value: 1, size: 3}\n",
        "bad.yaml:3:5: error: size 3 of pgo kind 'K' is not one of -1, 0, 1, 2, 4, 8\n"
        "bad.yaml:3:5: note: bytes per element: 1, 2, 4 or 8; 0 for none; -1 for pointer size"},
    {"pgo_missing_size",
        "providers: [{name: P}]\n"
        "pgo_kinds:\n"
        "  - {name: K, value: 1}\n",
        "bad.yaml:3:5: error: missing key 'size' in pgo kind"},
    {"payload_too_large",
        "providers:\n"
        "  - name: P\n"
        "    templates:\n"
        "      - name: T\n"
        "        fields:\n"
        "          - {name: A, type: GUID, count: 5000}\n"
        "    events:\n"
        "      - {name: E, id: 1, template: T}\n",
        "bad.yaml:4:9: error: template 'T' has 80000 bytes of fixed payload, more than 65535\n"
        "bad.yaml:4:9: note: an event payload must stay below 64 KiB"},
    {"opcode_out_of_range",
        "providers:\n"
        "  - name: P\n"
        "    opcodes: [{name: O, value: 256}]\n",
        "bad.yaml:3:15: error: value 256 of opcode 'O' is out of range 0..255"},
    {"task_value_out_of_range",
        "providers:\n"
        "  - name: P\n"
        "    tasks: [{name: T, value: 70000}]\n",
        "bad.yaml:3:13: error: value 70000 of task 'T' is out of range 0..65535"},
};

#define NCASES (sizeof CASES / sizeof CASES[0])

START_TEST(invalid_manifest) {
    const bad_case *c = &CASES[_i];
    const char *got = mt_load_error(c->text, "bad.yaml");
    ck_assert_msg(strcmp(got, c->want) == 0, "case %s:\n got: %s\nwant: %s", c->name, got, c->want);
}
END_TEST

/* "providers: " and depth brackets (a malloc'd string). */
static char *deep_text(size_t depth) {
    char *text = malloc(2 * depth + 16);
    ck_assert_ptr_nonnull(text);
    size_t o = (size_t)sprintf(text, "providers: ");
    memset(text + o, '[', depth);
    memset(text + o + depth, ']', depth);
    strcpy(text + o + 2 * depth, "\n");
    return text;
}

START_TEST(nested_too_deeply) {
    char *text = deep_text(1000); /* the manifest mapping and 1000 sequences */
    ck_assert_str_eq(mt_load_error(text, "deep.yaml"),
                     "deep.yaml:1:1011: error: the YAML is nested too deeply (more than 1000 levels)");
    free(text);
    text = deep_text(999); /* 1000 levels pass the depth check (and are then not a manifest) */
    ck_assert_str_eq(mt_load_error(text, "deep.yaml"),
                     "deep.yaml:1:13: error: expected a mapping for provider, got a sequence");
    free(text);
}
END_TEST

START_TEST(error_from_file) {
    /* a shared invalid manifest of the generator's tests: the loader's error equals the first line
     * of its .expected file */
    static const char *const names[] = {"yaml_unknown_key.yaml", "yaml_duplicate_key.yaml", "yaml_bad_integer.yaml",
                                        "yaml_missing_key.yaml", "yaml_syntax_error.yaml",  "yaml_unknown_type.yaml",
                                        "duplicate_event.yaml",  "count_undefined_field.yaml",
                                        "length_names_later_field.yaml", "nested_struct.yaml",
                                        "struct_without_count.yaml", "count_zero.yaml", "level_out_of_range.yaml"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char rel[256], path[4096];
        snprintf(rel, sizeof rel, "tests/gen/invalid/%s", names[i]);
        snprintf(path, sizeof path, "%s", mt_source_path(rel));
        char expected_path[4200];
        snprintf(expected_path, sizeof expected_path, "%s.expected", path);
        FILE *f = fopen(expected_path, "r");
        ck_assert_msg(f != NULL, "cannot open %s", expected_path);
        char want[2048] = "";
        ck_assert_ptr_nonnull(fgets(want, sizeof want, f));
        fclose(f);
        want[strcspn(want, "\n")] = '\0';
        mantra_manifest_error *err = NULL;
        ck_assert_ptr_null(mantra_manifest_load_file(rel, &err)); /* relative: tests run from the source root */
        char got[2048];
        mantra_manifest_error_format(err, got, sizeof got);
        mantra_manifest_error_free(err);
        ck_assert_msg(strcmp(got, want) == 0, "%s:\n got: %s\nwant: %s", names[i], got, want);
    }
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("manifest_errors");
    TCase *tc = tcase_create("errors");
    tcase_add_loop_test(tc, invalid_manifest, 0, (int)NCASES);
    tcase_add_test(tc, nested_too_deeply);
    tcase_add_test(tc, error_from_file);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
