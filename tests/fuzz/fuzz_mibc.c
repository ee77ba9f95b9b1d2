/* Fuzz target: the .mibc reader of `mantra pgo` (tools/mantra/pgo_mibc_read.c with its ZIP, inflate,
 * name and metadata readers). The input is read as a .mibc file named fuzz.mibc (a ZIP archive, or
 * the plain assembly); whatever it accepts must be a profile whose every method writes as text.
 * Seeds: corpus/mibc (made by `mantra pgo --format mibc`: plain, stored ZIP, deflated ZIP). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgo_mibc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    pgo_profile p;
    pgo_assemblies s;
    memset(&p, 0, sizeof p);
    memset(&s, 0, sizeof s);
    static FILE *sink;
    if (sink == NULL && (sink = fopen("/dev/null", "w")) == NULL)
        abort();
    if (pgo_read_mibc_bytes(&p, &s, "fuzz.mibc", data, size) == 0 && pgo_write_text(sink, &p) < -1)
        abort();
    pgo_profile_free(&p);
    pgo_assemblies_free(&s);
    return 0;
}
