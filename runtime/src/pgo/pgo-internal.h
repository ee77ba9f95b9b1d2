/* pgo-internal.h - shared by the files of runtime/src/pgo (mantra/pgo.h). Private. */
#ifndef MANTRA_PGO_INTERNAL_H
#define MANTRA_PGO_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "mantra/pgo.h"

#include "dotnet_defs.h" /* MANTRA_PGO_<Name>: the kinds of manifest/dotnet.yaml */

/* Element type of a kind (the low nibble: None, FourByte, EightByte, TypeHandle, MethodHandle). */
static inline int pg_elem(int32_t kind) { return (int)((uint32_t)kind & MANTRA_PGO_MARSHAL_MASK); }
/* The manifest's size of an element type (kinds.c): bytes, -1 pointer-sized, -2 not declared. */
extern const signed char pg_elem_sizes[17];
static inline int pg_elem_size(int elem) { return pg_elem_sizes[elem & MANTRA_PGO_MARSHAL_MASK] - 2; }
/* 1 when the manifest declares the kind's element type. */
static inline int pg_elem_known(int32_t kind) { return pg_elem_size(pg_elem(kind)) != -2; }

/* Relaxed atomic access to counters and handle slots (plain uint32_t / uint64_t / uintptr_t
 * memory that mantra_pgo_count() increments with the same builtins). */
#define PG_LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define PG_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define PG_XCHG(p, v) __atomic_exchange_n((p), (v), __ATOMIC_RELAXED)

/* The store's view of a method's instrumentation (store.c), immutable once published. */
typedef struct pg_instr {
    mantra_pgo_schema *schema;
    size_t records;
    size_t *offsets;   /* per record, mantra_pgo_layout with sizeof(void *) */
    size_t size;       /* bytes of data */
    unsigned char *data; /* never freed */
    uint32_t *slots;   /* per record with FourByte elements: the slot of its first element */
} pg_instr;

#define PG_NO_SLOT UINT32_MAX

const pg_instr *pg_method_instr(const mantra_pgo_method *m);

/* The store's lock (store.c): registration, instrumentation, thread cells, resets. 0 or
 * MANTRA_ENOMEM (the lock could not be created). */
int pg_lock(void);
void pg_unlock(void);

/* thread_counters.c: reserves n per-thread slots (lock held); the first, or PG_NO_SLOT when the
 * slot space is full. */
uint32_t pg_reserve_slots(uint32_t n);
/* The sum over every thread's cells of slot (mod 2^32). */
uint32_t pg_thread_sum(uint32_t slot);

#endif
