/* pgo_test_assembly - writes an assembly for the profile tests (tests/tools/pgo_merge_props.py) with
 * mantra's metadata writer: assembly "app" 1.0.0.0, TypeRef System.Object (System.Runtime), TypeDefs
 * <Module>, Ns.C with the static methods M0 .. M{N-1} (void ()), and Ns.D.
 *
 *   pgo_test_assembly OUT.dll N
 */
#include <stdio.h>
#include <stdlib.h>

#include "mantra/ecma.h"

#define ROW(...) ((const uint32_t[MANTRA_MD_MAX_COLUMNS]){__VA_ARGS__})

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: pgo_test_assembly OUT.dll N\n");
        return 2;
    }
    unsigned n = (unsigned)strtoul(argv[2], NULL, 10);
    static const uint8_t sig[] = {0x00, 0x00, 0x01};
    const mantra_guid mvid = {0x0a0b0c0d, 1, 2, {3, 4, 5, 6, 7, 8, 9, 10}};
    mantra_md_builder *b = mantra_md_builder_new();
    if (b == NULL)
        return 1;
    mantra_md_add_row(b, MANTRA_MD_MODULE, ROW(0, mantra_md_add_string(b, "app.dll"), mantra_md_add_guid(b, &mvid), 0, 0));
    mantra_md_add_row(b, MANTRA_MD_ASSEMBLY, ROW(0x8004, 1, 0, 0, 0, 0, 0, mantra_md_add_string(b, "app"), 0));
    mantra_md_add_row(b, MANTRA_MD_ASSEMBLY_REF, ROW(10, 0, 0, 0, 0, 0, mantra_md_add_string(b, "System.Runtime"), 0, 0));
    mantra_md_add_row(b, MANTRA_MD_TYPE_REF, ROW(MANTRA_MD_TOKEN(MANTRA_MD_ASSEMBLY_REF, 1),
                                                 mantra_md_add_string(b, "Object"), mantra_md_add_string(b, "System")));
    uint32_t ns = mantra_md_add_string(b, "Ns"), object = MANTRA_MD_TOKEN(MANTRA_MD_TYPE_REF, 1);
    mantra_md_add_row(b, MANTRA_MD_TYPE_DEF, ROW(0, mantra_md_add_string(b, "<Module>"), 0, 0, 1, 1));
    mantra_md_add_row(b, MANTRA_MD_TYPE_DEF, ROW(0x100001, mantra_md_add_string(b, "C"), ns, object, 1, 1));
    mantra_md_add_row(b, MANTRA_MD_TYPE_DEF, ROW(0x100001, mantra_md_add_string(b, "D"), ns, object, 1, n + 1));
    uint32_t blob = mantra_md_add_blob(b, sig, sizeof sig);
    char name[32];
    for (unsigned i = 0; i < n; i++) {
        snprintf(name, sizeof name, "M%u", i);
        mantra_md_add_row(b, MANTRA_MD_METHOD_DEF, ROW(0, 0, 0x16, mantra_md_add_string(b, name), blob, 1));
    }
    uint8_t *d;
    size_t size;
    if (mantra_md_write_pe(b, &d, &size) != MANTRA_OK)
        return 1;
    mantra_md_builder_free(b);
    FILE *f = fopen(argv[1], "wb");
    if (f == NULL || fwrite(d, 1, size, f) != size || fclose(f) != 0)
        return 1;
    free(d);
    return 0;
}
