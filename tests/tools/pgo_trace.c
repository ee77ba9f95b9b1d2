/* pgo_trace.c - nettrace files shaped like a .NET runtime's PGO trace (pgo_trace.h). */
#include "pgo_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mantra/metadata.h"
#include "mantra/nettrace_writer.h"
#include "mantra/sink.h"

#define RUNTIME "Microsoft-Windows-DotNETRuntime"
#define RUNDOWN "Microsoft-Windows-DotNETRuntimeRundown"
#define MAX_DEFS 16

struct pgo_trace {
    mantra_sink *sink;
    mantra_nettrace_writer *w;
    mantra_metadata_builder *b;
    uint32_t ids[MAX_DEFS], versions[MAX_DEFS];
    const char *providers[MAX_DEFS];
    mantra_nettrace_event_key keys[MAX_DEFS];
    size_t ndefs;
    uint64_t ts;
};

static void must(int rc, const char *what) {
    if (rc < 0) {
        fprintf(stderr, "pgo_trace: %s failed (%d)\n", what, rc);
        abort();
    }
}

pgo_trace *pgo_trace_open(const char *path) {
    pgo_trace *t = calloc(1, sizeof *t);
    if (t == NULL)
        abort();
    must(mantra_sink_open_file(&t->sink, path), "open");
    mantra_nettrace_options o;
    mantra_nettrace_options_init(&o);
    o.sync_time_unix_ms = 1700000000000;
    o.pointer_size = 8;
    o.process_id = 1;
    o.processor_count = 1;
    o.block_bytes = 64 * 1024;
    must(mantra_nettrace_writer_new(&t->w, t->sink, &o), "writer");
    must(mantra_metadata_builder_new(&t->b), "builder");
    return t;
}

void pgo_trace_close(pgo_trace *t) {
    must(mantra_nettrace_finish(t->w), "finish");
    mantra_nettrace_writer_free(t->w);
    must(mantra_sink_close(t->sink), "close");
    mantra_sink_free(t->sink);
    mantra_metadata_builder_free(t->b);
    free(t);
}

static mantra_nettrace_event_key key_of(pgo_trace *t, const char *provider, uint32_t id, uint32_t version) {
    for (size_t i = 0; i < t->ndefs; i++)
        if (t->ids[i] == id && t->versions[i] == version && t->providers[i] == provider)
            return t->keys[i];
    if (t->ndefs == MAX_DEFS)
        abort();
    const uint8_t *blob;
    size_t n;
    must(mantra_metadata_begin(t->b, id, "", 0, version, 0, 0), "metadata");
    must(mantra_metadata_finish(t->b, &blob, &n), "metadata");
    must(mantra_nettrace_add_event_raw(t->w, provider, blob, n, &t->keys[t->ndefs]), "define");
    t->providers[t->ndefs] = provider;
    t->ids[t->ndefs] = id;
    t->versions[t->ndefs] = version;
    return t->keys[t->ndefs++];
}

static void write_in(pgo_trace *t, const char *provider, uint32_t id, uint32_t version, const mantra_data *d,
                     uint32_t n) {
    mantra_nettrace_event ev;
    memset(&ev, 0, sizeof ev);
    ev.key = key_of(t, provider, id, version);
    ev.timestamp = ++t->ts;
    ev.thread_id = 1;
    ev.processor_number = 0xFFFFFFFFu;
    must(mantra_nettrace_write_data(t->w, &ev, d, n), "write");
}

static void write_data(pgo_trace *t, uint32_t id, uint32_t version, const mantra_data *d, uint32_t n) {
    write_in(t, RUNTIME, id, version, d, n);
}

void pgo_trace_event(pgo_trace *t, uint32_t event_id, uint32_t version, const void *payload, size_t size) {
    mantra_data d = {payload, size, MANTRA_DATA_BYTES};
    write_data(t, event_id, version, &d, 1);
}

void pgo_trace_rundown_event(pgo_trace *t, uint32_t event_id, uint32_t version, const void *payload, size_t size) {
    mantra_data d = {payload, size, MANTRA_DATA_BYTES};
    write_in(t, RUNDOWN, event_id, version, &d, 1);
}

#define BYTES(p) {&(p), sizeof(p), MANTRA_DATA_BYTES}
#define STR(s) {(s), 0, MANTRA_DATA_UTF8_AS_UTF16Z}

void pgo_trace_module(pgo_trace *t, uint64_t module_id, uint64_t assembly_id, const char *il_path,
                      const mantra_guid *pdb) {
    uint32_t flags = 0, reserved = 0, age = 1;
    uint16_t clr = 0;
    uint8_t guid[16], zero[16] = {0};
    memcpy(guid, &pdb->data1, 4);
    memcpy(guid + 4, &pdb->data2, 2);
    memcpy(guid + 6, &pdb->data3, 2);
    memcpy(guid + 8, pdb->data4, 8);
    mantra_data d[] = {BYTES(module_id), BYTES(assembly_id), BYTES(flags), BYTES(reserved), STR(il_path), STR(""),
                       BYTES(clr), BYTES(guid), BYTES(age), STR(""), BYTES(zero), BYTES(age), STR("")};
    write_data(t, 152, 2, d, sizeof d / sizeof d[0]);
}

void pgo_trace_assembly(pgo_trace *t, uint64_t assembly_id, const char *full_name) {
    uint64_t domain = 1, binding = 0;
    uint32_t flags = 0;
    uint16_t clr = 0;
    mantra_data d[] = {BYTES(assembly_id), BYTES(domain), BYTES(binding), BYTES(flags), STR(full_name), BYTES(clr)};
    write_data(t, 154, 1, d, sizeof d / sizeof d[0]);
}

void pgo_trace_type_load(pgo_trace *t, uint64_t type_id, const char *name) {
    uint32_t start_id = 1;
    uint16_t clr = 0, level = 6;
    mantra_data d[] = {BYTES(start_id), BYTES(clr), BYTES(level), BYTES(type_id), STR(name)};
    write_data(t, 74, 0, d, sizeof d / sizeof d[0]);
}

void pgo_trace_bulk_types(pgo_trace *t, const pgo_trace_type *types, size_t n) {
    uint32_t count = (uint32_t)n, zero = 0;
    uint16_t clr = 0;
    mantra_data d[2 + 16 * 10];
    uint32_t k = 0;
    if (n > 16)
        abort();
    d[k++] = (mantra_data)BYTES(count);
    d[k++] = (mantra_data)BYTES(clr);
    for (size_t i = 0; i < n; i++) { /* TypeID, ModuleID, TypeNameID, Flags, CorElementType, Name, params */
        d[k++] = (mantra_data)BYTES(types[i].type_id);
        d[k++] = (mantra_data)BYTES(types[i].module_id);
        d[k++] = (mantra_data)BYTES(zero);
        d[k++] = (mantra_data)BYTES(zero);
        d[k++] = (mantra_data){&types[i].cor_element_type, 1, MANTRA_DATA_BYTES};
        d[k++] = (mantra_data)STR(types[i].name ? types[i].name : "");
        d[k++] = (mantra_data)BYTES(types[i].nparams);
        d[k++] = (mantra_data){types[i].params, types[i].nparams * sizeof(uint64_t), MANTRA_DATA_BYTES};
    }
    write_data(t, 15, 0, d, k);
}

void pgo_trace_method_details(pgo_trace *t, uint64_t method_id, uint64_t type_id, uint32_t token, uint64_t module_id,
                              uint32_t nparams, const uint64_t *params) {
    mantra_data d[] = {BYTES(method_id), BYTES(type_id), BYTES(token), BYTES(nparams), BYTES(module_id),
                       {params, nparams * sizeof(uint64_t), MANTRA_DATA_BYTES}};
    write_data(t, 72, 0, d, sizeof d / sizeof d[0]);
}

void pgo_trace_chunk(pgo_trace *t, uint16_t clr, uint32_t method_flags, uint64_t method_id, uint64_t module_id,
                     uint32_t token, const char *ns, const char *name, const char *sig, const void *data,
                     uint32_t size) {
    mantra_data d[] = {BYTES(clr),   BYTES(method_flags), BYTES(size), BYTES(method_id), BYTES(module_id),
                       BYTES(token), STR(ns),             STR(name),   STR(sig),         {data, size, MANTRA_DATA_BYTES}};
    write_data(t, 298, 0, d, sizeof d / sizeof d[0]);
}

void pgo_trace_method(pgo_trace *t, uint64_t method_id, uint64_t module_id, uint32_t token, const char *ns,
                      const char *name, const char *sig, const mantra_pgo_schema *schema, size_t records,
                      const int64_t *values, size_t value_count) {
    int64_t size = mantra_pgo_encode(schema, records, values, value_count, NULL, 0);
    must(size < 0 ? (int)size : 0, "encode");
    uint8_t *blob = malloc((size_t)size);
    if (blob == NULL)
        abort();
    must((int)mantra_pgo_encode(schema, records, values, value_count, blob, (size_t)size), "encode");
    for (size_t i = 0; i < mantra_pgo_chunk_count((size_t)size); i++) {
        uint32_t flags;
        size_t off, len;
        must(mantra_pgo_chunk((size_t)size, i, &flags, &off, &len), "chunk");
        pgo_trace_chunk(t, 0, flags, method_id, module_id, token, ns, name, sig, blob + off, (uint32_t)len);
    }
    free(blob);
}
