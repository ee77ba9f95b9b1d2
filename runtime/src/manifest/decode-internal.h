/* The manifest decoder with descriptions: for the reader (layer 3), which shows events decoded with a
 * manifest through its own field descriptions (mantra_trace_metadata.fields). */
#ifndef MANTRA_MANIFEST_DECODE_INTERNAL_H
#define MANTRA_MANIFEST_DECODE_INTERNAL_H

#include "mantra/manifest.h"

/* mantra_manifest_decode() that also sets each value's `field`: descs[0..tpl->field_count) is a
 * description tree shaped like the template (arrays' element, a struct's element object with one
 * member description per member), as rd_manifest_fields() builds it; NULL leaves `field` NULL. */
int mf_decode_described(const mantra_manifest_template *tpl, const mantra_field_desc *descs, const uint8_t *payload,
                        size_t size, unsigned pointer_size, const mantra_field_visitor *visitor, void *ctx,
                        mantra_manifest_decode_info *info);

/* Struct layout C (mantra_manifest_field.layout): a member's alignment (GUID 4, Pointer the pointer
 * size, else its element's size) and the size of one element of the struct f (each member at its
 * alignment, the end padded to the largest), with pointers of pointer_size bytes. */
size_t mf_c_align(const mantra_manifest_field *m, unsigned pointer_size);
size_t mf_c_element_size(const mantra_manifest_field *f, unsigned pointer_size);

#endif
