/* The reader's metadata table: metadata records by id, with the fields of a loaded manifest or of
 * a registered provider description applied when the trace describes none (or only the fields before
 * the first one nettrace metadata cannot express); mantra_reader_metadata. */
#include <string.h>

#include "mantra/manifest.h"
#include "reader-internal.h"

const mantra_trace_metadata *mantra_reader_metadata(const mantra_reader *r, uint32_t id) {
    uint64_t *v = cm_map_get(&r->meta, id);
    return v ? (const mantra_trace_metadata *)(uintptr_t)*v : NULL;
}

typedef struct rd_mfields {
    const mantra_field_desc *fields;
    uint32_t count;
    const rd_manifest_plan *plan; /* the template's length plan (manifest_check.c) */
} rd_mfields;

/* Metadata fields that are a strict prefix (by name) of the manifest's and stop right before a
 * counted array, binary, struct or AnsiString: the writer described only the fields nettrace
 * metadata can express (mantra's MANTRA_EVENT_PARTIAL_METADATA events). A prefix followed by a field
 * the metadata could have described is a whole description of another layout (an older runtime's
 * ProcessInfo with its CommandLine only, dotnet/runtime src/native/eventpipe/ep-event-source.c before
 * OSInformation and ArchInformation were added): the trace wins. */
static int is_partial_of(const mantra_trace_metadata *m, const rd_mfields *mf) {
    if (mf->count <= m->field_count)
        return 0;
    uint32_t next = mf->fields[m->field_count].type;
    if (next != MANTRA_TYPE_ARRAY && next != MANTRA_TYPE_FIXED_ARRAY && next != MANTRA_TYPE_STRING8)
        return 0;
    for (uint32_t i = 0; i < m->field_count; i++)
        if (strcmp(m->fields[i].name, mf->fields[i].name) != 0)
            return 0;
    return 1;
}

/* The names a manifest event gives metadata that lacks them: the event name when the trace's is
 * empty (the .NET runtime's own providers, dotnet/runtime src/native/eventpipe/ep-event.c: minimal
 * metadata), the task and opcode display names always (the trace has none). */
static void apply_names(mantra_trace_metadata *m, const mantra_manifest_event *e) {
    if (m->name == NULL || m->name[0] == '\0')
        m->name = e->name;
    if (m->task_name == NULL)
        m->task_name = e->task_message;
    if (m->opcode_name == NULL)
        m->opcode_name = e->opcode_message;
}

/* Applies the first of manifests[0..n) that defines the event (1 when applied). */
static int apply_manifest_from(mantra_reader *r, mantra_trace_metadata *m, const struct mantra_manifest *const *manifests,
                               size_t n) {
    for (size_t i = 0; i < n; i++) {
        const mantra_manifest_provider *p = NULL;
        if (m->has_provider_guid)
            p = mantra_manifest_find_provider_by_guid(manifests[i], &m->provider_guid);
        if (p == NULL)
            p = mantra_manifest_find_provider(manifests[i], m->provider);
        const mantra_manifest_event *e = p ? mantra_manifest_find_event(p, m->event_id, m->version) : NULL;
        if (e == NULL)
            continue;
        apply_names(m, e);
        if (m->fields_invalid)
            return 0;
        uint64_t key = (uint64_t)(uintptr_t)e;
        uint64_t *have = cm_map_get(&r->manifest_fields, key);
        const rd_mfields *mf;
        if (have) {
            mf = (const rd_mfields *)(uintptr_t)*have;
        } else {
            rd_mfields *n = cm_arena_alloc(&r->arena, sizeof *n);
            if (n == NULL || rd_manifest_fields(&r->arena, e, r->info.pointer_size, &n->fields, &n->count) < 0 ||
                (n->plan = rd_manifest_plan_build(&r->arena, e, r->info.pointer_size)) == NULL ||
                cm_map_put(&r->manifest_fields, key, (uint64_t)(uintptr_t)n) < 0)
                return MANTRA_ENOMEM;
            mf = n;
        }
        if (m->field_count != 0 && !is_partial_of(m, mf))
            return 0; /* the trace describes the whole event: it wins */
        m->fields = mf->fields;
        m->field_count = mf->count;
        m->manifest_event = e;
        m->manifest_plan = mf->plan;
        m->fields_from_manifest = 1;
        return 1;
    }
    return 0;
}

static int apply_manifest(mantra_reader *r, mantra_trace_metadata *m) {
    return apply_manifest_from(r, m, r->manifests, r->nmanifests);
}

/* Fields from a registered provider description. A description flagged
 * MANTRA_EVENT_PARTIAL_METADATA holds only the fields before the first one that nettrace metadata
 * cannot express (a counted array, a length-field binary such as JitInstrumentationDataVerbose's
 * Data, a struct, an AnsiString): taken alone it would leave the rest of every payload undecoded and
 * reported as trailing bytes. Such an event takes its template from the manifest the providers were
 * generated from (mantra_reader_add_provider_manifest) when one was given. */
static int apply_registry(mantra_reader *r, mantra_trace_metadata *m) {
    if (m->fields_invalid || m->fields_from_manifest)
        return 0;
    for (size_t i = 0; i < r->nproviders; i++) {
        const mantra_provider_desc *p = r->providers[i];
        if (p->name == NULL || strcmp(p->name, m->provider) != 0)
            continue;
        for (uint32_t j = 0; j < p->event_count; j++) {
            const mantra_event_desc *d = &p->events[j];
            if (d->id != m->event_id || d->version != m->version || d->metadata == NULL)
                continue;
            /* a partial description, or the trace's own partial field list (a mantra writer's metadata
             * stops at the same field): the manifest completes it */
            if (d->flags & MANTRA_EVENT_PARTIAL_METADATA) {
                int rc = apply_manifest_from(r, m, r->provider_manifests, r->nprovider_manifests);
                if (rc != 0)
                    return rc < 0 ? rc : 0;
            }
            if (m->field_count != 0)
                return 0; /* the trace describes the event */
            mantra_trace_metadata tmp;
            memset(&tmp, 0, sizeof tmp);
            const char *what = NULL;
            if (rd_parse_metadata_v5_blob(&r->arena, d->metadata, d->metadata_size, &tmp, &what) != 0)
                return 0;
            if ((m->name == NULL || m->name[0] == '\0') && tmp.name != NULL)
                m->name = tmp.name; /* the description's name where the trace gives none */
            if (!tmp.fields_invalid && tmp.field_count) {
                m->fields = tmp.fields;
                m->field_count = tmp.field_count;
                m->fields_from_registry = 1;
            }
            return 0;
        }
    }
    return 0;
}

int rd_add_metadata(mantra_reader *r, mantra_trace_metadata *m, uint64_t off) {
    if (m->id == 0)
        return rd_fail(r, MANTRA_EFORMAT, off, "metadata record defines id 0");
    if (r->v6 && cm_map_get(&r->meta, m->id))
        return rd_fail(r, MANTRA_EFORMAT, off, "metadata id %u defined twice", m->id);
    if (apply_manifest(r, m) < 0 || apply_registry(r, m) < 0)
        return rd_fail(r, MANTRA_ENOMEM, off, "out of memory");
    if (!m->fields_from_manifest)
        m->fixed_payload_size = rd_fields_fixed_size(m->fields, m->field_count);
    if (cm_map_put(&r->meta, m->id, (uint64_t)(uintptr_t)m) < 0)
        return rd_fail(r, MANTRA_ENOMEM, off, "out of memory");
    r->stats.metadata++;
    return 0;
}
