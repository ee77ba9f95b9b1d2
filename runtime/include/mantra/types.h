/* mantra/types.h - the field types of events (one enum for traces, the writer and manifests). */
#ifndef MANTRA_TYPES_H
#define MANTRA_TYPES_H

#include <stdint.h>

#include "mantra/status.h"

MANTRA_BEGIN_DECLS

/* Field types, one vocabulary for trace metadata (the reader), the metadata builder (the writer) and
 * run-time manifests. The values 0..26 are nettrace's type codes: System.TypeCode plus Guid 17 and
 * Array 19 (V4/V5 metadata) and 20..26 (V6 only), as TraceEvent reads them (microsoft/perfview,
 * src/TraceEvent/EventPipe/EventPipeMetadata.cs, the TypeCode switch of the field parser, and
 * NetTraceFormat.md's type table). */
enum mantra_type {
    MANTRA_TYPE_EMPTY = 0,
    MANTRA_TYPE_OBJECT = 1,
    MANTRA_TYPE_DBNULL = 2,
    MANTRA_TYPE_BOOLEAN = 3, /* 4 bytes */
    MANTRA_TYPE_CHAR = 4,    /* one UTF-16 code unit */
    MANTRA_TYPE_SBYTE = 5,
    MANTRA_TYPE_BYTE = 6,
    MANTRA_TYPE_INT16 = 7,
    MANTRA_TYPE_UINT16 = 8,
    MANTRA_TYPE_INT32 = 9,
    MANTRA_TYPE_UINT32 = 10,
    MANTRA_TYPE_INT64 = 11,
    MANTRA_TYPE_UINT64 = 12,
    MANTRA_TYPE_SINGLE = 13,
    MANTRA_TYPE_DOUBLE = 14,
    MANTRA_TYPE_DECIMAL = 15, /* 16 bytes, delivered raw */
    MANTRA_TYPE_DATETIME = 16, /* FILETIME */
    MANTRA_TYPE_GUID = 17,
    MANTRA_TYPE_STRING = 18, /* UTF-16LE, NUL-terminated */
    MANTRA_TYPE_ARRAY = 19,  /* uint16 count + elements */
    MANTRA_TYPE_VARINT = 20,
    MANTRA_TYPE_VARUINT = 21,
    MANTRA_TYPE_FIXED_ARRAY = 22,
    MANTRA_TYPE_UTF8_CODE_UNIT = 23,
    MANTRA_TYPE_RELLOC = 24,
    MANTRA_TYPE_DATALOC = 25,
    MANTRA_TYPE_BOOLEAN8 = 26,
    /* Not nettrace type codes: the manifest types that have none. */
    MANTRA_TYPE_STRING8 = 0x100, /* AnsiString: NUL-terminated bytes (UTF-8); a reader's mantra_value
                                    holds them without the NUL (fields from mantra_reader_add_manifest) */
    MANTRA_TYPE_POINTER = 0x101, /* an address of the trace's pointer size (4 or 8 bytes) */
    MANTRA_TYPE_BINARY = 0x102   /* raw bytes whose length is a number or another field */
};

/* The .NET name of a type ("UInt32", "Guid", "String8", "Pointer", "Binary"); "?" when unknown. The
 * manifest spelling of the same types ("UInt32", "GUID", "AnsiString") is
 * mantra_manifest_type_name() (mantra/manifest.h). */
const char *mantra_type_name(uint32_t type);

MANTRA_END_DECLS

#endif /* MANTRA_TYPES_H */
