/* Fuzz target: the interpreter's assembler (runtime/src/interp/asm_*.c) and loader. Input: any
 * bytes as assembly text. A text that assembles is loaded in every PGO mode (mode 2 with a
 * filter that takes every other method), and every byte of the loaded code is mapped back to its
 * method and IL offset. Programs are never run (a fuzzed program may loop forever). Every failure
 * must come with a located diagnostic. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mantra/interp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    mantra_interp_module *m = NULL;
    mantra_interp_diag d;
    int rc = mantra_interp_assemble((const char *)data, size, "fuzz.masm", &m, &d);
    if (rc != 0) {
        if (rc == MANTRA_EFORMAT && (d.line == 0 || d.col == 0 || strncmp(d.text, "fuzz.masm:", 10) != 0))
            abort(); /* every error is located */
        return 0;
    }
    for (int mode = 0; mode <= 2; mode++) {
        mantra_interp_load_options o;
        mantra_interp_load_options_init(&o);
        o.pgo_mode = mode;
        o.pgo_methods = mode == 2 ? "*a*,?" : "";
        mantra_interp_program *p = NULL;
        if (mantra_interp_load(m, &o, &p) != 0)
            continue;
        size_t n = mantra_interp_module_method_count(m);
        for (size_t i = 0; i < n; i++) {
            const uint8_t *code;
            size_t csize;
            mantra_interp_probes pr;
            mantra_interp_method_identity id;
            if (mantra_interp_program_code(p, i, &code, &csize) != 0 ||
                mantra_interp_program_probes(p, i, &pr) != 0 || mantra_interp_module_method(m, i, &id) != 0)
                abort();
            for (size_t k = 0; k < csize; k++) {
                size_t mi;
                uint32_t il;
                if (mantra_interp_program_locate(p, code + k, &mi, &il) != 0 || mi != i || il >= id.il_size)
                    abort();
                sink += il;
            }
            for (uint32_t k = 0; k < pr.count; k++)
                if (pr.il_offsets[k] >= id.il_size || (k > 0 && pr.il_offsets[k] <= pr.il_offsets[k - 1]))
                    abort();
        }
        mantra_interp_program_free(p);
    }
    mantra_interp_module_free(m);
    return 0;
}
