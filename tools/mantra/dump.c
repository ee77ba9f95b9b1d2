/* mantra dump [--json] [--sorted] [--manifest FILE]... TRACE - one line per event. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tool.h"

static const char dump_usage[] =
    "Usage: mantra dump [--json] [--sorted] [--manifest FILE]... TRACE\n"
    "\n"
    "Prints every event of a nettrace trace (V4/V5 or V6), one line per event, in file order.\n"
    "TRACE '-' reads standard input.\n"
    "\n"
    "  --json             one JSON object per line (docs/dump-json.md): timestamp, provider, event_id,\n"
    "                     version, name, [task, opcode,] thread_id, sequence, fields, field_source,\n"
    "                     [decode_error,] maps, stack\n"
    "  --sorted           time order, as TraceEvent dispatches events\n"
    "  --manifest FILE    decode events whose trace metadata has no fields with this manifest, in the\n"
    "                     YAML spelling `mantra-gen --emit-yaml` prints (convert ETW .man/.xml\n"
    "                     manifests with it first); repeatable; the colon-separated\n"
    "                     MANTRA_MANIFEST_PATH adds more after these. The .NET runtime's providers are\n"
    "                     built in (manifest/clr/, no flag needed); a manifest given here wins for the\n"
    "                     events it defines\n"
    "  --help      show this help\n"
    "  --version   show the version\n"
    "\n"
    "Payloads longer or shorter than their description (trace metadata or manifest template) are\n"
    "reported on stderr and counted; reading goes on.\n"
    "\n"
    "Exit status: 0 every complete block was read (a truncated trace is reported on stderr),\n"
    "1 unreadable or corrupt trace or a bad manifest (FILE:LINE:COL: error: MESSAGE), 2 usage error.\n";

static void text_event(FILE *out, const mantra_trace_event *ev) {
    const mantra_trace_metadata *m = ev->metadata;
    fprintf(out, "%" PRId64 " %s/%" PRIu32 "/v%" PRIu32 " %s tid=%" PRIu64 " seq=%" PRIu32 " ", ev->timestamp,
            m->provider, m->event_id, ev->version, m->name[0] ? m->name : "-", ev->thread_id, ev->sequence);
    json_fields(out, ev);
    if (json_map_count()) {
        fputs(" maps=", out);
        json_maps(out);
    }
    if (ev->stack_count)
        fprintf(out, " stack=%zu", ev->stack_count);
    putc('\n', out);
}

int cmd_dump(int argc, char **argv) {
    int json = 0, sorted = 0;
    const char *path = NULL;
    tool_manifests ms;
    memset(&ms, 0, sizeof ms);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(dump_usage, stdout);
            return TOOL_OK;
        }
        if (strcmp(a, "--version") == 0) {
            printf("mantra %s\n", MANTRA_VERSION_STRING);
            return TOOL_OK;
        }
        if (strcmp(a, "--json") == 0)
            json = 1;
        else if (strcmp(a, "--sorted") == 0)
            sorted = 1;
        else {
            int rc = tool_common_arg("dump", argc, argv, &i, &ms, &path);
            if (rc >= 0)
                return rc;
        }
    }
    if (path == NULL) {
        tool_manifests_free(&ms);
        return tool_usage_error("dump", "%s", "no trace given");
    }
    if (tool_manifests_load(&ms) < 0) {
        tool_manifests_free(&ms);
        return TOOL_BAD_INPUT;
    }
    mantra_reader *r = tool_reader("dump", sorted ? MANTRA_READER_SORTED : 0, &ms);
    if (r == NULL) {
        tool_manifests_free(&ms);
        return TOOL_BAD_INPUT;
    }
    int rc = tool_open(r, "dump", path);
    if (rc < 0) {
        mantra_reader_free(r);
        tool_manifests_free(&ms);
        return TOOL_BAD_INPUT;
    }
    static char obuf[1 << 16];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    const mantra_trace_event *ev;
    while ((rc = mantra_reader_next(r, &ev)) > 0) {
        if (json)
            json_event(stdout, ev);
        else
            text_event(stdout, ev);
        if (ev->decode_status != 0)
            tool_decode_warning("dump", path, ev);
        tool_progress(r, "dump", 0);
    }
    tool_progress(r, "dump", 1);
    fflush(stdout);
    tool_decode_summary("dump", path, r);
    if (rc < 0)
        tool_report(r, "dump", path);
    int status = tool_status(rc);
    if (ferror(stdout)) {
        fprintf(stderr, "mantra dump: error writing the output\n");
        status = TOOL_BAD_INPUT;
    }
    mantra_reader_free(r);
    tool_manifests_free(&ms);
    return status;
}
