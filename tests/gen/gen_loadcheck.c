/* gen_loadcheck: loads one manifest with the runtime's manifest loader (mantra_manifest_load_file)
 * and prints its first diagnostic as mantra-gen would, `FILE:LINE:COL: error: MESSAGE` (and a
 * `FILE:LINE:COL: note: HINT` line when the loader gives a hint), on stdout. Exit status: 0 the
 * manifest loads, 1 it is rejected, 2 usage, 77 libmantra was built without libyaml. Used by
 * tests/gen/test_generator.py to compare the runtime loader with the generator over the
 * tests/gen/invalid corpus. */
#include <stdio.h>
#include <stdlib.h>

#include "mantra/manifest.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: gen_loadcheck MANIFEST.yaml\n");
        return 2;
    }
    if (!mantra_manifest_supported()) {
        fprintf(stderr, "gen_loadcheck: libmantra was built without libyaml\n");
        return 77;
    }
    mantra_manifest_error *err = NULL;
    mantra_manifest *m = mantra_manifest_load_file(argv[1], &err);
    if (m != NULL) {
        mantra_manifest_free(m);
        return 0;
    }
    if (err == NULL) {
        fprintf(stderr, "gen_loadcheck: %s: rejected without an error object\n", argv[1]);
        return 1;
    }
    size_t need = mantra_manifest_error_format(err, NULL, 0);
    char *text = malloc(need + 1);
    if (text == NULL) {
        mantra_manifest_error_free(err);
        return 1;
    }
    mantra_manifest_error_format(err, text, need + 1);
    printf("%s\n", text);
    const char *note = mantra_manifest_error_note(err);
    if (note != NULL)
        printf("%s:%u:%u: note: %s\n", mantra_manifest_error_file(err), mantra_manifest_error_line(err),
               mantra_manifest_error_column(err), note);
    free(text);
    mantra_manifest_error_free(err);
    return 1;
}
