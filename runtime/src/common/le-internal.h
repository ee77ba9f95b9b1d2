/* le-internal.h - little-endian stores at unaligned addresses, and .NET GUIDs in their wire layout
 * (the loads are the public mantra_load_u16/u32/u64 of mantra/decode.h; nettrace and payloads are
 * little-endian and mantra/event.h refuses big-endian hosts, so these are plain copies). Private. */
#ifndef MANTRA_LE_INTERNAL_H
#define MANTRA_LE_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "mantra/decode.h" /* the loads: mantra_load_u16/u32/u64 */

/* A .NET GUID as payloads and nettrace rows hold it (16 bytes: Data1 uint32, Data2 and Data3
 * uint16, little-endian; Data4 8 bytes as they are). */
static inline void cm_load_guid(mantra_guid *g, const uint8_t *p) {
    g->data1 = mantra_load_u32(p);
    g->data2 = mantra_load_u16(p + 4);
    g->data3 = mantra_load_u16(p + 6);
    memcpy(g->data4, p + 8, 8);
}

/* Each stores v at p and returns the address after it. */
static inline uint8_t *cm_store_u16(uint8_t *p, uint16_t v) { memcpy(p, &v, sizeof v); return p + sizeof v; }
static inline uint8_t *cm_store_u32(uint8_t *p, uint32_t v) { memcpy(p, &v, sizeof v); return p + sizeof v; }
static inline uint8_t *cm_store_u64(uint8_t *p, uint64_t v) { memcpy(p, &v, sizeof v); return p + sizeof v; }
/* Stores a GUID in the layout cm_load_guid reads. */
static inline uint8_t *cm_store_guid(uint8_t *p, const mantra_guid *g) {
    p = cm_store_u32(p, g->data1);
    p = cm_store_u16(p, g->data2);
    p = cm_store_u16(p, g->data3);
    memcpy(p, g->data4, 8);
    return p + 8;
}

#endif
