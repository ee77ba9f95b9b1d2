/* mantra/pgo.h - profile-guided optimisation data: instrumentation kinds, per-method counters,
 * the CoreCLR PgoFormat codec, JitInstrumentationData chunking and reassembly, and the CLR text
 * format (DOTNET_WritePGOData / DOTNET_ReadPGOData).
 *
 * Format facts come from dotnet/runtime (src/coreclr/inc/corjit.h, src/coreclr/inc/
 * pgo_formatprocessing.h, src/coreclr/vm/pgo.cpp, src/coreclr/vm/eventtrace.cpp,
 * src/coreclr/tools/Common/Pgo/PgoFormat.cs, src/coreclr/tools/dotnet-pgo/Program.cs), as
 * summarised in docs/pgo.md; no code was copied.
 *
 * The pieces:
 *   - kinds, element sizes and the in-memory layout of a schema (mantra_pgo_layout);
 *   - the process-wide store: modules, methods, one instrumentation (schema + counters) per
 *     method, counters that live as long as the process; iteration and snapshots;
 *   - the codec: compressed 64-bit integers and the schema+data record stream of one method;
 *   - chunking of an encoded blob into JitInstrumentationDataVerbose payloads, and reassembly of
 *     chunks by dotnet-pgo's rules;
 *   - the CLR text format: a writer and a parser.
 *
 * Data values: the codec, the text format and snapshots carry a method's data as one array of
 * int64_t "values", the elements of every record whose element size is not 0, in schema order
 * (record i's Count elements follow those of records 0..i-1). A value is what the runtime's
 * serializer sees: a FourByte slot as a signed int32 sign-extended (so a uint32 counter of 2^31
 * or more is negative), an EightByte slot as int64, a handle as a pointer-sized integer.
 */
#ifndef MANTRA_PGO_H
#define MANTRA_PGO_H

#include <stddef.h>
#include <stdint.h>

#include "mantra/event.h" /* mantra_guid */
#include "mantra/status.h"

MANTRA_BEGIN_DECLS

/* ---- kinds (PgoInstrumentationKind: corjit.h, PgoFormat.cs) --------------------------------
 * The kinds are declared once, in the manifest (manifest/dotnet.yaml `pgo_kinds`: name, value,
 * element size), and generated into dotnet_defs.h: MANTRA_PGO_<Name> (MANTRA_PGO_BasicBlockIntCount),
 * MANTRA_PGO_<Name>_SIZE and the table MANTRA_PGO_KINDS(X). libmantra is built from that table
 * (runtime/src/pgo/kinds.c): the element types (the kinds None, FourByte, EightByte, TypeHandle and
 * MethodHandle, whose values are below 0x10) give the element sizes of the codec, the store and the
 * text format, and the calls below name kinds. A kind value the manifest does not declare passes
 * through as the CLR passes it, by its element type; it has no name.
 *
 * A kind value's bits (corjit.h): the low nibble is the element type, bits 4-5 an extra alignment,
 * the rest the descriptor (0x40 * n); kind 0 (None) also ends a record stream ("Done"). */
#define MANTRA_PGO_MARSHAL_MASK 0x00F
#define MANTRA_PGO_ALIGN_MASK 0x030
#define MANTRA_PGO_ALIGN_4_BYTE 0x010
#define MANTRA_PGO_ALIGN_8_BYTE 0x020
#define MANTRA_PGO_ALIGN_POINTER 0x030
#define MANTRA_PGO_DESCRIPTOR_MIN 0x040
/* DescriptorMask = ~(MarshalMask | AlignMask) */
#define MANTRA_PGO_DESCRIPTOR_MASK (~0x3F)
/* The largest Count a record without data (element type None: Version, NumRuns) may have: the CLR's
 * text format writes one line per element even there, so decoders refuse more (MANTRA_EFORMAT)
 * rather than let a few bytes of input ask for gigabytes of output. */
#define MANTRA_PGO_NONE_COUNT_MAX 65536
/* Handle values 1..33 mean "a type/method that could not be named"; 0 is null (corjit.h). */
#define MANTRA_PGO_UNKNOWN_HANDLE_MIN 1
#define MANTRA_PGO_UNKNOWN_HANDLE_MAX 33

/* One schema record (ICorJitInfo::PgoInstrumentationSchema without Offset). */
typedef struct mantra_pgo_schema {
    int32_t kind; /* a MANTRA_PGO_<Name> of the manifest (or an unknown descriptor over a known element type) */
    int32_t il_offset;
    int32_t count; /* elements of data (for Version and NumRuns: 1, the value is in other) */
    int32_t other;
} mantra_pgo_schema;

/* One kind of the manifest: its name, value and element size in bytes (0 none, -1 pointer-sized). */
typedef struct mantra_pgo_kind_info {
    const char *name;
    int32_t value;
    int size;
} mantra_pgo_kind_info;
/* The kinds libmantra was built with, in the manifest's order; *count (may be NULL) their number. */
const mantra_pgo_kind_info *mantra_pgo_kinds(size_t *count);
/* The name of a kind value ("BasicBlockIntCount"), NULL when the manifest does not declare it. */
const char *mantra_pgo_kind_name(int32_t kind);
/* The value of the kind named name: MANTRA_OK and *kind, or MANTRA_EINVAL when none is so named. */
int mantra_pgo_kind_by_name(const char *name, int32_t *kind);

/* Element size in bytes of kind (pgo_formatprocessing.h): the size the manifest gives its element
 * type (None 0, FourByte 4, EightByte 8, Type/MethodHandle pointer_size). MANTRA_EINVAL for an
 * element type the manifest does not declare (low nibble 5..15) or a pointer_size other than 4
 * or 8. */
int mantra_pgo_element_size(int32_t kind, unsigned pointer_size);
/* Alignment in bytes: 0x10 -> 4, 0x20 -> 8, 0x30 -> pointer_size, else the element size (0 for
 * None). MANTRA_EINVAL as above. */
int mantra_pgo_element_align(int32_t kind, unsigned pointer_size);
/* 1 when the record carries data elements (element size not 0), else 0. */
int mantra_pgo_has_data(int32_t kind);
/* Data values of a schema: the sum of count over records with data; MANTRA_EINVAL (negative)
 * for a negative count. */
int64_t mantra_pgo_value_count(const mantra_pgo_schema *schema, size_t records);

/* The in-memory layout of LayoutPgoInstrumentationSchema (pgo_formatprocessing.h): record i with
 * data starts at AlignUp(previous start + size(previous kind) * previous count, align(kind)); a
 * record without data takes the previous record's start. Fills offsets[i] (may be NULL) and *size
 * (the end of the last byte of data, may be NULL). MANTRA_EINVAL for an unknown element type,
 * count < 0, a bad pointer_size, or an overflow. */
int mantra_pgo_layout(const mantra_pgo_schema *schema, size_t records, unsigned pointer_size, size_t *offsets,
                      size_t *size);

/* Checks that a schema can be allocated and encoded: records > 0; every element type known;
 * count >= 0; no kind Done (0) inside the schema; no record identical to the one before it (its
 * mask would be 0, which the readers cannot represent); no record whose data would overlap the
 * data of an earlier record under the layout rule (a record with data after a size-0 record that
 * follows a record with data). MANTRA_OK, or MANTRA_EINVAL with the index of the first bad record
 * in *bad_record (may be NULL). */
int mantra_pgo_schema_check(const mantra_pgo_schema *schema, size_t records, size_t *bad_record);

/* ---- the process-wide store: modules and methods -------------------------------------------
 * Registration takes a lock; everything registered lives until the process exits (the counters
 * outlive every session). Handles are never freed. */
typedef struct mantra_pgo_module mantra_pgo_module;
typedef struct mantra_pgo_method mantra_pgo_method;

typedef struct mantra_pgo_module_info {
    const char *name;
    const char *path;
    mantra_guid guid;
    uint32_t index; /* 1, 2, ... in registration order (usable as a ModuleID) */
} mantra_pgo_module_info;

typedef struct mantra_pgo_method_info {
    const mantra_pgo_module *module;
    uint32_t token;       /* metadata token (0x06xxxxxx for a MethodDef) */
    const char *name_space; /* namespace and class, "Ns.Class" ("" when none) */
    const char *name;
    const char *signature;
    uint32_t il_size;     /* bytecode size */
    uint32_t index;       /* 1, 2, ... in registration order over all modules (a MethodID) */
    uint32_t code_hash;   /* the text format's codehash (mantra_pgo_method_set_code_hash; 0 when unset) */
} mantra_pgo_method_info;

/* Registers a module (strings are copied). A module with the same GUID, name and path is the same
 * module: its handle is returned again. MANTRA_EINVAL for NULL arguments, MANTRA_ENOMEM. */
int mantra_pgo_module_register(const char *name, const char *path, const mantra_guid *guid,
                               mantra_pgo_module **out);
/* Registers a method of module (strings copied; NULL strings are stored as ""). The same module and
 * token again returns the existing method. MANTRA_EINVAL, MANTRA_ENOMEM. */
int mantra_pgo_method_register(mantra_pgo_module *module, uint32_t token, const char *name_space, const char *name,
                               const char *signature, uint32_t il_size, mantra_pgo_method **out);
void mantra_pgo_module_describe(const mantra_pgo_module *module, mantra_pgo_module_info *out);
void mantra_pgo_method_describe(const mantra_pgo_method *method, mantra_pgo_method_info *out);

/* ---- the text format's method key (codehash, methodhash) -----------------------------------
 * The CLR keys DOTNET_ReadPGOData entries by (GetVersionResilientILCodeHashCode, the MethodDesc's
 * stable hash); mantra has neither, so it defines (docs/pgo.md "Method hashes"):
 *   codehash   = mantra_pgo_hash32 of the method's bytecode (its own IL, without probes), set by the
 *                host when it registers the method (mantra_pgo_method_set_code_hash);
 *   methodhash = mantra_pgo_hash32 of the module GUID's 16 bytes (.NET layout: Data1..Data3
 *                little-endian, then Data4) followed by the token's 4 bytes little-endian.
 * mantra_pgo_hash32 is 32-bit FNV-1a (offset basis 0x811C9DC5, prime 0x01000193). */
#define MANTRA_PGO_HASH32_INIT 0x811C9DC5u
uint32_t mantra_pgo_hash32(uint32_t hash, const void *bytes, size_t size);
void mantra_pgo_method_set_code_hash(mantra_pgo_method *method, uint32_t code_hash);
/* The method's (codehash, methodhash) as defined above (either pointer may be NULL). */
void mantra_pgo_method_hashes(const mantra_pgo_method *method, uint32_t *codehash, uint32_t *methodhash);

/* Allocates method's instrumentation from schema (copied; immutable from then on): zeroed data laid
 * out by mantra_pgo_layout with the host's pointer size, in memory the library never frees. The
 * schema must pass mantra_pgo_schema_check (else MANTRA_EINVAL). A method is instrumented once:
 * the same schema again is MANTRA_OK (the counters are kept), a different one MANTRA_ESTATE. */
int mantra_pgo_method_instrument(mantra_pgo_method *method, const mantra_pgo_schema *schema, size_t records);
/* The method's schema (NULL and *records = 0 when not instrumented). */
const mantra_pgo_schema *mantra_pgo_method_schema(const mantra_pgo_method *method, size_t *records);
/* The first element of record's data (the shared cells; a FourByte counter's value also includes
 * the per-thread cells: read it with mantra_pgo_snapshot), or NULL (not instrumented, record out of
 * range, or a record without data). The typed forms also return NULL when the element type
 * differs: _u32 FourByte, _u64 EightByte, _handles Type/MethodHandle (uintptr_t slots). */
void *mantra_pgo_record_data(const mantra_pgo_method *method, size_t record);
uint32_t *mantra_pgo_counters_u32(const mantra_pgo_method *method, size_t record);
uint64_t *mantra_pgo_counters_u64(const mantra_pgo_method *method, size_t record);
uintptr_t *mantra_pgo_handles(const mantra_pgo_method *method, size_t record);

/* ---- counting -------------------------------------------------------------------------------
 * Two ways to count, both lock-free, both wrapping at 2^32 for uint32 counters (unsigned
 * arithmetic, never a signed overflow), both seen by snapshots (a counter's value is its shared
 * cell plus the sum of its per-thread cells):
 *
 *  - per-thread (the fast path, what the interpreter's probe uses): every uint32 (FourByte)
 *    element of an instrumented method has a slot number (mantra_pgo_counter_slot); a thread
 *    attaches once (mantra_pgo_thread_attach) and increments its own cell of that slot with
 *    mantra_pgo_count_slot: a relaxed load and store, no lock prefix, no sharing. Snapshots sum
 *    the cells of every thread, attached or detached. Measured in bench/pgo_counters.c: about
 *    +0.01 ns per probe over the loop's work, on 1 and on 2 threads.
 *  - shared: mantra_pgo_count(pointer from mantra_pgo_counters_u32) is a relaxed atomic fetch-add
 *    on the method's own cell; simple, but about +5 ns per probe on 1 thread and +18 ns with 2
 *    threads counting the same probe (docs/pgo.md). EightByte counters are counted this way only
 *    (mantra_pgo_count_u64).
 */
#if !defined(__GNUC__) && !defined(__clang__)
#error "mantra/pgo.h needs the GCC/Clang __atomic builtins"
#endif
static inline void mantra_pgo_count(uint32_t *counter) { (void)__atomic_fetch_add(counter, 1u, __ATOMIC_RELAXED); }
static inline void mantra_pgo_count_u64(uint64_t *counter) {
    (void)__atomic_fetch_add(counter, (uint64_t)1, __ATOMIC_RELAXED);
}

/* Per-thread counter cells: slot s lives in pages[s >> MANTRA_PGO_PAGE_SHIFT], cell s & (page
 * size - 1). Only the owning thread writes its cells; pages are allocated on first use. */
#define MANTRA_PGO_PAGE_SHIFT 12
#define MANTRA_PGO_PAGE_SLOTS (1u << MANTRA_PGO_PAGE_SHIFT)
#define MANTRA_PGO_MAX_PAGES 4096u /* 16 Mi uint32 slots in all */
typedef struct mantra_pgo_thread {
    uint32_t *pages[MANTRA_PGO_MAX_PAGES]; /* read by snapshots with atomic loads */
    struct mantra_pgo_thread *next_;       /* private: every thread's cells, never freed */
    int attached_;                         /* private */
} mantra_pgo_thread;

/* The counter cells of the calling thread's use: a detached set when one exists (its counts stay
 * and grow), else a new one. Call once per thread and keep the pointer (the interpreter keeps it
 * in its thread state). NULL when out of memory. */
mantra_pgo_thread *mantra_pgo_thread_attach(void);
/* Gives t back for another thread to attach (its counts are kept). t must not be used after. */
void mantra_pgo_thread_detach(mantra_pgo_thread *t);
/* The slow path of mantra_pgo_count_slot: allocates page of t (called by the owning thread only).
 * NULL when out of memory or page >= MANTRA_PGO_MAX_PAGES (the count is then dropped). */
uint32_t *mantra_pgo_thread_page(mantra_pgo_thread *t, uint32_t page);
/* The slot of record's first element (element k has slot + k): MANTRA_OK, or MANTRA_EINVAL when
 * the method is not instrumented, record is out of range, or its element type is not FourByte. */
int mantra_pgo_counter_slot(const mantra_pgo_method *method, size_t record, uint32_t *slot);

/* One increment of slot in the calling thread's cells t. */
static inline void mantra_pgo_count_slot(mantra_pgo_thread *t, uint32_t slot) {
    uint32_t page = slot >> MANTRA_PGO_PAGE_SHIFT;
    uint32_t *cells = page < MANTRA_PGO_MAX_PAGES ? t->pages[page] : 0;
    if (__builtin_expect(cells == 0, 0)) {
        cells = mantra_pgo_thread_page(t, page);
        if (cells == 0)
            return;
    }
    uint32_t *c = &cells[slot & (MANTRA_PGO_PAGE_SLOTS - 1u)];
    __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1u, __ATOMIC_RELAXED);
}

/* Instrumented methods in registration order: start with prev = NULL; NULL after the last. Lock-free;
 * a method instrumented while a walk runs may or may not be seen by it. */
const mantra_pgo_method *mantra_pgo_next_method(const mantra_pgo_method *prev);

/* A method's schema and data values (see the top of this file), owned by the struct. */
typedef struct mantra_pgo_data {
    mantra_pgo_schema *schema;
    size_t records;
    int64_t *values;
    size_t value_count;
} mantra_pgo_data;
void mantra_pgo_data_free(mantra_pgo_data *d);

#define MANTRA_PGO_SNAPSHOT_RESET 1u /* restart every counter from 0 as it is read */
/* Copies method's schema and reads every element atomically (relaxed) into out (freed with
 * mantra_pgo_data_free); a FourByte counter's value is its shared cell plus every thread's cell.
 * With MANTRA_PGO_SNAPSHOT_RESET (under the store's lock), counters restart from 0: the shared
 * cell is exchanged with minus the per-thread sum just read, so an increment lands in either this
 * snapshot or the next and delta collections lose nothing. Handles are not reset.
 * MANTRA_EINVAL (not instrumented), MANTRA_ENOMEM. */
int mantra_pgo_snapshot(const mantra_pgo_method *method, unsigned flags, mantra_pgo_data *out);
/* Sets every counter and handle of method to 0 (per-thread counts included). Takes the store's lock. */
void mantra_pgo_reset(const mantra_pgo_method *method);
/* Initial values from loaded data (MANTRA_ReadPGOData): an uninstrumented method is instrumented
 * with data's schema first; then each record of data equal (kind, IL offset, count, other) to a
 * record of the method's schema, matched in order, stores its values (FourByte: the low 32 bits,
 * so that the counter's value, per-thread cells included, becomes that value).
 * Returns the number of records stored (>= 0), or MANTRA_EINVAL / MANTRA_ENOMEM. */
int mantra_pgo_set_data(mantra_pgo_method *method, const mantra_pgo_data *data);

/* ---- the codec: compressed integers (pgo_formatprocessing.h, PgoFormat.cs) -----------------
 * 1 byte for -64..63, 2 bytes for -8192..8191, 5 bytes (0xC0 + 32 bits big-endian) for int32, 9
 * bytes (0xC1 + 64 bits big-endian) otherwise. */
#define MANTRA_PGO_INT_MAX_BYTES 9
/* Writes v at out (room for MANTRA_PGO_INT_MAX_BYTES); returns the number of bytes. */
size_t mantra_pgo_int_encode(int64_t v, uint8_t *out);
/* Bytes mantra_pgo_int_encode would write. */
size_t mantra_pgo_int_size(int64_t v);
/* Reads one integer from p[0..size): the number of bytes read (1, 2, 5 or 9), or
 * MANTRA_ETRUNCATED when the form runs past size (or size is 0). */
int mantra_pgo_int_decode(const uint8_t *p, size_t size, int64_t *v);

/* ---- the codec: the schema + data record stream of one method ------------------------------
 * Per record: a mask (0x1 ILOffset, 0x2 Kind, 0x4 Count, 0x8 Other changed), the changed fields'
 * differences in that order, then (kinds with data) Count values, each the difference from the
 * previous value of its accumulator (one for FourByte and EightByte, one for TypeHandles, one for
 * MethodHandles); the stream ends with a record changing only Kind to Done. */

/* Encodes schema (which must pass mantra_pgo_schema_check) and its values (value_count =
 * mantra_pgo_value_count) into out[0..cap). Returns the size of the whole encoding (>= 0; written
 * only when it fits in cap, so a call with cap 0 measures), or MANTRA_EINVAL. */
int64_t mantra_pgo_encode(const mantra_pgo_schema *schema, size_t records, const int64_t *values, size_t value_count,
                          uint8_t *out, size_t cap);

/* Decodes one method's stream from bytes[0..size) into out (freed with mantra_pgo_data_free;
 * empty on failure). pointer_size (4 or 8) is the producer's: a 4-byte producer's handles must
 * fit in 32 bits (zero- or sign-extended). Schema fields are applied as
 * int32 (truncated, as the C++ reader does); data values are 64-bit. Unknown descriptors are
 * decoded by their element type; an unknown element type is refused. *where (may be NULL) is the
 * offset just past the Done record on success, or the offset of the offending integer on
 * failure. MANTRA_OK; MANTRA_ETRUNCATED (the bytes end before Done, or inside an integer);
 * MANTRA_EFORMAT (mask 0 or with bits above 0xF, unknown element type, negative count, a 4-byte
 * producer's handle that does not fit in 32 bits); MANTRA_EINVAL (bad arguments); MANTRA_ENOMEM. */
int mantra_pgo_decode(const uint8_t *bytes, size_t size, unsigned pointer_size, mantra_pgo_data *out, size_t *where);

/* ---- chunking into JitInstrumentationDataVerbose (event 298) payloads (eventtrace.cpp) ------
 * Chunk k of a blob carries MethodFlags = k, | 0x80000000 on the last; every chunk but the last
 * holds 40,000 bytes; a blob of 0 bytes gives no chunk. */
#define MANTRA_PGO_CHUNK_MAX 40000u
#define MANTRA_PGO_CHUNK_FINAL 0x80000000u
/* Number of chunks of a blob of size bytes. */
size_t mantra_pgo_chunk_count(size_t size);
/* Chunk index of a blob of size bytes: its MethodFlags, offset and length. MANTRA_EINVAL when
 * index >= mantra_pgo_chunk_count(size). */
int mantra_pgo_chunk(size_t size, size_t index, uint32_t *flags, size_t *offset, size_t *length);

/* ---- reassembly by dotnet-pgo's rules (dotnet-pgo Program.cs, AddToInstrumentationData) ------
 * Per method key, chunks must come in order 0, 1, 2, ...; a chunk whose index is not the previous
 * index + 1, or any chunk after the final one, discards everything held for that method (and is
 * dropped); a later chunk 0 starts the method afresh. Complete methods (final chunk seen) are handed
 * out in order of completion; incomplete ones are counted, not handed out. */
typedef struct mantra_pgo_reassembler mantra_pgo_reassembler;
typedef struct mantra_pgo_reassembly_stats {
    uint64_t chunks;              /* chunks added */
    uint64_t chunks_dropped;      /* chunks discarded, the offending ones included */
    uint64_t discard_out_of_order; /* methods discarded: a chunk index that was not previous + 1 */
    uint64_t discard_after_final; /* methods discarded: a chunk after the final chunk */
    uint64_t incomplete;          /* methods whose final chunk never came (counted by _finish) */
    uint64_t complete;            /* complete methods handed out (after _finish) */
} mantra_pgo_reassembly_stats;

mantra_pgo_reassembler *mantra_pgo_reassembler_new(void);
void mantra_pgo_reassembler_free(mantra_pgo_reassembler *r);
/* Adds one chunk of method key. Returns 0 (held), 1 (it completed the method), 2 (the method's data
 * was discarded), or MANTRA_ESTATE (after _finish) / MANTRA_ENOMEM / MANTRA_EINVAL. */
int mantra_pgo_reassembler_add(mantra_pgo_reassembler *r, uint64_t key, uint32_t method_flags, const uint8_t *data,
                               size_t size);
/* Ends the input: counts incomplete methods. Returns the number of complete methods. */
size_t mantra_pgo_reassembler_finish(mantra_pgo_reassembler *r);
/* Complete method i (0 .. count-1, in order of completion) after _finish: key and concatenated
 * bytes (owned by r). MANTRA_EINVAL when out of range, MANTRA_ESTATE before _finish. */
int mantra_pgo_reassembler_get(const mantra_pgo_reassembler *r, size_t i, uint64_t *key, const uint8_t **data,
                               size_t *size);
void mantra_pgo_reassembler_stats(const mantra_pgo_reassembler *r, mantra_pgo_reassembly_stats *out);

/* ---- the CLR text format (pgo.cpp WritePgoData / ReadPgoData) ------------------------------
 *   *** START PGO Data, max index = %u ***
 *   @@@ codehash 0x%08X methodhash 0x%08X ilSize 0x%08X records 0x%08X
 *   MethodName: %s.%s
 *   Signature: %s
 *   Schema InstrumentationKind %u ILOffset %u Count %u Other %u     (one per record, Done excluded)
 *   <Count data lines: None | %u | %u %u (low, high) | TypeHandle: NAME | MethodHandle: NAME>
 *   *** END PGO Data ***
 */
typedef int (*mantra_pgo_write_fn)(void *ctx, const char *text, size_t size);
/* A growable text buffer for the writer: pass mantra_pgo_text_buffer_write as the write function
 * and a zero-initialised mantra_pgo_text_buffer as its ctx. data holds size bytes and a NUL after
 * them (NULL before the first write); free it with mantra_pgo_text_buffer_free. */
typedef struct mantra_pgo_text_buffer {
    char *data;
    size_t size, cap;
} mantra_pgo_text_buffer;
/* Appends size bytes: 0 or MANTRA_ENOMEM (the buffer is unchanged then). */
int mantra_pgo_text_buffer_write(void *ctx, const char *text, size_t size);
void mantra_pgo_text_buffer_free(mantra_pgo_text_buffer *b);
/* The name of a handle element (record, element index within the record, element type 3 or 4,
 * value), or NULL: the writer then writes NULL for a 0 handle and UNKNOWN otherwise (names over
 * 8192 bytes too). A MethodHandle name is "method|@|assembly-qualified type". */
typedef const char *(*mantra_pgo_handle_name_fn)(void *ctx, size_t record, size_t element, int element_type,
                                                 int64_t value);

typedef struct mantra_pgo_text_method {
    uint32_t codehash;
    uint32_t methodhash;
    uint32_t il_size;
    const char *class_name;  /* MethodName: CLASS.METHOD (NULL written as "") */
    const char *method_name;
    const char *signature;   /* Signature: SIG */
    const mantra_pgo_schema *schema;
    size_t records;
    const int64_t *values;
    size_t value_count;
    mantra_pgo_handle_name_fn handle_name; /* may be NULL */
    void *handle_ctx;
} mantra_pgo_text_method;

/* The START line for method_count methods, each method's lines, the END line. Each returns 0, the
 * first non-zero result of write, or MANTRA_EINVAL (a schema record with Kind Done, a value count
 * that does not match, a line that would not be read back: a name or signature with a newline). */
int mantra_pgo_text_write_start(mantra_pgo_write_fn write, void *ctx, uint32_t method_count);
int mantra_pgo_text_write_method(mantra_pgo_write_fn write, void *ctx, const mantra_pgo_text_method *m);
int mantra_pgo_text_write_end(mantra_pgo_write_fn write, void *ctx);

/* A parsed text file. Methods are those the CLR reader would keep, in file order. */
typedef struct mantra_pgo_text mantra_pgo_text;
typedef struct mantra_pgo_text_entry {
    uint32_t codehash, methodhash, il_size;
    const char *method_line;    /* the line after @@@ without its newline (not checked, as the CLR) */
    const char *signature_line;
    mantra_pgo_data data;       /* handle values: 0 for NULL and named ones (the name is in handle_names),
                                   1 (MANTRA_PGO_UNKNOWN_HANDLE_MIN) for UNKNOWN */
    const char *const *handle_names; /* per value: the handle's name, NULL for NULL/UNKNOWN and non-handles */
    size_t line;                /* line number of the @@@ header */
} mantra_pgo_text_entry;

/* Parses size bytes of text read from path (used in messages only) as the CLR reader does: line 1
 * must be the START header; then every line that parses as an @@@ header starts a method, the next
 * two lines are skipped, then exactly `records` Schema lines each followed by exactly Count data
 * lines; a line that fails drops that method and scanning resumes after it; other lines are
 * skipped. Lines are limited to 16,383 bytes (the CLR's 16,384-byte buffer). Every dropped method
 * and a bad header is an error "PATH:LINE: message". Returns MANTRA_OK with *out set (errors or
 * not), MANTRA_EINVAL or MANTRA_ENOMEM. */
int mantra_pgo_text_parse(const char *text, size_t size, const char *path, mantra_pgo_text **out);
void mantra_pgo_text_free(mantra_pgo_text *t);
size_t mantra_pgo_text_method_count(const mantra_pgo_text *t);
const mantra_pgo_text_entry *mantra_pgo_text_entry_at(const mantra_pgo_text *t, size_t i);
size_t mantra_pgo_text_error_count(const mantra_pgo_text *t);
/* Error i, "PATH:LINE: message" (NULL when out of range). At most 1000 are kept; the count counts all. */
const char *mantra_pgo_text_error(const mantra_pgo_text *t, size_t i);
/* Lines outside any method that the reader skips (the END trailer included). */
size_t mantra_pgo_text_skipped_lines(const mantra_pgo_text *t);

/* ---- the text dump and read-back of the environment (MANTRA_WritePGOData, MANTRA_ReadPGOData) --
 * As the CLR's DOTNET_ ones (pgo.cpp): MANTRA_WritePGOData=1 with MANTRA_PGODataPath writes every
 * instrumented method in the text format at process shutdown (no file at all when no method has
 * data); MANTRA_ReadPGOData=1 (with MANTRA_WritePGOData unset or 0) and MANTRA_PGODataPath read
 * such a file once, and each method then instrumented takes the values of the entry with its
 * (codehash, methodhash) as initial counter values. */

/* Writes the dump when the environment asks for it: 1 written, 0 nothing asked or no method with
 * data (no file), or MANTRA_EIO / MANTRA_ENOMEM with the reason in *err (may be NULL). */
int mantra_pgo_text_dump_env(char *err, size_t errlen);
/* Writes every instrumented method in the text format to path: the number of methods written (0:
 * no file was created), MANTRA_EIO / MANTRA_ENOMEM / MANTRA_EINVAL. */
int mantra_pgo_text_dump(const char *path, char *err, size_t errlen);
/* Applies the environment's read-back file (parsed on first call) to method, which the host has
 * just instrumented (and given its code hash): the number of records stored, 0 when nothing
 * matched or nothing is to be read, or a negative MANTRA_E* code. */
int mantra_pgo_read_env_apply(mantra_pgo_method *method);

MANTRA_END_DECLS

#endif /* MANTRA_PGO_H */
