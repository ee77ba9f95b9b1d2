/* Shared declarations of `mantra pgo --format mibc` (docs/cli.md "mantra pgo", docs/pgo.md ".mibc"):
 *
 *   pgo_assembly.c  the assemblies a profile refers to (PE + ECMA-335 metadata, mantra/ecma.h)
 *   pgo_mibc.c      the profile as a .mibc: a metadata-only assembly in dotnet-pgo's layout
 *   zip_store.c     the one-entry ZIP container dotnet-pgo writes by default
 */
#ifndef MANTRA_TOOL_PGO_MIBC_H
#define MANTRA_TOOL_PGO_MIBC_H

#include <stddef.h>
#include <stdint.h>

#include "mantra/ecma.h"
#include "pgo_tool.h"

/* ---- pgo_assembly.c ------------------------------------------------------------------------- */
typedef struct pgo_assembly {
    char *path;
    uint8_t *bytes;
    size_t size;
    mantra_pe pe;
    mantra_md *md;
    const char *name, *culture; /* the Assembly row's, in the metadata */
    uint16_t version[4];
    uint32_t flags;
    const uint8_t *public_key;
    uint32_t public_key_size;
    mantra_guid pdb_guid; /* the CodeView GUID (ManagedPdbSignature in the runtime's events) */
    int has_pdb_guid;
    pgo_strmap types; /* full name ("Ns.Outer+Inner") -> TypeDef row */
    uint8_t *generic;  /* per TypeDef row (index row - 1): 1 when it has generic parameters */
} pgo_assembly;

typedef struct pgo_assemblies {
    pgo_assembly **items;
    size_t count;
    char **dirs; /* folders searched for an assembly known only by name */
    size_t ndirs;
} pgo_assemblies;

/* Loads (once) the assembly at path: 0, -1 (not readable or not an assembly: the reason printed as
 * `mantra pgo: PATH: offset N: MESSAGE`), -2 out of memory. */
int pgo_assembly_load(pgo_assemblies *s, const char *path, pgo_assembly **out);
/* -r PATH: an assembly file (loaded now) or a folder (searched by name later). Same results. */
int pgo_assemblies_add_path(pgo_assemblies *s, const char *path);
/* The loaded assembly with this simple name, else NAME.dll from the known folders; NULL when none. */
pgo_assembly *pgo_assembly_named(pgo_assemblies *s, const char *name);
/* The TypeDef row of a full name in a, 0 when none. */
uint32_t pgo_assembly_type(const pgo_assembly *a, const char *full_name);
void pgo_assemblies_free(pgo_assemblies *s);

/* ---- pgo_mibc.c ----------------------------------------------------------------------------- */
typedef struct pgo_mibc_counts {
    uint64_t methods, written;
    uint64_t no_assembly;  /* the method's assembly file was not found */
    uint64_t generic;      /* generic instantiations: not written yet */
    uint64_t unresolved;   /* token or signature the assembly does not resolve */
    uint64_t handles, handle_tokens, handles_unknown; /* non-null handle values; as tokens; as unknown */
} pgo_mibc_counts;

/* Writes p as a .mibc named `name` (its Module and Assembly name, as dotnet-pgo names them after
 * the output file): the PE file, or with zip the ZIP container holding it as NAME.dll. Methods are
 * resolved against their assemblies (from their ModuleILPath or by name through s); an assembly
 * whose CodeView GUID differs from the trace's PDB signature is refused ("Dll mismatch", message
 * printed, -1). 0, -1 or -2 (out of memory). */
int pgo_write_mibc(const pgo_profile *p, pgo_assemblies *s, const char *name, int zip, uint8_t **out,
                   size_t *size, pgo_mibc_counts *c);

/* ---- zip_store.c ---------------------------------------------------------------------------- */
/* A ZIP archive (APPNOTE.TXT) holding one stored (uncompressed) entry; 0 or -2. */
int pgo_zip_one(const char *entry, const uint8_t *data, size_t size, uint8_t **out, size_t *out_size);
/* The CRC-32 of ZIP (polynomial 0xEDB88320, reflected, initial and final XOR 0xFFFFFFFF). */
uint32_t pgo_crc32(const uint8_t *data, size_t size);

#endif
