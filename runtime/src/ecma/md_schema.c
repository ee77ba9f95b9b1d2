/* md_schema.c - the metadata tables, their columns (ECMA-335 Partition II §22, including the
 * pointer and edit-and-continue tables of an uncompressed "#-" stream) and the coded index kinds
 * (§24.2.6), with their names. */
#include "ecma-internal.h"

#define U8(n) {n, MANTRA_MD_COL_U8, 0}
#define U16(n) {n, MANTRA_MD_COL_U16, 0}
#define U32(n) {n, MANTRA_MD_COL_U32, 0}
#define STR(n) {n, MANTRA_MD_COL_STRING, 0}
#define GUID(n) {n, MANTRA_MD_COL_GUID, 0}
#define BLOB(n) {n, MANTRA_MD_COL_BLOB, 0}
#define IDX(n, t) {n, MANTRA_MD_COL_INDEX, MANTRA_MD_##t}
#define CODED(n, k) {n, MANTRA_MD_COL_CODED, MANTRA_MD_##k}

const ec_table_schema ec_tables[MANTRA_MD_TABLES] = {
    [MANTRA_MD_MODULE] = {"Module", 5, {U16("Generation"), STR("Name"), GUID("Mvid"), GUID("EncId"), GUID("EncBaseId")}},
    [MANTRA_MD_TYPE_REF] = {"TypeRef", 3, {CODED("ResolutionScope", RESOLUTION_SCOPE), STR("TypeName"),
                                           STR("TypeNamespace")}},
    [MANTRA_MD_TYPE_DEF] = {"TypeDef", 6, {U32("Flags"), STR("TypeName"), STR("TypeNamespace"),
                                           CODED("Extends", TYPE_DEF_OR_REF), IDX("FieldList", FIELD),
                                           IDX("MethodList", METHOD_DEF)}},
    [MANTRA_MD_FIELD_PTR] = {"FieldPtr", 1, {IDX("Field", FIELD)}},
    [MANTRA_MD_FIELD] = {"Field", 3, {U16("Flags"), STR("Name"), BLOB("Signature")}},
    [MANTRA_MD_METHOD_PTR] = {"MethodPtr", 1, {IDX("Method", METHOD_DEF)}},
    [MANTRA_MD_METHOD_DEF] = {"MethodDef", 6, {U32("RVA"), U16("ImplFlags"), U16("Flags"), STR("Name"),
                                               BLOB("Signature"), IDX("ParamList", PARAM)}},
    [MANTRA_MD_PARAM_PTR] = {"ParamPtr", 1, {IDX("Param", PARAM)}},
    [MANTRA_MD_PARAM] = {"Param", 3, {U16("Flags"), U16("Sequence"), STR("Name")}},
    [MANTRA_MD_INTERFACE_IMPL] = {"InterfaceImpl", 2, {IDX("Class", TYPE_DEF), CODED("Interface", TYPE_DEF_OR_REF)}},
    [MANTRA_MD_MEMBER_REF] = {"MemberRef", 3, {CODED("Class", MEMBER_REF_PARENT), STR("Name"), BLOB("Signature")}},
    [MANTRA_MD_CONSTANT] = {"Constant", 3, {U8("Type"), CODED("Parent", HAS_CONSTANT), BLOB("Value")}},
    [MANTRA_MD_CUSTOM_ATTRIBUTE] = {"CustomAttribute", 3, {CODED("Parent", HAS_CUSTOM_ATTRIBUTE),
                                                           CODED("Type", CUSTOM_ATTRIBUTE_TYPE), BLOB("Value")}},
    [MANTRA_MD_FIELD_MARSHAL] = {"FieldMarshal", 2, {CODED("Parent", HAS_FIELD_MARSHAL), BLOB("NativeType")}},
    [MANTRA_MD_DECL_SECURITY] = {"DeclSecurity", 3, {U16("Action"), CODED("Parent", HAS_DECL_SECURITY),
                                                     BLOB("PermissionSet")}},
    [MANTRA_MD_CLASS_LAYOUT] = {"ClassLayout", 3, {U16("PackingSize"), U32("ClassSize"), IDX("Parent", TYPE_DEF)}},
    [MANTRA_MD_FIELD_LAYOUT] = {"FieldLayout", 2, {U32("Offset"), IDX("Field", FIELD)}},
    [MANTRA_MD_STAND_ALONE_SIG] = {"StandAloneSig", 1, {BLOB("Signature")}},
    [MANTRA_MD_EVENT_MAP] = {"EventMap", 2, {IDX("Parent", TYPE_DEF), IDX("EventList", EVENT)}},
    [MANTRA_MD_EVENT_PTR] = {"EventPtr", 1, {IDX("Event", EVENT)}},
    [MANTRA_MD_EVENT] = {"Event", 3, {U16("EventFlags"), STR("Name"), CODED("EventType", TYPE_DEF_OR_REF)}},
    [MANTRA_MD_PROPERTY_MAP] = {"PropertyMap", 2, {IDX("Parent", TYPE_DEF), IDX("PropertyList", PROPERTY)}},
    [MANTRA_MD_PROPERTY_PTR] = {"PropertyPtr", 1, {IDX("Property", PROPERTY)}},
    [MANTRA_MD_PROPERTY] = {"Property", 3, {U16("Flags"), STR("Name"), BLOB("Type")}},
    [MANTRA_MD_METHOD_SEMANTICS] = {"MethodSemantics", 3, {U16("Semantics"), IDX("Method", METHOD_DEF),
                                                           CODED("Association", HAS_SEMANTICS)}},
    [MANTRA_MD_METHOD_IMPL] = {"MethodImpl", 3, {IDX("Class", TYPE_DEF), CODED("MethodBody", METHOD_DEF_OR_REF),
                                                 CODED("MethodDeclaration", METHOD_DEF_OR_REF)}},
    [MANTRA_MD_MODULE_REF] = {"ModuleRef", 1, {STR("Name")}},
    [MANTRA_MD_TYPE_SPEC] = {"TypeSpec", 1, {BLOB("Signature")}},
    [MANTRA_MD_IMPL_MAP] = {"ImplMap", 4, {U16("MappingFlags"), CODED("MemberForwarded", MEMBER_FORWARDED),
                                           STR("ImportName"), IDX("ImportScope", MODULE_REF)}},
    [MANTRA_MD_FIELD_RVA] = {"FieldRVA", 2, {U32("RVA"), IDX("Field", FIELD)}},
    [MANTRA_MD_ENC_LOG] = {"ENCLog", 2, {U32("Token"), U32("FuncCode")}},
    [MANTRA_MD_ENC_MAP] = {"ENCMap", 1, {U32("Token")}},
    [MANTRA_MD_ASSEMBLY] = {"Assembly", 9, {U32("HashAlgId"), U16("MajorVersion"), U16("MinorVersion"),
                                            U16("BuildNumber"), U16("RevisionNumber"), U32("Flags"),
                                            BLOB("PublicKey"), STR("Name"), STR("Culture")}},
    [MANTRA_MD_ASSEMBLY_PROCESSOR] = {"AssemblyProcessor", 1, {U32("Processor")}},
    [MANTRA_MD_ASSEMBLY_OS] = {"AssemblyOS", 3, {U32("OSPlatformID"), U32("OSMajorVersion"), U32("OSMinorVersion")}},
    [MANTRA_MD_ASSEMBLY_REF] = {"AssemblyRef", 9, {U16("MajorVersion"), U16("MinorVersion"), U16("BuildNumber"),
                                                   U16("RevisionNumber"), U32("Flags"), BLOB("PublicKeyOrToken"),
                                                   STR("Name"), STR("Culture"), BLOB("HashValue")}},
    [MANTRA_MD_ASSEMBLY_REF_PROCESSOR] = {"AssemblyRefProcessor", 2, {U32("Processor"),
                                                                      IDX("AssemblyRef", ASSEMBLY_REF)}},
    [MANTRA_MD_ASSEMBLY_REF_OS] = {"AssemblyRefOS", 4, {U32("OSPlatformID"), U32("OSMajorVersion"),
                                                        U32("OSMinorVersion"), IDX("AssemblyRef", ASSEMBLY_REF)}},
    [MANTRA_MD_FILE] = {"File", 3, {U32("Flags"), STR("Name"), BLOB("HashValue")}},
    [MANTRA_MD_EXPORTED_TYPE] = {"ExportedType", 5, {U32("Flags"), U32("TypeDefId"), STR("TypeName"),
                                                     STR("TypeNamespace"), CODED("Implementation", IMPLEMENTATION)}},
    [MANTRA_MD_MANIFEST_RESOURCE] = {"ManifestResource", 4, {U32("Offset"), U32("Flags"), STR("Name"),
                                                             CODED("Implementation", IMPLEMENTATION)}},
    [MANTRA_MD_NESTED_CLASS] = {"NestedClass", 2, {IDX("NestedClass", TYPE_DEF), IDX("EnclosingClass", TYPE_DEF)}},
    [MANTRA_MD_GENERIC_PARAM] = {"GenericParam", 4, {U16("Number"), U16("Flags"), CODED("Owner", TYPE_OR_METHOD_DEF),
                                                     STR("Name")}},
    [MANTRA_MD_METHOD_SPEC] = {"MethodSpec", 2, {CODED("Method", METHOD_DEF_OR_REF), BLOB("Instantiation")}},
    [MANTRA_MD_GENERIC_PARAM_CONSTRAINT] = {"GenericParamConstraint", 2, {IDX("Owner", GENERIC_PARAM),
                                                                          CODED("Constraint", TYPE_DEF_OR_REF)}},
};

#define T(x) MANTRA_MD_##x
#define NONE EC_NO_TABLE
const ec_coded_kind ec_coded[MANTRA_MD_CODED_KINDS] = {
    [MANTRA_MD_TYPE_DEF_OR_REF] = {2, 3, {T(TYPE_DEF), T(TYPE_REF), T(TYPE_SPEC)}},
    [MANTRA_MD_HAS_CONSTANT] = {2, 3, {T(FIELD), T(PARAM), T(PROPERTY)}},
    [MANTRA_MD_HAS_CUSTOM_ATTRIBUTE] = {5, 22, {T(METHOD_DEF), T(FIELD), T(TYPE_REF), T(TYPE_DEF), T(PARAM),
                                                T(INTERFACE_IMPL), T(MEMBER_REF), T(MODULE), T(DECL_SECURITY),
                                                T(PROPERTY), T(EVENT), T(STAND_ALONE_SIG), T(MODULE_REF),
                                                T(TYPE_SPEC), T(ASSEMBLY), T(ASSEMBLY_REF), T(FILE),
                                                T(EXPORTED_TYPE), T(MANIFEST_RESOURCE), T(GENERIC_PARAM),
                                                T(GENERIC_PARAM_CONSTRAINT), T(METHOD_SPEC)}},
    [MANTRA_MD_HAS_FIELD_MARSHAL] = {1, 2, {T(FIELD), T(PARAM)}},
    [MANTRA_MD_HAS_DECL_SECURITY] = {2, 3, {T(TYPE_DEF), T(METHOD_DEF), T(ASSEMBLY)}},
    [MANTRA_MD_MEMBER_REF_PARENT] = {3, 5, {T(TYPE_DEF), T(TYPE_REF), T(MODULE_REF), T(METHOD_DEF), T(TYPE_SPEC)}},
    [MANTRA_MD_HAS_SEMANTICS] = {1, 2, {T(EVENT), T(PROPERTY)}},
    [MANTRA_MD_METHOD_DEF_OR_REF] = {1, 2, {T(METHOD_DEF), T(MEMBER_REF)}},
    [MANTRA_MD_MEMBER_FORWARDED] = {1, 2, {T(FIELD), T(METHOD_DEF)}},
    [MANTRA_MD_IMPLEMENTATION] = {2, 3, {T(FILE), T(ASSEMBLY_REF), T(EXPORTED_TYPE)}},
    [MANTRA_MD_CUSTOM_ATTRIBUTE_TYPE] = {3, 5, {NONE, NONE, T(METHOD_DEF), T(MEMBER_REF), NONE}},
    [MANTRA_MD_RESOLUTION_SCOPE] = {2, 4, {T(MODULE), T(MODULE_REF), T(ASSEMBLY_REF), T(TYPE_REF)}},
    [MANTRA_MD_TYPE_OR_METHOD_DEF] = {1, 2, {T(TYPE_DEF), T(METHOD_DEF)}},
};

const char *mantra_md_table_name(unsigned table) { return table < MANTRA_MD_TABLES ? ec_tables[table].name : NULL; }

unsigned mantra_md_column_count(unsigned table) { return table < MANTRA_MD_TABLES ? ec_tables[table].ncolumns : 0; }

const char *mantra_md_column_name(unsigned table, unsigned column) {
    return column < mantra_md_column_count(table) ? ec_tables[table].columns[column].name : NULL;
}

enum mantra_md_column_kind mantra_md_column_kind(unsigned table, unsigned column) {
    return column < mantra_md_column_count(table) ? (enum mantra_md_column_kind)ec_tables[table].columns[column].kind
                                                  : MANTRA_MD_COL_U8;
}

unsigned mantra_md_column_target(unsigned table, unsigned column) {
    return column < mantra_md_column_count(table) ? ec_tables[table].columns[column].target : 0;
}

/* Bytes of an index into a table with `rows` rows, or of a coded index whose tables have at most
 * `rows` rows and whose tag takes `bits` (§24.2.6). */
static uint8_t index_size(uint32_t rows, unsigned bits) { return rows < (1u << (16 - bits)) ? 2 : 4; }

uint8_t ec_column_size(const uint32_t rows[MANTRA_MD_TABLES], uint8_t heap_sizes, const ec_column *c) {
    switch (c->kind) {
    case MANTRA_MD_COL_U8:
    case MANTRA_MD_COL_U16: return 2;
    case MANTRA_MD_COL_U32: return 4;
    case MANTRA_MD_COL_STRING: return heap_sizes & EC_HEAP_STRINGS_4 ? 4 : 2;
    case MANTRA_MD_COL_GUID: return heap_sizes & EC_HEAP_GUID_4 ? 4 : 2;
    case MANTRA_MD_COL_BLOB: return heap_sizes & EC_HEAP_BLOB_4 ? 4 : 2;
    case MANTRA_MD_COL_INDEX: return index_size(rows[c->target], 0);
    default: {
        const ec_coded_kind *k = &ec_coded[c->target];
        uint32_t max = 0;
        for (unsigned i = 0; i < k->ntags; i++)
            if (k->tables[i] != EC_NO_TABLE && rows[k->tables[i]] > max)
                max = rows[k->tables[i]];
        return index_size(max, k->bits);
    }
    }
}
