/* Decoding plans (field_plan.c): the top-level fields of one metadata record compiled once, when
 * the record is defined, into a flat list of steps (the load of a fixed-size scalar, a UTF-16
 * string, a varint; anything nested handed to the walking decoder of field_decode.c), so that
 * decoding an event does not walk the type description again. Values, order, offsets and results
 * are exactly those of mantra_decode_payload() over the same fields. Private to the reader. */
#ifndef MANTRA_FIELD_PLAN_INTERNAL_H
#define MANTRA_FIELD_PLAN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/arena-internal.h"
#include "mantra/reader.h"

typedef struct mantra_field_plan mantra_field_plan;

/* The plan for fields[0..count) (allocated in a), or NULL when out of memory or count is 0. */
const mantra_field_plan *rd_plan_build(cm_arena *a, const mantra_field_desc *fields, uint32_t count);
/* mantra_decode_payload(fields, count, payload, size, ..., visitor, ctx) through the plan: the same
 * calls of the visitor and the same result. */
int rd_plan_decode(const mantra_field_plan *plan, const uint8_t *payload, size_t size,
                   const mantra_field_visitor *visitor, void *ctx);
/* The same without a visitor: 0 when the payload holds the fields exactly, 1 when bytes remain, a
 * negative MANTRA_E* code when it ends inside a field or holds a bad value. */
int rd_plan_check(const mantra_field_plan *plan, const uint8_t *payload, size_t size);

/* field_plan.c: the end of the UTF-16LE string at pos of p[0..size) (the offset after its
 * terminator, the first 0 code unit from pos in steps of 2), or 0 when the payload ends first. */
size_t rd_str16_end(const uint8_t *p, size_t size, size_t pos);

/* field_decode.c: decodes the one field f at *pos of payload[0..size) at depth 0 with the walking
 * decoder (mantra_decode_payload's step for one top-level field); *pos moves past it. */
int rd_decode_one_field(const mantra_field_desc *f, const uint8_t *payload, size_t size, size_t *pos,
                        const mantra_field_visitor *visitor, void *ctx);

#endif
