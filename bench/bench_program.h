/* bench_program.h - an interpreter program's source file read and assembled for the benchmark
 * programs (bench_file.h's reader), errors printed with the benchmark's name. */
#ifndef MANTRA_BENCH_PROGRAM_H
#define MANTRA_BENCH_PROGRAM_H

#include <stdio.h>
#include <stdlib.h>

#include "bench_file.h"
#include "mantra/interp.h"

/* The module of the program in file, or NULL (the reason printed as "NAME: ..." or the
 * assembler's FILE:LINE:COL message). */
static inline mantra_interp_module *bench_assemble(const char *name, const char *file) {
    size_t size;
    char *text = bench_read_file(file, &size);
    if (text == NULL) {
        fprintf(stderr, "%s: cannot read %s (run from the source root or pass -f)\n", name, file);
        return NULL;
    }
    mantra_interp_module *m = NULL;
    mantra_interp_diag d;
    if (mantra_interp_assemble(text, size, file, &m, &d) != 0) {
        fprintf(stderr, "%s\n", d.text);
        m = NULL;
    }
    free(text);
    return m;
}

#endif
