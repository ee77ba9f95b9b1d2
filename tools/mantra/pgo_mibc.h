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
    uint64_t generic;      /* generic instantiations whose type arguments have no names */
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

/* ---- pgo_names.c: names as the runtime writes them -------------------------------------------- */
typedef struct pgo_text { /* also a byte buffer (IL, signature blobs: pgo_mibc.c) */
    char *s; /* NUL-terminated, malloc'd */
    size_t n, cap;
    int oom;
} pgo_text;
void pgo_text_put(pgo_text *t, const void *s, size_t n);
void pgo_text_add(pgo_text *t, const char *s);
/* What names CoreLib fully ("System.Private.CoreLib, Version=..., PublicKeyToken=..."), for primitive
 * element types and __Canon; NULL: the simple name. */
typedef struct pgo_assembly_names {
    const char *corelib;
} pgo_assembly_names;
/* An assembly's full name as the runtime writes it: "Name, Version=a.b.c.d, Culture=neutral,
 * PublicKeyToken=t|null" (key: the token, or with full_key the public key whose token is taken);
 * NULL when out of memory. pgo_assembly_ref_name: that of AssemblyRef `row` of md. */
char *pgo_assembly_full_name(const char *name, const uint16_t version[4], const char *culture, const uint8_t *key,
                             size_t key_size, int full_key);
char *pgo_assembly_ref_name(const mantra_md *md, uint32_t row);
/* The bytes of an ARRAY type's shape (§23.2.13: rank, NumSizes and sizes, NumLoBounds and lower
 * bounds, compressed) at p and its rank; 0 when it does not fit in n bytes. */
size_t pgo_sig_array_shape(const uint8_t *p, size_t n, uint32_t *rank);
/* A method signature blob of md as text ("instance bool  (!0)"); the bytes read, 0 when malformed. */
size_t pgo_sig_text(const mantra_md *md, const uint8_t *p, size_t n, pgo_text *out);
/* A TypeDef, TypeRef or TypeSpec token of md as a name: qualified as a handle ("Ns.T`1[[A, Asm]], Asm") or as a
 * method's namespace ("Ns.T`1[A]"); 0, -1 when it cannot be named, -2 out of memory. */
int pgo_type_text(const mantra_md *md, uint32_t token, int qualified, const pgo_assembly_names *names, pgo_text *out);
/* A type signature of md (as in a TypeSpec or a MethodSpec's instantiation) as a name, like
 * pgo_type_text; the bytes read, 0 when it cannot be named. */
size_t pgo_sig_type_text(const mantra_md *md, const uint8_t *p, size_t n, int qualified, const pgo_assembly_names *names,
                         pgo_text *out);
/* The simple name of the assembly a TypeDef, TypeRef or TypeSpec token's (outermost) type is in: 0 or -1. */
int pgo_assembly_of_type(const mantra_md *md, uint32_t token, pgo_text *simple_name);

/* ---- pgo_image_read.c ----------------------------------------------------------------------- */
/* Reads the PGO data embedded in the ReadyToRun image pe (md: its metadata; corelib: CoreLib's full
 * name or NULL) into p. 0, -1 (the reason printed as `mantra pgo: PATH: offset N: MESSAGE`) or -2. */
int pgo_read_image(pgo_profile *p, const char *path, const mantra_pe *pe, const mantra_md *md, const char *corelib);

/* ---- pgo_mibc_read.c ------------------------------------------------------------------------ */
/* Reads the .mibc at path (ZIP or plain, ours or dotnet-pgo's) into p, its methods merged like a
 * trace's; s resolves method tokens and PDB signatures where an assembly is found (else a method
 * keeps its names only). 0, -1 (the reason printed as `mantra pgo: PATH: offset N: MESSAGE`) or -2. */
int pgo_read_mibc(pgo_profile *p, pgo_assemblies *s, const char *path);
/* Any input of mantra pgo, told apart by its first bytes (pgo.c): a text or JSON profile, a .mibc
 * (or a ReadyToRun image's embedded data), else a trace. 0, 1 (a truncated trace), -1 or -2. */
int pgo_read_input(pgo_profile *p, pgo_assemblies *asms, const char *path);
/* The same from bytes in memory (path names them in messages and gives the ZIP entry's name). */
int pgo_read_mibc_bytes(pgo_profile *p, pgo_assemblies *s, const char *path, const uint8_t *file, size_t n);

/* ---- inflate.c ----------------------------------------------------------------------------- */
/* Decodes a DEFLATE stream into exactly out_size bytes: 0, or -1 with *why and *at (the input offset
 * where it stopped). */
int pgo_inflate(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size, size_t *at, const char **why);

/* ---- zip_store.c ---------------------------------------------------------------------------- */
/* A ZIP archive (APPNOTE.TXT) holding one stored (uncompressed) entry; 0 or -2. */
int pgo_zip_one(const char *entry, const uint8_t *data, size_t size, uint8_t **out, size_t *out_size);
/* The entry named want (else the first one ending in .dll) of a ZIP archive, stored or deflated, its
 * CRC-32 checked, into a new buffer: 0, -1 (*why, *at: the archive offset) or -2. */
int pgo_zip_find(const uint8_t *zip, size_t size, const char *want, uint8_t **out, size_t *out_size, size_t *at,
                 const char **why);

#endif
