/* Names of the field types (mantra/types.h). */
#include "mantra/types.h"

const char *mantra_type_name(uint32_t type) {
    static const char *const names[] = {"Empty",   "Object",  "DBNull",  "Boolean",        "Char",
                                        "SByte",   "Byte",    "Int16",   "UInt16",         "Int32",
                                        "UInt32",  "Int64",   "UInt64",  "Single",         "Double",
                                        "Decimal", "DateTime", "Guid",   "String",         "Array",
                                        "VarInt",  "VarUInt", "FixedLengthArray", "UTF8CodeUnit", "RelLoc",
                                        "DataLoc", "Boolean8"};
    if (type < sizeof names / sizeof names[0])
        return names[type];
    switch (type) {
    case MANTRA_TYPE_STRING8: return "String8";
    case MANTRA_TYPE_POINTER: return "Pointer";
    case MANTRA_TYPE_BINARY: return "Binary";
    default: return "?";
    }
}
