/* mantra/ecma.h - PE/COFF images and ECMA-335 metadata: one reader (and, for .mibc profiles, one
 * writer) for every tool that needs assemblies: `mantra pgo` (method references of a .mibc), the
 * symbolisation of ReadyToRun code, `mantra image`.
 *
 * Format facts: ECMA-335 6th edition, Partition II §22 (the tables and their columns), §23.2
 * (blobs and signatures), §24 (metadata physical layout: the root, stream headers, the #~ stream,
 * heaps, coded indexes), §25 (the PE file: MS-DOS header, PE signature, COFF header, optional header,
 * section headers, the CLI header); the Microsoft PE/COFF specification for the optional header's
 * data directories; ReadyToRun images XOR the COFF Machine field with an operating system value
 * (dotnet/runtime src/coreclr/inc/pedecoder.h, ReadyToRunReader.OperatingSystem). No code was
 * copied.
 *
 * Everything reads from bytes in memory that the caller keeps alive and never writes them; bad
 * bytes are refused with a located error (mantra_ecma_error: the file offset and which check
 * failed), never read past. mantra_md_open checks every row of every table (heap indexes, table
 * indexes, coded index tags, blob lengths), so the accessors after it cannot fail on a row it
 * accepted. */
#ifndef MANTRA_ECMA_H
#define MANTRA_ECMA_H

#include <stddef.h>
#include <stdint.h>

#include "mantra/event.h" /* mantra_guid */
#include "mantra/status.h"

MANTRA_BEGIN_DECLS

/* Where and why bytes were refused: offset is a byte offset in the file given to mantra_pe_parse
 * (for mantra_md_open: in the metadata plus its base_offset). */
typedef struct mantra_ecma_error {
    uint64_t offset;
    char message[200];
} mantra_ecma_error;

/* ---- PE/COFF ------------------------------------------------------------------------------- */
typedef struct mantra_pe_dir {
    uint32_t rva, size;
} mantra_pe_dir;

typedef struct mantra_pe_section {
    char name[9]; /* NUL-terminated */
    uint32_t virtual_address, virtual_size, raw_offset, raw_size, characteristics;
} mantra_pe_section;

/* The data directories the readers use (PE/COFF optional header, in this order). */
enum { MANTRA_PE_DIR_EXPORT = 0, MANTRA_PE_DIR_DEBUG = 6, MANTRA_PE_DIR_CLI = 14 };
/* The operating systems ReadyToRun images XOR into the COFF Machine field (pedecoder.h). */
enum {
    MANTRA_PE_OS_WINDOWS = 0,
    MANTRA_PE_OS_LINUX = 0x7B79,
    MANTRA_PE_OS_APPLE = 0x4644,
    MANTRA_PE_OS_FREEBSD = 0xADC4,
    MANTRA_PE_OS_NETBSD = 0x1993,
    MANTRA_PE_OS_SUNOS = 0x1992
};

typedef struct mantra_pe {
    const uint8_t *data;
    size_t size;
    uint16_t machine_raw; /* the COFF Machine field as stored */
    uint16_t machine;     /* with the OS value removed: 0x8664 x64, 0xAA64 arm64, 0x14C x86, 0x1C4 arm */
    uint16_t os;          /* MANTRA_PE_OS_*: the value XORed in (0 when the field is a known machine) */
    uint16_t characteristics;
    int pe32_plus; /* optional header magic 0x20B (else 0x10B) */
    uint64_t image_base;
    uint32_t section_alignment, file_alignment, size_of_image;
    uint32_t ndirs; /* NumberOfRvaAndSizes, at most 16 kept */
    mantra_pe_dir dirs[16];
    uint32_t nsections;
    mantra_pe_section *sections; /* malloc'd: mantra_pe_free */
    /* the CLI header (data directory 14), when the image has one */
    int has_cli;
    uint16_t cli_major, cli_minor;
    uint32_t cli_flags, cli_entry_point;
    mantra_pe_dir cli_metadata, cli_resources, cli_strong_name, cli_managed_native_header;
} mantra_pe;

/* Parses the headers of a PE file (MS-DOS header, PE signature, COFF header, optional header,
 * section table, CLI header when present). MANTRA_OK, MANTRA_EFORMAT (err says where and why; pe
 * holds nothing to free) or MANTRA_ENOMEM. */
int mantra_pe_parse(const uint8_t *data, size_t size, mantra_pe *pe, mantra_ecma_error *err);
void mantra_pe_free(mantra_pe *pe);
/* The file offset of [rva, rva + size) when it lies inside one section's raw data: MANTRA_OK, or
 * MANTRA_EFORMAT. */
int mantra_pe_rva_to_offset(const mantra_pe *pe, uint32_t rva, uint32_t size, size_t *offset);

/* The CodeView entry of the debug directory (data directory 6; PE/COFF specification "Debug Type",
 * IMAGE_DEBUG_TYPE_CODEVIEW 2, and the "RSDS" record: GUID, age, PDB path): the GUID the .NET runtime
 * reports as a module's ManagedPdbSignature. MANTRA_OK, or MANTRA_ENOENT when the image has no such
 * entry (or it lies outside the file). path points into the image (NUL-terminated within it). */
int mantra_pe_codeview(const mantra_pe *pe, mantra_guid *guid, uint32_t *age, const char **path);

/* ---- metadata tables (Partition II §22) ------------------------------------------------------ */
enum mantra_md_table {
    MANTRA_MD_MODULE = 0x00,
    MANTRA_MD_TYPE_REF = 0x01,
    MANTRA_MD_TYPE_DEF = 0x02,
    MANTRA_MD_FIELD_PTR = 0x03,
    MANTRA_MD_FIELD = 0x04,
    MANTRA_MD_METHOD_PTR = 0x05,
    MANTRA_MD_METHOD_DEF = 0x06,
    MANTRA_MD_PARAM_PTR = 0x07,
    MANTRA_MD_PARAM = 0x08,
    MANTRA_MD_INTERFACE_IMPL = 0x09,
    MANTRA_MD_MEMBER_REF = 0x0A,
    MANTRA_MD_CONSTANT = 0x0B,
    MANTRA_MD_CUSTOM_ATTRIBUTE = 0x0C,
    MANTRA_MD_FIELD_MARSHAL = 0x0D,
    MANTRA_MD_DECL_SECURITY = 0x0E,
    MANTRA_MD_CLASS_LAYOUT = 0x0F,
    MANTRA_MD_FIELD_LAYOUT = 0x10,
    MANTRA_MD_STAND_ALONE_SIG = 0x11,
    MANTRA_MD_EVENT_MAP = 0x12,
    MANTRA_MD_EVENT_PTR = 0x13,
    MANTRA_MD_EVENT = 0x14,
    MANTRA_MD_PROPERTY_MAP = 0x15,
    MANTRA_MD_PROPERTY_PTR = 0x16,
    MANTRA_MD_PROPERTY = 0x17,
    MANTRA_MD_METHOD_SEMANTICS = 0x18,
    MANTRA_MD_METHOD_IMPL = 0x19,
    MANTRA_MD_MODULE_REF = 0x1A,
    MANTRA_MD_TYPE_SPEC = 0x1B,
    MANTRA_MD_IMPL_MAP = 0x1C,
    MANTRA_MD_FIELD_RVA = 0x1D,
    MANTRA_MD_ENC_LOG = 0x1E,
    MANTRA_MD_ENC_MAP = 0x1F,
    MANTRA_MD_ASSEMBLY = 0x20,
    MANTRA_MD_ASSEMBLY_PROCESSOR = 0x21,
    MANTRA_MD_ASSEMBLY_OS = 0x22,
    MANTRA_MD_ASSEMBLY_REF = 0x23,
    MANTRA_MD_ASSEMBLY_REF_PROCESSOR = 0x24,
    MANTRA_MD_ASSEMBLY_REF_OS = 0x25,
    MANTRA_MD_FILE = 0x26,
    MANTRA_MD_EXPORTED_TYPE = 0x27,
    MANTRA_MD_MANIFEST_RESOURCE = 0x28,
    MANTRA_MD_NESTED_CLASS = 0x29,
    MANTRA_MD_GENERIC_PARAM = 0x2A,
    MANTRA_MD_METHOD_SPEC = 0x2B,
    MANTRA_MD_GENERIC_PARAM_CONSTRAINT = 0x2C,
    MANTRA_MD_TABLES = 0x2D
};
/* The most columns a table has (Assembly: 9). */
#define MANTRA_MD_MAX_COLUMNS 9

/* What a column holds (mantra_md_column_kind): a constant of 1 (stored in 2 bytes with its padding
 * byte: Constant.Type), 2 or 4 bytes; an index into a heap; the row number of one table (a "simple
 * index"); or a coded index, which mantra_md_row gives as a token (table << 24 | row). */
enum mantra_md_column_kind {
    MANTRA_MD_COL_U8,
    MANTRA_MD_COL_U16,
    MANTRA_MD_COL_U32,
    MANTRA_MD_COL_STRING,
    MANTRA_MD_COL_GUID,
    MANTRA_MD_COL_BLOB,
    MANTRA_MD_COL_INDEX, /* mantra_md_column_target: its table */
    MANTRA_MD_COL_CODED  /* mantra_md_column_target: enum mantra_md_coded */
};
/* The coded index kinds (§24.2.6). */
enum mantra_md_coded {
    MANTRA_MD_TYPE_DEF_OR_REF,
    MANTRA_MD_HAS_CONSTANT,
    MANTRA_MD_HAS_CUSTOM_ATTRIBUTE,
    MANTRA_MD_HAS_FIELD_MARSHAL,
    MANTRA_MD_HAS_DECL_SECURITY,
    MANTRA_MD_MEMBER_REF_PARENT,
    MANTRA_MD_HAS_SEMANTICS,
    MANTRA_MD_METHOD_DEF_OR_REF,
    MANTRA_MD_MEMBER_FORWARDED,
    MANTRA_MD_IMPLEMENTATION,
    MANTRA_MD_CUSTOM_ATTRIBUTE_TYPE,
    MANTRA_MD_RESOLUTION_SCOPE,
    MANTRA_MD_TYPE_OR_METHOD_DEF,
    MANTRA_MD_CODED_KINDS
};

/* Table and column names as Partition II §22 spells them ("TypeDef", "TypeNamespace"); NULL for a
 * table or column that does not exist. */
const char *mantra_md_table_name(unsigned table);
unsigned mantra_md_column_count(unsigned table);
const char *mantra_md_column_name(unsigned table, unsigned column);
enum mantra_md_column_kind mantra_md_column_kind(unsigned table, unsigned column);
unsigned mantra_md_column_target(unsigned table, unsigned column);

/* A token's table (its top byte) and row. */
#define MANTRA_MD_TOKEN(table, row) ((uint32_t)(table) << 24 | (uint32_t)(row))
#define MANTRA_MD_TOKEN_TABLE(token) ((unsigned)((token) >> 24))
#define MANTRA_MD_TOKEN_ROW(token) ((uint32_t)(token)&0xFFFFFFu)

/* ---- the metadata reader --------------------------------------------------------------------- */
typedef struct mantra_md mantra_md;

/* Opens the metadata at data[0..size) (the CLI header's MetaData directory; base_offset: where it
 * starts in its file, for error offsets) and checks it whole. MANTRA_OK, MANTRA_EFORMAT (err) or
 * MANTRA_ENOMEM. */
int mantra_md_open(const uint8_t *data, size_t size, uint64_t base_offset, mantra_md **out,
                   mantra_ecma_error *err);
/* mantra_pe_parse's CLI metadata, opened: MANTRA_EFORMAT also when the image has no CLI header. */
int mantra_md_open_pe(const mantra_pe *pe, mantra_md **out, mantra_ecma_error *err);
void mantra_md_close(mantra_md *md);

/* The version string of the metadata root ("v4.0.30319"). */
const char *mantra_md_version(const mantra_md *md);
uint32_t mantra_md_row_count(const mantra_md *md, unsigned table);
/* Row `row` (1-based) of table: one value per column (mantra_md_column_count), a coded index as a
 * token. MANTRA_OK or MANTRA_EINVAL (no such table or row). */
int mantra_md_row(const mantra_md *md, unsigned table, uint32_t row, uint32_t values[MANTRA_MD_MAX_COLUMNS]);

/* Heaps. A string of #Strings (UTF-8, "" for index 0; NULL when index is past the heap). */
const char *mantra_md_string(const mantra_md *md, uint32_t index);
/* A blob of #Blob (its bytes after the length; index 0 is the empty blob): MANTRA_OK or
 * MANTRA_EINVAL (past the heap, or a length that does not fit). */
int mantra_md_blob(const mantra_md *md, uint32_t index, const uint8_t **data, uint32_t *size);
/* A GUID of #GUID (1-based; 0 gives the null GUID): MANTRA_OK or MANTRA_EINVAL. */
int mantra_md_guid(const mantra_md *md, uint32_t index, mantra_guid *out);
/* A string of #US (UTF-16LE code units without the final flag byte): MANTRA_OK or MANTRA_EINVAL. */
int mantra_md_user_string(const mantra_md *md, uint32_t index, const uint8_t **utf16, uint32_t *units);

/* A compressed unsigned integer of a blob or signature (§23.2): its value and length in bytes (1,
 * 2 or 4), 0 when p[0..size) does not hold one. */
size_t mantra_md_uncompress(const uint8_t *p, size_t size, uint32_t *value);

/* An assembly's public key token: the last 8 bytes of the SHA-1 of its public key, in reverse order
 * (Partition II §6.2.1.3). */
void mantra_ecma_public_key_token(const uint8_t *key, size_t size, uint8_t token[8]);

/* Names. The TypeDef owning MethodDef `method` (by the TypeDefs' MethodList ranges), 0 when none. */
uint32_t mantra_md_method_owner(const mantra_md *md, uint32_t method);
/* The enclosing TypeDef of TypeDef `type` (NestedClass), 0 when it is not nested. */
uint32_t mantra_md_enclosing_type(const mantra_md *md, uint32_t type);
/* The full name of a TypeDef or TypeRef token as reflection writes it: "Namespace.Outer+Inner".
 * Writes at most size bytes (NUL included) and returns the length of the whole name, as snprintf
 * does (a result >= size means it was cut), or 0 when the token is not a TypeDef or TypeRef of md. */
size_t mantra_md_type_name(const mantra_md *md, uint32_t token, char *buf, size_t size);

/* ---- ReadyToRun (the native header of a precompiled assembly) ----------------------------------
 * Format facts: dotnet/runtime docs/design/coreclr/botr/readytorun-format.md, src/coreclr/inc/
 * readytorun.h, the writer's NativeFormatWriter.cs and the reader ILCompiler.Reflection.ReadyToRun
 * (NativeArray, NativeHashtable, RuntimeFunction, signatures), as ../shared/reference/
 * r2r-and-symbols.md §2 sums them up. A method's code is the RUNTIME_FUNCTIONs from its entry point
 * up to the next entry point (its funclets included) or the first cold one; a method split by
 * crossgen2 --hot-cold-splitting has its cold RUNTIME_FUNCTIONs listed in the HotColdMap section
 * (120) as (cold index, hot index) pairs. */
typedef struct mantra_r2r_section {
    uint32_t type, rva, size;
} mantra_r2r_section;

enum mantra_r2r_section_type {
    MANTRA_R2R_IMPORT_SECTIONS = 101,
    MANTRA_R2R_RUNTIME_FUNCTIONS = 102,
    MANTRA_R2R_METHOD_DEF_ENTRY_POINTS = 103,
    MANTRA_R2R_INSTANCE_METHOD_ENTRY_POINTS = 109,
    MANTRA_R2R_PGO_INSTRUMENTATION_DATA = 117,
    MANTRA_R2R_HOT_COLD_MAP = 120
};

typedef struct mantra_r2r_method {
    uint32_t token;               /* the MethodDef token (0 for an instantiation of another module's) */
    uint32_t hot_rva, hot_size;   /* its first RUNTIME_FUNCTION's start; to the end of its hot part */
    uint32_t cold_rva, cold_size; /* its cold part, 0 and 0 when none */
    uint32_t entry;               /* the index of its first RUNTIME_FUNCTION */
    const uint8_t *sig;           /* an instantiation (InstanceMethodEntryPoints): its method signature
                                     in the image (mantra_r2r_method_sig_parse), else NULL */
    uint32_t sig_size;
} mantra_r2r_method;

typedef struct mantra_r2r {
    uint16_t major, minor;
    uint32_t flags;
    uint32_t nsections;
    mantra_r2r_section *sections;
    /* filled by mantra_r2r_code */
    uint32_t nfunctions;        /* RUNTIME_FUNCTIONs */
    uint32_t first_cold;        /* the index of the first cold one (nfunctions when none) */
    size_t nmethods;            /* methods with code: MethodDefEntryPoints' by token, then the
                                   instantiations of InstanceMethodEntryPoints in the table's order */
    mantra_r2r_method *methods;
    size_t ninstances;          /* of which instantiations */
} mantra_r2r;

/* Reads the ReadyToRun header of pe (its CLI header's ManagedNativeHeader) and its section list.
 * MANTRA_OK, MANTRA_ENOENT (not a ReadyToRun image: no native header), MANTRA_EUNSUPPORTED (a major
 * version this reader does not know: err says which), MANTRA_EFORMAT (err: where and why) or
 * MANTRA_ENOMEM. */
int mantra_r2r_open(const mantra_pe *pe, mantra_r2r *out, mantra_ecma_error *err);
/* The bytes of section type: 1 (found), 0 (the image has none) or MANTRA_EFORMAT (outside the file). */
int mantra_r2r_section_bytes(const mantra_pe *pe, const mantra_r2r *r, uint32_t type, const uint8_t **data,
                             uint32_t *size, mantra_ecma_error *err);
/* The methods' code ranges (RuntimeFunctions, MethodDefEntryPoints, InstanceMethodEntryPoints and
 * HotColdMap) into r. x64 images only (their RUNTIME_FUNCTIONs carry their end): MANTRA_EUNSUPPORTED
 * for others. MANTRA_OK, MANTRA_EFORMAT (err), MANTRA_ENOMEM. */
int mantra_r2r_code(const mantra_pe *pe, mantra_r2r *r, mantra_ecma_error *err);
void mantra_r2r_free(mantra_r2r *r);

/* A ReadyToRun method signature (readytorun.h READYTORUN_METHOD_SIG_*; compressed integers as in
 * ECMA-335 §II.23.2): the parts point into the parsed bytes. */
#define MANTRA_R2R_SIG_UNBOXING 0x01u
#define MANTRA_R2R_SIG_INSTANTIATING 0x02u
#define MANTRA_R2R_SIG_METHOD_INSTANTIATION 0x04u
#define MANTRA_R2R_SIG_SLOT_INSTEAD_OF_TOKEN 0x08u
#define MANTRA_R2R_SIG_MEMBER_REF_TOKEN 0x10u
#define MANTRA_R2R_SIG_CONSTRAINED 0x20u
#define MANTRA_R2R_SIG_OWNER_TYPE 0x40u
#define MANTRA_R2R_SIG_UPDATE_CONTEXT 0x80u
#define MANTRA_R2R_SIG_ASYNC_VARIANT 0x100u
#define MANTRA_R2R_NO_MODULE UINT32_MAX
typedef struct mantra_r2r_method_sig {
    uint32_t flags;
    uint32_t module;               /* UpdateContext's module index, else MANTRA_R2R_NO_MODULE */
    const uint8_t *owner;          /* OwnerType: its type signature, else NULL */
    size_t owner_size;
    uint32_t rid;                  /* the MethodDef (or MemberRef, or slot) row */
    uint32_t ninst;                /* MethodInstantiation: the number of type arguments */
    const uint8_t *inst;           /* ... and their type signatures, one after another */
    size_t inst_size;
    const uint8_t *constrained;    /* Constrained: its type signature, else NULL */
    size_t constrained_size;
} mantra_r2r_method_sig;
/* The size of the ReadyToRun type signature at p (ECMA-335 §II.23.2.12 plus the runtime's
 * ELEMENT_TYPE_CANON_ZAPSIG 0x3E, MODULE_ZAPSIG 0x3F with a module index, NATIVE_VALUETYPE_ZAPSIG
 * 0x3D), 0 when it is malformed or runs past n. */
size_t mantra_r2r_type_sig_size(const uint8_t *p, size_t n);
/* Parses the method signature at p: its size, 0 when malformed (unknown flag bits included). */
size_t mantra_r2r_method_sig_parse(const uint8_t *p, size_t n, mantra_r2r_method_sig *out);

/* The fixup signature behind import cell `index` of import section `section` (READYTORUN_IMPORT_
 * SECTION: 20 bytes each in section 101; its Signatures array of RVAs): its bytes up to the end of
 * the PE section that holds them (*sig, *max). MANTRA_OK, MANTRA_ENOENT (no such cell),
 * MANTRA_EFORMAT (err). */
int mantra_r2r_import_signature(const mantra_pe *pe, const mantra_r2r *r, uint32_t section, uint32_t index,
                                const uint8_t **sig, size_t *max, mantra_ecma_error *err);

/* One method's entry of the embedded PGO data (section 117, crossgen2 --embed-pgo-data:
 * InstrumentationDataTableNode.cs): a NativeHashtable whose entries are a method signature, then
 * a version, then the method's schema + data stream (the compressed integer stream of
 * ../shared/reference/pgo-format.md §2, Done-terminated, which mantra/pgo.h decodes); type
 * handles in it are (import cell << 4) | import section, or (n << 4) | 0xF for a type the image
 * cannot refer to. */
typedef struct mantra_r2r_pgo_entry {
    mantra_r2r_method_sig method;
    uint32_t version;
    const uint8_t *data; /* the stream, up to the end of the section */
    size_t data_max;
    uint64_t at; /* the entry's file offset, for messages */
} mantra_r2r_pgo_entry;
/* Calls fn for every entry (in the table's order); fn's non-zero result stops the walk and is
 * returned. MANTRA_OK (also when the image has no section 117), MANTRA_EFORMAT (err). */
int mantra_r2r_pgo_each(const mantra_pe *pe, const mantra_r2r *r,
                        int (*fn)(void *ctx, const mantra_r2r_pgo_entry *e), void *ctx, mantra_ecma_error *err);

/* ---- the metadata writer ---------------------------------------------------------------------
 * Builds a metadata-only assembly (a .mibc profile is one): heaps, rows, IL method bodies, then the
 * whole PE file. Rows are given as mantra_md_row returns them (coded indexes as tokens, heap
 * indexes from the mantra_md_add_* calls) and must be added in each table's required order (the
 * writer checks nothing of the meaning, only that every index it encodes fits). The file is
 * deterministic: no time stamp, a fixed layout (PE32, one .text section at RVA 0x2000 holding the
 * CLI header, the method bodies and the metadata). Errors are sticky: after one, every call returns
 * 0 (or the error) and mantra_md_write_pe reports it. */
typedef struct mantra_md_builder mantra_md_builder;

mantra_md_builder *mantra_md_builder_new(void);
void mantra_md_builder_free(mantra_md_builder *b);
/* Heap entries (deduplicated): the index of s (UTF-8) in #Strings ("" is 0), of a blob in #Blob (the
 * empty blob is 0), of a GUID in #GUID (1-based), of a user string in #US (its token is
 * 0x70000000 | index). 0 after an error (also for the GUID: check mantra_md_builder_status). */
uint32_t mantra_md_add_string(mantra_md_builder *b, const char *s);
uint32_t mantra_md_add_blob(mantra_md_builder *b, const void *data, size_t size);
uint32_t mantra_md_add_guid(mantra_md_builder *b, const mantra_guid *g);
uint32_t mantra_md_add_user_string(mantra_md_builder *b, const char *utf8);
/* Appends a row; its row number (1-based), 0 after an error (MANTRA_EINVAL: no such table or more
 * than 0xFFFFFF rows). */
uint32_t mantra_md_add_row(mantra_md_builder *b, unsigned table, const uint32_t values[MANTRA_MD_MAX_COLUMNS]);
/* The number of rows added to table so far. */
uint32_t mantra_md_builder_rows(const mantra_md_builder *b, unsigned table);
/* Appends an IL method body (§25.4: a tiny header when it can, else a fat one with max_stack and
 * no locals); its RVA for the MethodDef row, 0 after an error. */
uint32_t mantra_md_add_method_body(mantra_md_builder *b, const uint8_t *il, size_t size, uint16_t max_stack);
/* MANTRA_OK or the first error (MANTRA_ENOMEM, MANTRA_EINVAL, MANTRA_ERANGE: an index or a heap
 * too large for the format). */
int mantra_md_builder_status(const mantra_md_builder *b);
/* The whole file (malloc'd, *size bytes): the PE headers, the CLI header (IL only), the bodies, the
 * metadata (version "v4.0.30319"). MANTRA_OK or the builder's error. */
int mantra_md_write_pe(const mantra_md_builder *b, uint8_t **out, size_t *size);

MANTRA_END_DECLS

#endif
