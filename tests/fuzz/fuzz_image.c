/* Fuzz target: the loader of precompiled images (mantra/image.h, docs/image-format.md). The input
 * is checked without its checksum (MANTRA_IMAGE_NO_CHECKSUM: random bytes reach the section, method
 * table and instruction checks behind it), and what passes is opened in place and walked: every
 * method's table entry, and IP -> (method, IL offset) at every byte of the file. Nothing runs: what
 * the verifier passes may loop forever. Seeds: corpus/image (images of the example programs). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mantra/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    mantra_image_error err;
    int ok = mantra_image_check(data, size, MANTRA_IMAGE_NO_CHECKSUM, &err) == MANTRA_OK;
    if (!ok && (err.message[0] == '\0' || err.offset > size))
        abort(); /* every refusal says why, at an offset inside the input (or its end) */
    if (mantra_image_check(data, size, 0, NULL) == MANTRA_OK && !ok)
        abort(); /* the checksum is the only check the first call skips */
    mantra_image *im = NULL;
    int rc = mantra_image_open_memory(data, size, "fuzz", MANTRA_IMAGE_NO_CHECKSUM, &im, &err);
    if ((rc == MANTRA_OK) != ok)
        abort(); /* opening makes the same checks */
    if (rc != MANTRA_OK)
        return 0;
    const mantra_interp_program *p = mantra_image_program(im);
    for (size_t i = 0; i < mantra_image_method_count(im); i++) {
        mantra_image_method_info mi;
        if (mantra_image_method(im, i, &mi) != MANTRA_OK || mi.hot_size == 0 ||
            (uint64_t)mi.hot_rva + mi.hot_size > size || (uint64_t)mi.cold_rva + mi.cold_size > size)
            abort();
        sink += strlen(mi.id.name) + strlen(mi.id.namespace_name) + strlen(mi.id.signature) + mi.id.token;
    }
    for (size_t a = 0; a < size; a++) {
        size_t method = 0;
        uint32_t il = 0;
        if (mantra_interp_program_locate(p, data + a, &method, &il) == MANTRA_OK) {
            if (method >= mantra_image_method_count(im))
                abort();
            sink += method + il;
        }
    }
    mantra_image_close(im);
    return 0;
}
