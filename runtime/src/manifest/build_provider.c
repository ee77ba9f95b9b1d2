/* build_provider.c - the manifest model's providers and the manifest root: provider names and
 * GUIDs (given, or derived from the name as EventSource does), named and inline templates, events
 * (ids, versions, levels, keywords, tasks, opcodes, templates; sorted by id and version for the
 * lookups) and PGO kinds, with the rules of generator/mantra_gen/validate.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(MANTRA_HAVE_LIBYAML)

#include "manifest/loader-internal.h"

static const char *const MANIFEST_KEYS[] = {"providers", "pgo_kinds", NULL};
const char *const mf_provider_keys[] = {"name",    "guid",  "prefix", "symbol",    "message", "keywords",
                                        "opcodes", "tasks", "maps",   "templates", "events",  NULL};
static const char *const TEMPLATE_KEYS[] = {"name", "fields", NULL};
static const char *const EVENT_KEYS[] = {"name",   "id",       "version", "level",  "keywords", "task",
                                         "opcode", "template", "fields",  "symbol", "stack",    "message", NULL};
static const char *const PGO_KEYS[] = {"name", "value", "size", NULL};

static const char *const STANDARD_OPCODES[] = {"win:Info",   "win:Start",  "win:Stop",    "win:DC_Start",
                                               "win:DC_Stop", "win:Extension", "win:Reply", "win:Resume",
                                               "win:Suspend", "win:Send",   "win:Receive"};
static const uint8_t STANDARD_OPCODE_VALUES[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 240};
/* Their display names: the messages winmeta.xml gives them (Windows SDK; the names TraceEvent shows,
 * microsoft/perfview src/TraceEvent/TraceEvent.cs TraceEventOpcode). */
static const char *const STANDARD_OPCODE_MESSAGES[] = {"Info",      "Start",  "Stop",   "DCStart",
                                                       "DCStop",    "Extension", "Reply", "Resume",
                                                       "Suspend",   "Send",   "Receive"};

static int cmp_event_key(const void *a, const void *b) {
    const mantra_manifest_event *x = *(const mantra_manifest_event *const *)a;
    const mantra_manifest_event *y = *(const mantra_manifest_event *const *)b;
    uint64_t kx = (uint64_t)x->id << 8 | x->version, ky = (uint64_t)y->id << 8 | y->version;
    if (kx != ky)
        return kx < ky ? -1 : 1;
    return x < y ? -1 : x > y; /* manifest order among duplicates */
}

static void provider(mf_loader *l, yaml_node_t *node, mantra_manifest_provider *out, mf_names *by_name,
                     mf_names *by_guid, yaml_node_t **provider_nodes, size_t index) {
    mf_pairs pp;
    mf_mapping(l, node, "provider", mf_provider_keys, 0x1, &pp);
    mf_provider_ctx cx;
    memset(&cx, 0, sizeof cx);
    cx.p = out;
    const char *name = mf_string(l, pp.val[0], "name");
    const char *guid = mf_given(&pp, 1) ? mf_guid_text(l, pp.val[1], "guid") : NULL;
    for (size_t i = 2; i <= 4; i++)
        if (mf_given(&pp, i))
            mf_string(l, pp.val[i], mf_provider_keys[i]);
    out->name = mf_keep(l, name);
    const mantra_manifest_provider *dup = mf_names_add(l, by_name, out->name, out);
    if (dup != NULL) {
        char nb[64];
        mf_fail(l, node, mf_first_line(mf_node_line(provider_nodes[(size_t)(dup - (out - index))]), nb, sizeof nb),
                "provider '%s' is defined twice", name);
    }
    if (guid != NULL) {
        mf_check_guid(l, guid, "provider", name, node, &out->guid);
    } else {
        if (mantra_manifest_eventsource_guid(name, &out->guid) != 0)
            mf_fail(l, node, NULL, "provider name '%s' is not valid UTF-8", name);
        out->guid_derived = 1;
    }
    char gtext[37];
    mantra_manifest_guid_format(&out->guid, gtext);
    char *gkey = mf_scratch(l, 37, 1);
    memcpy(gkey, gtext, 37);
    const mantra_manifest_provider *gdup = mf_names_add(l, by_guid, gkey, out);
    if (gdup != NULL) {
        char nb[64];
        mf_fail(l, node, mf_first_line(mf_node_line(provider_nodes[(size_t)(gdup - (out - index))]), nb, sizeof nb),
                "provider '%s' reuses the GUID '%s' of provider '%s'", name, gtext, gdup->name);
    }

    mf_keywords(l, &cx, &pp);
    mf_tasks(l, &cx, &pp);
    {
        size_t n;
        yaml_node_item_t *items = mf_sequence(l, &pp, mf_key_index(mf_provider_keys, "opcodes"), "opcodes", &n);
        mf_opcodes(l, items, n, &cx.popcodes, "");
    }
    mf_maps(l, &cx, &pp);

    /* templates: the named ones, then one per event with inline fields */
    size_t tn, en;
    yaml_node_item_t *titems = mf_sequence(l, &pp, mf_key_index(mf_provider_keys, "templates"), "templates", &tn);
    yaml_node_item_t *eitems = mf_sequence(l, &pp, mf_key_index(mf_provider_keys, "events"), "events", &en);
    size_t inline_n = 0;
    for (size_t i = 0; i < en; i++) {
        yaml_node_t *e = mf_node_at(l, eitems[i]);
        if (e->type != YAML_MAPPING_NODE)
            continue;
        for (yaml_node_pair_t *pr = e->data.mapping.pairs.start; pr < e->data.mapping.pairs.top; pr++) {
            yaml_node_t *k = mf_node_at(l, pr->key);
            if (k->type == YAML_SCALAR_NODE && strcmp(mf_svalue(k), "fields") == 0 &&
                !mf_is_null(mf_node_at(l, pr->value))) {
                inline_n++;
                break;
            }
        }
    }
    mantra_manifest_template *tpls = mf_alloc(l, tn + inline_n ? tn + inline_n : 1, sizeof *tpls);
    yaml_node_t **tnodes = mf_scratch(l, tn ? tn : 1, sizeof *tnodes);
    mf_names_init(l, &cx.templates);
    for (size_t i = 0; i < tn; i++) {
        yaml_node_t *tnode = mf_node_at(l, titems[i]);
        mf_pairs tp;
        mf_mapping(l, tnode, "template", TEMPLATE_KEYS, 0x1, &tp);
        const char *tname = mf_string(l, tp.val[0], "name");
        tnodes[i] = tnode;
        const mantra_manifest_template *first = mf_names_add(l, &cx.templates, tname, &tpls[i]);
        if (first != NULL) {
            char nb[64];
            mf_fail(l, tnode, mf_first_line(mf_node_line(tnodes[first - tpls]), nb, sizeof nb),
                    "template '%s' is defined twice", tname);
        }
        mf_template_of(l, &cx, &tpls[i], tname, tp.val[1], tnode);
    }
    size_t tcount = tn;

    /* events */
    mantra_manifest_event *events = mf_alloc(l, en ? en : 1, sizeof *events);
    uint8_t *used = mf_scratch(l, tn + inline_n ? tn + inline_n : 1, 1);
    const char **tnames = mf_scratch(l, en ? en : 1, sizeof *tnames);
    for (size_t i = 0; i < en; i++) {
        yaml_node_t *enode = mf_node_at(l, eitems[i]);
        mantra_manifest_event *e = &events[i];
        mf_pairs p;
        mf_mapping(l, enode, "event", EVENT_KEYS, 0x3, &p);
        e->provider = out;
        e->line = mf_node_line(enode);
        e->column = mf_node_col(enode);
        const char *ename = mf_string(l, p.val[0], "name");
        mf_int id = mf_integer(l, p.val[1], "id");
        mf_int version;
        memset(&version, 0, sizeof version);
        snprintf(version.text, sizeof version.text, "0");
        if (mf_given(&p, 2))
            version = mf_integer(l, p.val[2], "version");
        e->level = MANTRA_LEVEL_INFORMATIONAL;
        if (mf_given(&p, 3))
            e->level = mf_level(l, p.val[3], "level");
        yaml_node_t *kw = mf_given(&p, 4);
        if (kw != NULL) {
            char dbuf_[256];
            if (kw->type != YAML_SEQUENCE_NODE)
                mf_fail(l, kw, NULL, "expected a sequence for 'keywords', got %s", MF_DESCRIBE(kw));
            for (yaml_node_item_t *it = kw->data.sequence.items.start; it < kw->data.sequence.items.top; it++) {
                yaml_node_t *k = mf_node_at(l, *it);
                if (k->type != YAML_SCALAR_NODE || mf_is_null(k))
                    mf_fail(l, k, NULL, "expected a name in 'keywords', got %s", MF_DESCRIBE(k));
            }
        }
        const char *task = mf_given(&p, 5) ? mf_string(l, p.val[5], "task") : NULL;
        const char *opcode = mf_given(&p, 6) ? mf_string(l, p.val[6], "opcode") : NULL;
        const char *tname = mf_given(&p, 7) ? mf_string(l, p.val[7], "template") : NULL;
        const char *symbol = mf_given(&p, 9) ? mf_string(l, p.val[9], "symbol") : NULL;
        e->stack = 1;
        if (mf_given(&p, 10))
            e->stack = (uint8_t)mf_boolean(l, p.val[10], "stack");
        if (mf_given(&p, 11))
            mf_string(l, p.val[11], "message");
        int inline_fields = mf_given(&p, 8) != NULL;
        e->name = mf_keep(l, ename);
        /* the symbol: given, or name plus _V<version> when version > 0 */
        if (symbol != NULL) {
            e->symbol = mf_keep(l, symbol);
        } else if (!version.neg && !version.big && version.mag > 0) {
            char sym[600];
            snprintf(sym, sizeof sym, "%.500s_V%s", ename, version.text);
            e->symbol = mf_keep(l, sym);
        } else {
            e->symbol = e->name;
        }
        if (inline_fields) {
            if (p.key[7] != NULL)
                mf_fail(l, p.key[8], NULL, "an event cannot have both 'fields' and 'template'");
            if (mf_names_get(&cx.templates, e->symbol) != NULL)
                mf_fail(l, p.key[8], NULL, "inline fields would create template '%s', which already exists", e->symbol);
            mantra_manifest_template *t = &tpls[tcount];
            mf_names_add(l, &cx.templates, e->symbol, t);
            mf_template_of(l, &cx, t, e->symbol, p.val[8], p.key[8]);
            e->tpl = t;
            used[tcount] = 1;
            tcount++;
        }
        /* validate.events */
        char owner[300];
        snprintf(owner, sizeof owner, "event '%.280s'", ename);
        e->id = (uint32_t)mf_in_range(l, &id, "id", owner, 0xFFFF, e->line, e->column, NULL);
        e->version = (uint8_t)mf_in_range(l, &version, "version", owner, 0xFF, e->line, e->column, NULL);
        for (size_t j = 0; j < i; j++) {
            if (events[j].id == e->id && events[j].version == e->version) {
                char nb[64];
                mf_first_line(events[j].line, nb, sizeof nb);
                if (strcmp(events[j].name, e->name) == 0)
                    mf_fail(l, enode, nb, "event '%s' (id %u, version %u) is defined twice", ename, (unsigned)e->id,
                            (unsigned)e->version);
                mf_fail(l, enode, nb, "event '%s' (id %u, version %u) reuses the id and version of event '%s'", ename,
                        (unsigned)e->id, (unsigned)e->version, events[j].name);
            }
        }
        if (kw != NULL) {
            for (yaml_node_item_t *it = kw->data.sequence.items.start; it < kw->data.sequence.items.top; it++) {
                const char *kname = mf_svalue(mf_node_at(l, *it));
                const mantra_manifest_keyword *k = mf_names_get(&cx.keywords, kname);
                if (k == NULL)
                    mf_fail(l, enode, NULL, "undefined keyword '%s'", kname);
                e->keywords |= k->mask;
            }
        }
        const mf_task_def *td = NULL;
        if (task != NULL) {
            td = mf_names_get(&cx.tasks, task);
            if (td == NULL)
                mf_fail(l, enode, NULL, "undefined task '%s'", task);
            e->task = td->value;
            e->task_name = td->name;
            e->task_message = td->message;
        }
        if (opcode != NULL) {
            const mf_opcode_def *od = td != NULL ? mf_names_get(&td->opcodes, opcode) : NULL;
            if (od == NULL)
                od = mf_names_get(&cx.popcodes, opcode);
            if (od != NULL) {
                e->opcode = od->value;
                e->opcode_name = od->name;
                e->opcode_message = od->message;
            } else {
                size_t s = 0;
                while (s < sizeof STANDARD_OPCODES / sizeof STANDARD_OPCODES[0] &&
                       strcmp(STANDARD_OPCODES[s], opcode) != 0)
                    s++;
                if (s == sizeof STANDARD_OPCODES / sizeof STANDARD_OPCODES[0]) {
                    /* an opcode of another task? */
                    char note[600];
                    const char *hint = NULL;
                    for (size_t ti = 0; ti < cx.task_count && hint == NULL; ti++) {
                        const mf_task_def *other = &cx.task_defs[ti];
                        if (mf_names_get(&other->opcodes, opcode) != NULL) {
                            snprintf(note, sizeof note,
                                     "opcode '%.200s' belongs to task '%.200s'; an event can use its own task's "
                                     "opcodes, provider opcodes and win: opcodes",
                                     opcode, other->name);
                            hint = note;
                        }
                    }
                    mf_fail(l, enode, hint, "undefined opcode '%s'", opcode);
                }
                e->opcode = STANDARD_OPCODE_VALUES[s];
                e->opcode_name = STANDARD_OPCODES[s];
                e->opcode_message = STANDARD_OPCODE_MESSAGES[s];
            }
        }
        tnames[i] = tname;
    }
    /* template references (an inline template may be named by another event, as in the model) */
    for (size_t i = 0; i < en; i++) {
        if (tnames[i] == NULL)
            continue;
        const mantra_manifest_template *t = mf_names_get(&cx.templates, tnames[i]);
        if (t == NULL)
            mf_fail_at(l, events[i].line, events[i].column, NULL, "undefined template '%s'", tnames[i]);
        events[i].tpl = t;
        used[t - tpls] = 1;
    }
    /* the fixed part of a used template fits an event */
    for (size_t i = 0; i < tcount; i++) {
        if (!used[i])
            continue;
        uint64_t size = mf_fixed_size(tpls[i].fields, tpls[i].field_count);
        if (size > 0xFFFF)
            mf_fail_at(l, tpls[i].line, tpls[i].column, "an event payload must stay below 64 KiB",
                       "template '%s' has %llu bytes of fixed payload, more than 65535", tpls[i].name,
                       (unsigned long long)size);
    }
    const mantra_manifest_event **sorted = mf_alloc(l, en ? en : 1, sizeof *sorted);
    for (size_t i = 0; i < en; i++)
        sorted[i] = &events[i];
    qsort(sorted, en, sizeof *sorted, cmp_event_key);
    out->templates = tpls;
    out->template_count = (uint32_t)tcount;
    out->events = events;
    out->event_count = (uint32_t)en;
    out->events_by_key = sorted;
}

static void pgo_kinds(mf_loader *l, const mf_pairs *mp) {
    size_t n;
    yaml_node_item_t *items = mf_sequence(l, mp, 1, "pgo_kinds", &n);
    mantra_manifest_pgo_kind *out = mf_alloc(l, n ? n : 1, sizeof *out);
    yaml_node_t **nodes = mf_scratch(l, n ? n : 1, sizeof *nodes);
    mf_names names;
    mf_names_init(l, &names);
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *node = mf_node_at(l, items[i]);
        mf_pairs p;
        mf_mapping(l, node, "pgo kind", PGO_KEYS, 0x7, &p);
        const char *name = mf_string(l, p.val[0], "name");
        mf_int value = mf_integer(l, p.val[1], "value");
        mf_int size = mf_integer(l, p.val[2], "size");
        nodes[i] = node;
        const mantra_manifest_pgo_kind *first = mf_names_add(l, &names, name, &out[i]);
        if (first != NULL) {
            char nb[64];
            mf_fail(l, node, mf_first_line(mf_node_line(nodes[first - out]), nb, sizeof nb),
                    "pgo kind '%s' is defined twice", name);
        }
        char owner[300];
        snprintf(owner, sizeof owner, "pgo kind '%.280s'", name);
        out[i].name = mf_keep(l, name);
        out[i].value =
            (uint32_t)mf_in_range(l, &value, "value", owner, 0xFFFFFFFFu, mf_node_line(node), mf_node_col(node), NULL);
        for (size_t j = 0; j < i; j++) {
            if (out[j].value == out[i].value) {
                char nb[64];
                mf_fail(l, node, mf_first_line(mf_node_line(nodes[j]), nb, sizeof nb),
                        "pgo kind '%s' reuses the value 0x%lx of pgo kind '%s'", name, (unsigned long)out[i].value,
                        out[j].name);
            }
        }
        int ok = !size.big && ((size.neg && size.mag == 1) ||
                               (!size.neg && (size.mag == 0 || size.mag == 1 || size.mag == 2 || size.mag == 4 ||
                                              size.mag == 8)));
        if (!ok)
            mf_fail(l, node, "bytes per element: 1, 2, 4 or 8; 0 for none; -1 for pointer size",
                    "size %s of pgo kind '%s' is not one of -1, 0, 1, 2, 4, 8", size.text, name);
        out[i].size = size.neg ? -1 : (int32_t)size.mag;
    }
    l->m->pgo_kinds = out;
    l->m->pgo_kind_count = (uint32_t)n;
}

void mf_build_manifest(mf_loader *l, yaml_node_t *root) {
    mf_pairs mp;
    mf_mapping(l, root, "manifest", MANIFEST_KEYS, 0x1, &mp);
    size_t n;
    yaml_node_item_t *items = mf_sequence(l, &mp, 0, "providers", &n);
    if (n == 0)
        mf_fail(l, mp.val[0], NULL, "expected at least one provider in 'providers'");
    mantra_manifest_provider *providers = mf_alloc(l, n, sizeof *providers);
    yaml_node_t **nodes = mf_scratch(l, n, sizeof *nodes);
    mf_names by_name, by_guid;
    mf_names_init(l, &by_name);
    mf_names_init(l, &by_guid);
    l->m->providers = providers;
    for (size_t i = 0; i < n; i++) {
        nodes[i] = mf_node_at(l, items[i]);
        provider(l, nodes[i], &providers[i], &by_name, &by_guid, nodes, i);
        l->m->event_count += providers[i].event_count;
    }
    l->m->provider_count = (uint32_t)n;
    pgo_kinds(l, &mp);
}

#endif /* MANTRA_HAVE_LIBYAML */
