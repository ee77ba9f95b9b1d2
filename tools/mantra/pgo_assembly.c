/* `mantra pgo --format mibc`: the assemblies a profile refers to, read with libmantra's PE and
 * ECMA-335 reader (mantra/ecma.h): loaded from the paths of the trace's ModuleLoad events, from
 * -r PATH (files or folders) and, for an assembly named only by a handle's name, from the folders
 * of those. Each keeps its identity (name, version, public key, culture, the CodeView GUID the
 * runtime reports as ManagedPdbSignature) and an index of its TypeDefs by full name. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgo_mibc.h"
#include "tool.h"


static void assembly_free(pgo_assembly *a) {
    if (a == NULL)
        return;
    mantra_md_close(a->md);
    mantra_pe_free(&a->pe);
    free(a->bytes);
    free(a->path);
    pgo_strmap_free(&a->types);
    free(a->generic);
    free(a);
}

void pgo_assemblies_free(pgo_assemblies *s) {
    for (size_t i = 0; i < s->count; i++)
        assembly_free(s->items[i]);
    free(s->items);
    for (size_t i = 0; i < s->ndirs; i++)
        free(s->dirs[i]);
    free(s->dirs);
    memset(s, 0, sizeof *s);
}

/* The index of TypeDefs by full name ("Ns.Outer+Inner"), and which have generic parameters. */
static int index_types(pgo_assembly *a) {
    char name[1024];
    uint32_t types = mantra_md_row_count(a->md, MANTRA_MD_TYPE_DEF), v[MANTRA_MD_MAX_COLUMNS];
    a->generic = calloc(types ? types : 1, 1);
    if (a->generic == NULL)
        return -1;
    for (uint32_t r = 1; r <= mantra_md_row_count(a->md, MANTRA_MD_GENERIC_PARAM); r++)
        if (mantra_md_row(a->md, MANTRA_MD_GENERIC_PARAM, r, v) == MANTRA_OK &&
            MANTRA_MD_TOKEN_TABLE(v[2]) == MANTRA_MD_TYPE_DEF && MANTRA_MD_TOKEN_ROW(v[2]) - 1 < types)
            a->generic[MANTRA_MD_TOKEN_ROW(v[2]) - 1] = 1;
    for (uint32_t r = 1; r <= mantra_md_row_count(a->md, MANTRA_MD_TYPE_DEF); r++) {
        size_t n = mantra_md_type_name(a->md, MANTRA_MD_TOKEN(MANTRA_MD_TYPE_DEF, r), name, sizeof name);
        if (n == 0 || n >= sizeof name)
            continue; /* names that long are not looked up */
        if (pgo_strmap_get(&a->types, name) == (size_t)-1 && pgo_strmap_put(&a->types, name, r) < 0)
            return -1;
    }
    return 0;
}

/* Adds a folder to those searched for assemblies named only by name (once). Takes dir. */
static int add_dir(pgo_assemblies *s, char *dir) {
    if (dir == NULL)
        return -1;
    for (size_t i = 0; i < s->ndirs; i++)
        if (strcmp(s->dirs[i], dir) == 0) {
            free(dir);
            return 0;
        }
    char **d = realloc(s->dirs, (s->ndirs + 1) * sizeof *d);
    if (d == NULL) {
        free(dir);
        return -1;
    }
    s->dirs = d;
    s->dirs[s->ndirs++] = dir;
    return 0;
}

static int add_dir_of(pgo_assemblies *s, const char *path) {
    const char *slash = strrchr(path, '/');
    return add_dir(s, slash ? pgo_strf("%.*s", (int)(slash - path), path) : pgo_strdup("."));
}

int pgo_assembly_load(pgo_assemblies *s, const char *path, pgo_assembly **out) {
    *out = NULL;
    for (size_t i = 0; i < s->count; i++)
        if (strcmp(s->items[i]->path, path) == 0) {
            *out = s->items[i];
            return 0;
        }
    pgo_assembly *a = calloc(1, sizeof *a);
    if (a == NULL || (a->path = pgo_strdup(path)) == NULL) {
        assembly_free(a);
        return -2;
    }
    a->bytes = (uint8_t *)tool_read_file(path, &a->size);
    if (a->bytes == NULL) {
        pgo_errf("%s: cannot read the assembly\n", path);
        assembly_free(a);
        return -1;
    }
    mantra_ecma_error err = {0, ""};
    int rc = mantra_pe_parse(a->bytes, a->size, &a->pe, &err);
    if (rc == MANTRA_OK)
        rc = mantra_md_open_pe(&a->pe, &a->md, &err);
    if (rc != MANTRA_OK || mantra_md_row_count(a->md, MANTRA_MD_ASSEMBLY) != 1) {
        if (rc == MANTRA_ENOMEM)
            pgo_errf("out of memory\n");
        else if (rc != MANTRA_OK)
            pgo_errf("%s: offset %llu: %s\n", path, (unsigned long long)err.offset, err.message);
        else
            pgo_errf("%s: not an assembly (no Assembly row)\n", path);
        assembly_free(a);
        return rc == MANTRA_ENOMEM ? -2 : -1;
    }
    uint32_t v[MANTRA_MD_MAX_COLUMNS];
    mantra_md_row(a->md, MANTRA_MD_ASSEMBLY, 1, v);
    a->name = mantra_md_string(a->md, v[7]);
    a->culture = mantra_md_string(a->md, v[8]);
    for (int i = 0; i < 4; i++)
        a->version[i] = (uint16_t)v[1 + i];
    a->flags = v[5];
    mantra_md_blob(a->md, v[6], &a->public_key, &a->public_key_size);
    a->has_pdb_guid = mantra_pe_codeview(&a->pe, &a->pdb_guid, NULL, NULL) == MANTRA_OK;
    pgo_assembly **items = realloc(s->items, (s->count + 1) * sizeof *items);
    if (items)
        s->items = items;
    if (items == NULL || index_types(a) < 0 || add_dir_of(s, path) < 0) {
        assembly_free(a);
        return -2;
    }
    s->items[s->count++] = a;
    *out = a;
    return 0;
}

int pgo_assemblies_add_path(pgo_assemblies *s, const char *path) {
    DIR *d = opendir(path);
    if (d == NULL) {
        pgo_assembly *a;
        return pgo_assembly_load(s, path, &a);
    }
    closedir(d);
    /* a folder's assemblies are loaded when a name asks for them */
    return add_dir(s, pgo_strdup(path)) < 0 ? -2 : 0;
}

pgo_assembly *pgo_assembly_named(pgo_assemblies *s, const char *name) {
    for (size_t i = 0; i < s->count; i++)
        if (strcmp(s->items[i]->name, name) == 0)
            return s->items[i];
    for (size_t i = 0; i < s->ndirs; i++) {
        char *p = pgo_strf("%s/%s.dll", s->dirs[i], name);
        FILE *f = p ? fopen(p, "rb") : NULL;
        if (f) {
            fclose(f);
            pgo_assembly *a = NULL;
            int rc = pgo_assembly_load(s, p, &a);
            free(p);
            return rc == 0 && a && strcmp(a->name, name) == 0 ? a : NULL;
        }
        free(p);
    }
    return NULL;
}

uint32_t pgo_assembly_type(const pgo_assembly *a, const char *full_name) {
    size_t r = pgo_strmap_get(&a->types, full_name);
    return r == (size_t)-1 ? 0 : (uint32_t)r;
}
