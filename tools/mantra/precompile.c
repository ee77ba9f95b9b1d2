/* `mantra precompile PROGRAM --profile PROFILE -o IMAGE` (docs/cli.md "mantra precompile"): the
 * program assembled, laid out from the profile (mantra/image.h): with block counts (the profile of
 * a MANTRA_InterpPgo=2 run: a BasicBlockIntCount record at every block of the method) each block
 * that ran goes to its method's hot part and each that never ran to its cold part; with entry and
 * loop-head counts only (MANTRA_InterpPgo=1) the whole method goes hot or cold by its entry count;
 * a method the profile does not know goes cold. Hot parts are ordered by weight (the sum of the
 * method's block counts; its entry count in mode 1). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mantra/image.h"
#include "pgo_mibc.h"
#include "pgo_tool.h"
#include "tool.h"

static const char usage[] =
    "Usage: mantra precompile PROGRAM --profile PROFILE -o IMAGE\n"
    "\n"
    "Precompiles PROGRAM (interpreter assembly, docs/interp.md) into an image (docs/image-format.md)\n"
    "that `mantra run IMAGE` executes in place, laid out from PROFILE (what `mantra pgo` writes: text\n"
    "or JSON; a trace or .mibc is read the same way):\n"
    "  - block counts (a profile of a MANTRA_InterpPgo=2 run): the blocks of a method that ran form\n"
    "    its hot part, those that never ran its cold part, in the image's cold section;\n"
    "  - entry and loop-head counts only (MANTRA_InterpPgo=1): a whole method goes hot or cold by\n"
    "    its entry count;\n"
    "  - a method the profile does not know goes cold.\n"
    "Hot parts are ordered hottest first (sum of block counts), so the code that runs is dense.\n"
    "A summary goes to stderr.\n"
    "\n"
    "  --profile PROFILE   the profile (required)\n"
    "  -o IMAGE            the image to write (required)\n"
    "\n"
    "Exit status: 0 success, 1 bad input (program, profile) or a write failure, 2 usage error.\n";

static int is_block_count(int32_t kind) {
    return kind == MANTRA_PGO_BasicBlockIntCount || kind == MANTRA_PGO_BasicBlockLongCount;
}

/* The key a method is found by in the profile: "Namespace.Name(signature)" (malloc'd). */
static char *method_key(const char *ns, const char *name, const char *signature) {
    return pgo_strf("%s%s%s\n%s", ns, ns[0] ? "." : "", name, signature);
}

/* Whether profile method m may be module method id: the same token and module where the profile
 * has them (the CLR text format has neither). */
static int fits(const pgo_method *m, const mantra_interp_method_identity *id) {
    return (m->token == 0 || m->token == id->token) &&
           (m->module[0] == '\0' || strncmp(m->module, "module#", 7) == 0 || strcmp(m->module, id->module_name) == 0);
}

/* The profile's methods by key (the first of each key). -2 when out of memory. */
static int index_profile(const pgo_profile *p, pgo_strmap *by_key) {
    for (size_t i = 0; i < p->count; i++) {
        const pgo_method *m = &p->methods[i];
        char *k = method_key(m->name_space, m->name, m->signature);
        int rc = k == NULL ? -1 : pgo_strmap_get(by_key, k) == (size_t)-1 ? pgo_strmap_put(by_key, k, i) : 0;
        free(k);
        if (rc != 0)
            return -2;
    }
    return 0;
}

/* Whether "ns1.name1" and "ns2.name2" (no dot after an empty namespace) are the same full name,
 * without joining them: profiles may split a type's name between namespace and name differently. */
static int same_full_name(const char *ns1, const char *name1, const char *ns2, const char *name2) {
    const char *a[3] = {ns1, ns1[0] ? "." : "", name1}, *b[3] = {ns2, ns2[0] ? "." : "", name2};
    size_t i = 0, j = 0;
    const char *x = a[0], *y = b[0];
    for (;;) {
        while (*x == '\0' && i < 2)
            x = a[++i];
        while (*y == '\0' && j < 2)
            y = b[++j];
        if (*x != *y)
            return 0;
        if (*x == '\0')
            return 1;
        x++;
        y++;
    }
}

/* The profile's method for module method id, or NULL: the same full name and signature, and the
 * same token and module where the profile has them. */
static const pgo_method *find_method(const pgo_profile *p, const pgo_strmap *by_key, const mantra_interp_method_identity *id) {
    char *k = method_key(id->namespace_name, id->name, id->signature);
    size_t first = k ? pgo_strmap_get(by_key, k) : (size_t)-1;
    free(k);
    if (first == (size_t)-1)
        return NULL;
    if (fits(&p->methods[first], id))
        return &p->methods[first];
    for (size_t i = first + 1; i < p->count; i++) { /* several methods share the name: the one that fits */
        const pgo_method *m = &p->methods[i];
        if (strcmp(m->signature, id->signature) == 0 &&
            same_full_name(m->name_space, m->name, id->namespace_name, id->name) && fits(m, id))
            return m;
    }
    return NULL;
}

/* m's block counts by IL offset (the first record at an offset, as the profile lists them): -2 when
 * out of memory. */
static int block_counts(const pgo_method *m, pgo_u64map *counts) {
    size_t v = 0;
    for (size_t r = 0; r < m->data.records; r++) {
        const mantra_pgo_schema *s = &m->data.schema[r];
        if (!mantra_pgo_has_data(s->kind))
            continue;
        if (is_block_count(s->kind) && s->count == 1 && pgo_u64map_get(counts, (uint32_t)s->il_offset) == NULL) {
            int64_t x = m->data.values[v];
            uint64_t c = s->kind == MANTRA_PGO_BasicBlockIntCount ? (uint64_t)(uint32_t)x : (uint64_t)x;
            if (pgo_u64map_put(counts, (uint32_t)s->il_offset, c) != 0)
                return -2;
        }
        v += (size_t)s->count;
    }
    return 0;
}

/* The count at il_offset among the block counts: 1 and *count when there is one. */
static int block_count(const pgo_u64map *counts, uint32_t il_offset, uint64_t *count) {
    const uint64_t *c = pgo_u64map_get(counts, il_offset);
    if (c == NULL)
        return 0;
    *count = *c;
    return 1;
}

typedef struct tally {
    size_t known, by_block, by_entry, unknown;
} tally;

/* Lays out method i of mod from p's counts into *lay (block_hot malloc'd into *blocks). */
static int layout_method(const mantra_interp_module *mod, size_t i, const pgo_profile *p, const pgo_strmap *by_key,
                         mantra_image_layout *lay, uint8_t **blocks, tally *t) {
    mantra_interp_method_identity id;
    mantra_interp_module_method(mod, i, &id);
    memset(lay, 0, sizeof *lay);
    *blocks = NULL;
    const pgo_method *pm = find_method(p, by_key, &id);
    if (pm == NULL) {
        t->unknown++;
        return 0;
    }
    t->known++;
    int64_t nb = mantra_image_blocks(mod, i, NULL, 0);
    uint32_t *starts = malloc((size_t)(nb > 0 ? nb : 1) * sizeof *starts);
    uint8_t *hot = calloc((size_t)(nb > 0 ? nb : 1), 1);
    pgo_u64map counts;
    memset(&counts, 0, sizeof counts);
    if (nb < 0 || starts == NULL || hot == NULL || block_counts(pm, &counts) != 0) {
        free(starts);
        free(hot);
        pgo_u64map_free(&counts);
        return -2;
    }
    mantra_image_blocks(mod, i, starts, (size_t)nb);
    uint64_t weight = 0, c = 0;
    int every = 1;
    for (int64_t b = 0; b < nb; b++) {
        if (block_count(&counts, starts[b], &c)) {
            hot[b] = c > 0;
            weight += c;
        } else {
            every = 0;
        }
    }
    if (every) { /* a count at every block: split by block */
        t->by_block++;
        lay->block_hot = hot;
        lay->weight = weight;
        *blocks = hot;
    } else { /* entry and loop heads only: the whole method by its entry count */
        t->by_entry++;
        free(hot);
        lay->whole_hot = block_count(&counts, 0, &c) && c > 0;
        lay->weight = lay->whole_hot ? c : 0;
    }
    free(starts);
    pgo_u64map_free(&counts);
    return 0;
}

static int write_file(const char *path, const uint8_t *data, size_t size) {
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return -1;
    size_t n = fwrite(data, 1, size, f);
    int bad = n != size || fflush(f) != 0 || ferror(f);
    if (fclose(f) != 0)
        bad = 1;
    if (bad)
        remove(path);
    return bad ? -1 : 0;
}

int cmd_precompile(int argc, char **argv) {
    const char *program = NULL, *profile = NULL, *output = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            return TOOL_OK;
        }
        if (strcmp(a, "--profile") == 0 || strcmp(a, "-o") == 0) {
            if (i + 1 >= argc)
                return tool_usage_error("precompile", "%s needs a value", a);
            *(a[1] == 'o' ? &output : &profile) = argv[++i];
        } else if (a[0] == '-' && a[1] != '\0') {
            return tool_usage_error("precompile", "unknown option '%s'", a);
        } else if (program != NULL) {
            return tool_usage_error("precompile", "one PROGRAM only ('%s' too)", a);
        } else {
            program = a;
        }
    }
    if (program == NULL)
        return tool_usage_error("precompile", "%s", "no PROGRAM given");
    if (profile == NULL)
        return tool_usage_error("precompile", "%s", "no --profile PROFILE given");
    if (output == NULL)
        return tool_usage_error("precompile", "%s", "no -o IMAGE given");

    mantra_interp_module *mod = NULL;
    if (tool_assemble("precompile", program, &mod) != 0)
        return TOOL_BAD_INPUT;
    pgo_profile p;
    memset(&p, 0, sizeof p);
    pgo_assemblies asms;
    memset(&asms, 0, sizeof asms);
    pgo_cmd_name = "precompile"; /* the profile readers' messages name this command */
    int r = pgo_read_input(&p, &asms, profile);
    pgo_assemblies_free(&asms);
    if (r < 0) {
        if (r == -2)
            fprintf(stderr, "mantra precompile: out of memory\n");
        pgo_profile_free(&p);
        mantra_interp_module_free(mod);
        return TOOL_BAD_INPUT;
    }
    size_t n = mantra_interp_module_method_count(mod); /* at least one: the assembler refuses none */
    mantra_image_layout *lay = calloc(n ? n : 1, sizeof *lay);
    uint8_t **blocks = calloc(n ? n : 1, sizeof *blocks);
    tally t = {0, 0, 0, 0};
    pgo_strmap by_key;
    memset(&by_key, 0, sizeof by_key);
    int rc = lay && blocks ? index_profile(&p, &by_key) : -2;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = layout_method(mod, i, &p, &by_key, &lay[i], &blocks[i], &t);
    pgo_strmap_free(&by_key);
    uint8_t *image = NULL;
    size_t size = 0;
    if (rc == 0)
        rc = mantra_image_build(mod, lay, &image, &size);
    int status = TOOL_OK;
    if (rc != 0) {
        fprintf(stderr, "mantra precompile: %s: %s\n", program, rc == -2 ? "out of memory" : mantra_strerror(rc));
        status = TOOL_BAD_INPUT;
    } else if (write_file(output, image, size) != 0) {
        fprintf(stderr, "mantra precompile: %s: cannot write the image\n", output);
        status = TOOL_BAD_INPUT;
    } else {
        /* the summary, read back from what was written */
        mantra_image *im = NULL;
        mantra_image_error err;
        if (mantra_image_open_memory(image, size, output, 0, &im, &err) == 0) {
            size_t hot = 0, split = 0, cold = 0;
            uint64_t hot_bytes = 0, cold_bytes = 0;
            for (size_t i = 0; i < n; i++) {
                mantra_image_method_info mi;
                mantra_image_method(im, i, &mi);
                if (mi.flags & MANTRA_IMAGE_PLACED_COLD) {
                    cold++;
                    cold_bytes += mi.hot_size;
                } else {
                    hot++;
                    split += mi.cold_size > 0;
                    hot_bytes += mi.hot_size;
                    cold_bytes += mi.cold_size;
                }
            }
            fprintf(stderr,
                    "mantra precompile: %s: %zu methods: %zu hot (%zu split), %zu cold; hot code %" PRIu64
                    " bytes, cold code %" PRIu64 " bytes; profile: %zu methods known (%zu by block, %zu by entry count), "
                    "%zu unknown\n",
                    output, n, hot, split, cold, hot_bytes, cold_bytes, t.known, t.by_block, t.by_entry, t.unknown);
            mantra_image_close(im);
        } else {
            fprintf(stderr, "mantra precompile: %s: the image written does not read back: offset %" PRIu64 ": %s\n",
                    output, err.offset, err.message);
            status = TOOL_BAD_INPUT;
        }
    }
    free(image);
    for (size_t i = 0; blocks != NULL && i < n; i++)
        free(blocks[i]);
    free(blocks);
    free(lay);
    pgo_profile_free(&p);
    mantra_interp_module_free(mod);
    return status;
}
