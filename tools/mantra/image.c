/* `mantra image [--json] FILE` (docs/cli.md "mantra image"): the method table of a precompiled image.
 * A .NET ReadyToRun PE file is read with libmantra's ReadyToRun and metadata readers (mantra/ecma.h):
 * every method with code (MethodDefEntryPoints, then InstanceMethodEntryPoints' instantiations), its
 * token, its hot part and its cold part (HotColdMap; crossgen2 --hot-cold-splitting), RVAs from the
 * image's base as mapped. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mantra/decode.h"
#include "mantra/ecma.h"
#include "mantra/image.h"
#include "mantra/manifest.h"
#include "image_names.h"
#include "pgo_mibc.h"
#include "pgo_tool.h"
#include "tool.h"

static const char usage[] = "Usage: mantra image [--json] FILE\n"
                            "\n"
                            "Prints the method table of a precompiled image: a mantra image (mantra precompile's\n"
                            "output, docs/image-format.md; every check of loading is made) or a .NET ReadyToRun PE\n"
                            "file (crossgen2's output, the shared framework's assemblies): each method's name, token,\n"
                            "hot part and cold part (RVA and size; a method without a cold part has none).\n"
                            "\n"
                            "  --json   one JSON object: format (\"mantra\" or \"r2r\"), module, mvid, methods\n"
                            "           [{name, token, hot, cold}] (mantra images: also placed_cold, a method that\n"
                            "           never ran and sits whole in the cold section)\n"
                            "\n"
                            "Exit status: 0 success, 1 bad input (the reason and the file offset printed), 2 usage error.\n";

/* "Namespace.Type.Name" (image_names.c), NULL when the method cannot be named. */
static char *method_name(const mantra_md *md, const mantra_r2r_method *m) {
    pgo_text ns = {0}, name = {0};
    char *full = NULL;
    if (image_method_names(md, m, &ns, &name, NULL) == 0 && ns.s && name.s)
        full = pgo_strf("%s.%s", ns.s, name.s);
    free(ns.s);
    free(name.s);
    return full;
}

static void range(FILE *out, uint32_t rva, uint32_t size) {
    fprintf(out, "{\"rva\":%" PRIu32 ",\"size\":%" PRIu32 "}", rva, size);
}

static int print_r2r(const char *path, const mantra_md *md, const mantra_r2r *r, int json) {
    uint32_t v[MANTRA_MD_MAX_COLUMNS];
    mantra_guid g = {0, 0, 0, {0}};
    const char *module = "";
    if (mantra_md_row(md, MANTRA_MD_MODULE, 1, v) == 0) { /* Generation, Name, Mvid, EncId, EncBaseId */
        module = mantra_md_string(md, v[1]);
        mantra_md_guid(md, v[2], &g);
    }
    char mvid[37]; /* the MVID as text, lower case */
    mantra_manifest_guid_format(&g, mvid);
    if (json) {
        fputs("{\"format\":\"r2r\",\"module\":", stdout);
        json_string(stdout, module, strlen(module));
        printf(",\"mvid\":\"%s\",\"version\":\"%u.%u\",\"methods\":[", mvid, r->major, r->minor);
    } else {
        printf("%s: ReadyToRun %u.%u, module %s, MVID %s, %zu methods (%zu instantiations)\n", path, r->major, r->minor,
               module, mvid, r->nmethods, r->ninstances);
        printf("%-10s %-8s %-10s %-8s %-10s %s\n", "hot RVA", "size", "cold RVA", "size", "token", "name");
    }
    for (size_t i = 0; i < r->nmethods; i++) {
        const mantra_r2r_method *m = &r->methods[i];
        char *name = method_name(md, m);
        const char *shown = name ? name : "?";
        if (json) {
            fputs(i ? ",\n{\"name\":" : "\n{\"name\":", stdout);
            json_string(stdout, shown, strlen(shown));
            printf(",\"token\":\"0x%08" PRIx32 "\",\"instantiation\":%s,\"hot\":", m->token, m->sig ? "true" : "false");
            range(stdout, m->hot_rva, m->hot_size);
            fputs(",\"cold\":", stdout);
            if (m->cold_size)
                range(stdout, m->cold_rva, m->cold_size);
            else
                fputs("null", stdout);
            fputc('}', stdout);
        } else if (m->cold_size) {
            printf("0x%08" PRIx32 " %-8" PRIu32 " 0x%08" PRIx32 " %-8" PRIu32 " 0x%08" PRIx32 " %s\n", m->hot_rva,
                   m->hot_size, m->cold_rva, m->cold_size, m->token, shown);
        } else {
            printf("0x%08" PRIx32 " %-8" PRIu32 " %-10s %-8s 0x%08" PRIx32 " %s\n", m->hot_rva, m->hot_size, "-", "-",
                   m->token, shown);
        }
        free(name);
    }
    if (json)
        fputs("\n]}\n", stdout);
    return fflush(stdout) == 0 ? TOOL_OK : TOOL_BAD_INPUT;
}

/* A mantra image: opened (every check of a load), its method table printed. */
static int print_mantra(const char *path, const uint8_t *data, size_t size, int json) {
    mantra_image *im = NULL;
    mantra_image_error err = {0, ""};
    int st = mantra_image_open_memory(data, size, path, 0, &im, &err);
    if (st != MANTRA_OK) {
        fprintf(stderr, "mantra image: %s: offset %" PRIu64 ": %s\n", path, err.offset,
                st == MANTRA_ENOMEM ? "out of memory" : err.message);
        return TOOL_BAD_INPUT;
    }
    const mantra_interp_module *m = mantra_image_module(im);
    size_t n = mantra_image_method_count(im);
    mantra_interp_method_identity id0;
    char mvid[37] = "";
    const char *module = "";
    if (mantra_interp_module_method(m, 0, &id0) == 0) {
        const uint8_t *b = id0.module_guid; /* .NET layout: Data1..Data3 little-endian */
        mantra_guid g = {mantra_load_u32(b), mantra_load_u16(b + 4), mantra_load_u16(b + 6), {0}};
        memcpy(g.data4, b + 8, 8);
        mantra_manifest_guid_format(&g, mvid);
        module = id0.module_name;
    }
    if (json) {
        fputs("{\"format\":\"mantra\",\"module\":", stdout);
        json_string(stdout, module, strlen(module));
        printf(",\"mvid\":\"%s\",\"methods\":[", mvid);
    } else {
        printf("%s: mantra image, module %s, MVID %s, %zu methods\n", path, module, mvid, n);
        printf("%-10s %-8s %-10s %-8s %-10s %s\n", "hot RVA", "size", "cold RVA", "size", "token", "name");
    }
    int rc = TOOL_OK;
    for (size_t i = 0; i < n; i++) {
        mantra_image_method_info mi;
        if (mantra_image_method(im, i, &mi) != MANTRA_OK) {
            fprintf(stderr, "mantra image: %s: method %zu of %zu cannot be read\n", path, i, n);
            rc = TOOL_BAD_INPUT;
            break;
        }
        char *name = pgo_strf("%s%s%s", mi.id.namespace_name, mi.id.namespace_name[0] ? "." : "", mi.id.name);
        const char *shown = name ? name : "?";
        int placed = (mi.flags & MANTRA_IMAGE_PLACED_COLD) != 0;
        if (json) {
            fputs(i ? ",\n{\"name\":" : "\n{\"name\":", stdout);
            json_string(stdout, shown, strlen(shown));
            printf(",\"token\":\"0x%08" PRIx32 "\",\"placed_cold\":%s,\"hot\":", mi.id.token, placed ? "true" : "false");
            range(stdout, mi.hot_rva, mi.hot_size);
            fputs(",\"cold\":", stdout);
            if (mi.cold_size)
                range(stdout, mi.cold_rva, mi.cold_size);
            else
                fputs("null", stdout);
            fputc('}', stdout);
        } else if (mi.cold_size) {
            printf("0x%08" PRIx32 " %-8" PRIu32 " 0x%08" PRIx32 " %-8" PRIu32 " 0x%08" PRIx32 " %s\n", mi.hot_rva,
                   mi.hot_size, mi.cold_rva, mi.cold_size, mi.id.token, shown);
        } else {
            printf("0x%08" PRIx32 " %-8" PRIu32 " %-10s %-8s 0x%08" PRIx32 " %s%s\n", mi.hot_rva, mi.hot_size, "-", "-",
                   mi.id.token, shown, placed ? " (placed cold)" : "");
        }
        free(name);
    }
    if (json)
        fputs("\n]}\n", stdout);
    mantra_image_close(im);
    return fflush(stdout) == 0 ? rc : TOOL_BAD_INPUT;
}

int cmd_image(int argc, char **argv) {
    int json = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            return TOOL_OK;
        }
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (argv[i][0] == '-' && argv[i][1] != '\0')
            return tool_usage_error("image", "unknown option '%s'", argv[i]);
        else if (path)
            return tool_usage_error("image", "one FILE only ('%s' too)", argv[i]);
        else
            path = argv[i];
    }
    if (path == NULL) {
        fputs(usage, stderr);
        return TOOL_USAGE;
    }
    size_t size = 0;
    uint8_t *data = (uint8_t *)tool_read_file(path, &size);
    if (data == NULL) {
        fprintf(stderr, "mantra image: %s: cannot read the file\n", path);
        return TOOL_BAD_INPUT;
    }
    if (size >= 8 && memcmp(data, "MANTRAIM", 8) == 0) {
        int rc = print_mantra(path, data, size, json);
        free(data);
        return rc;
    }
    mantra_pe pe;
    mantra_md *md = NULL;
    mantra_r2r r;
    memset(&r, 0, sizeof r);
    mantra_ecma_error err = {0, ""};
    int st = mantra_pe_parse(data, size, &pe, &err), rc = TOOL_BAD_INPUT;
    if (st != MANTRA_OK) {
        fprintf(stderr, "mantra image: %s: offset %" PRIu64 ": %s (neither a mantra image nor a ReadyToRun PE file)\n", path, err.offset,
                err.message);
        free(data);
        return TOOL_BAD_INPUT;
    }
    st = mantra_r2r_open(&pe, &r, &err);
    if (st == MANTRA_ENOENT)
        fprintf(stderr, "mantra image: %s: a PE file without a ReadyToRun header (an IL-only assembly?)\n", path);
    else if (st == MANTRA_OK && (st = mantra_md_open_pe(&pe, &md, &err)) == MANTRA_OK &&
             (st = mantra_r2r_code(&pe, &r, &err)) == MANTRA_OK)
        rc = print_r2r(path, md, &r, json);
    if (st != MANTRA_OK && st != MANTRA_ENOENT)
        fprintf(stderr, "mantra image: %s: offset %" PRIu64 ": %s\n", path, err.offset,
                st == MANTRA_ENOMEM ? "out of memory" : err.message);
    mantra_r2r_free(&r);
    mantra_md_close(md);
    mantra_pe_free(&pe);
    free(data);
    return rc;
}
