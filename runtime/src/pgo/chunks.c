/* Cutting an encoded blob into JitInstrumentationDataVerbose chunks (mantra/pgo.h). Facts:
 * dotnet/runtime src/coreclr/vm/eventtrace.cpp (ETW::MethodLog::LogMethodInstrumentationData):
 * chunks of 40,000 bytes, MethodFlags = chunk index | 0x80000000 on the last, the last being the
 * first whose remaining length is <= 40,000; a zero-length blob emits nothing. */
#include "pgo-internal.h"

size_t mantra_pgo_chunk_count(size_t size) { return size == 0 ? 0 : (size - 1) / MANTRA_PGO_CHUNK_MAX + 1; }

int mantra_pgo_chunk(size_t size, size_t index, uint32_t *flags, size_t *offset, size_t *length) {
    size_t n = mantra_pgo_chunk_count(size);
    if (index >= n || index >= MANTRA_PGO_CHUNK_FINAL)
        return MANTRA_EINVAL;
    size_t off = index * MANTRA_PGO_CHUNK_MAX;
    size_t len = size - off <= MANTRA_PGO_CHUNK_MAX ? size - off : MANTRA_PGO_CHUNK_MAX;
    if (flags != NULL)
        *flags = (uint32_t)index | (index + 1 == n ? MANTRA_PGO_CHUNK_FINAL : 0u);
    if (offset != NULL)
        *offset = off;
    if (length != NULL)
        *length = len;
    return MANTRA_OK;
}
