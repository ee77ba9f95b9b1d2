/* Shared declarations of the mantra CLI (tools/mantra/). */
#ifndef MANTRA_TOOL_H
#define MANTRA_TOOL_H

#include <stdint.h>
#include <stdio.h>

#include "mantra/interp.h"
#include "mantra/manifest.h"
#include "mantra/reader.h"

#ifndef MANTRA_VERSION_STRING
#define MANTRA_VERSION_STRING "0.0.0"
#endif

/* Exit statuses of every subcommand. */
enum { TOOL_OK = 0, TOOL_BAD_INPUT = 1, TOOL_USAGE = 2 };

int cmd_dump(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_run(int argc, char **argv); /* run.c */
int cmd_pgo(int argc, char **argv); /* pgo.c */
int cmd_image(int argc, char **argv); /* image.c */
int cmd_precompile(int argc, char **argv); /* precompile.c */
int cmd_symbolize(int argc, char **argv); /* symbolize.c */
int cmd_report(int argc, char **argv);    /* report.c */
int cmd_export(int argc, char **argv);    /* export.c */
int cmd_ps(int argc, char **argv);      /* ps.c (the diagnostics client; not in the WASI build) */
int cmd_collect(int argc, char **argv); /* collect.c */
int cmd_counters(int argc, char **argv); /* counters.c */

/* common.c */
/* Manifests given with --manifest FILE (in order), then those of MANTRA_MANIFEST_PATH. */
typedef struct tool_manifests {
    const char **files; /* --manifest arguments */
    size_t nfiles;
    mantra_manifest **loaded;
    size_t nloaded;
} tool_manifests;
/* Records a --manifest argument; 0, or -1 when out of memory (reported). */
int tool_manifests_add(tool_manifests *ms, const char *cmd, const char *file);
/* Loads the --manifest files, then each entry of the colon-separated MANTRA_MANIFEST_PATH (empty
 * entries skipped). On the first problem prints `FILE:LINE:COL: error: MESSAGE` (and a `note:`
 * line when the loader has one) and returns -1. ETW XML manifests (.man/.xml, or text starting
 * with '<') are refused with the command that converts them (mantra-gen --emit-yaml). */
int tool_manifests_load(tool_manifests *ms);
void tool_manifests_free(tool_manifests *ms);
/* A reader over path (or standard input for "-") with the loaded manifests (ms may be NULL) and
 * the registered providers. NULL when out of memory (reported). */
mantra_reader *tool_reader(const char *cmd, unsigned flags, const tool_manifests *ms);
/* Reports an event whose payload does not match its template on stderr (the first 20; later ones
 * are only counted): `mantra CMD: PATH: offset N: PROVIDER/ID/vV: payload ...`. */
void tool_decode_warning(const char *cmd, const char *path, const mantra_trace_event *ev);
/* After the last event: `mantra CMD: PATH: N events whose payload does not match their template`
 * when more than were shown. */
void tool_decode_summary(const char *cmd, const char *path, const mantra_reader *r);
/* Opens path; on failure prints `mantra CMD: PATH: MESSAGE` and returns the code. */
int tool_open(mantra_reader *r, const char *cmd, const char *path);
/* Prints `mantra CMD: PATH: ERROR` for the reader's last error. */
void tool_report(const mantra_reader *r, const char *cmd, const char *path);
/* Exit status for a reader status (0/ETRUNCATED -> 0, others -> 1). */
int tool_status(int rc);
/* Progress on stderr when it is a terminal and the run is long; call often, cheap. */
void tool_progress(const mantra_reader *r, const char *cmd, int done);
int tool_usage_error(const char *cmd, const char *fmt, const char *arg);
/* The whole of a file (standard input for "-"), NUL-terminated after its *size bytes (read_file.c);
 * NULL when it cannot be opened or read (errno says why) or memory ran out. */
char *tool_read_file(const char *path, size_t *size);
/* Reads and assembles the program at path ("-": standard input) into *out (assemble.c): 0, or -1
 * after printing the assembler's located error (or why the file cannot be read). */
int tool_assemble(const char *cmd, const char *path, mantra_interp_module **out);
/* Makes the array *p (*cap elements of elem bytes) hold at least need: doubling from first. 0, or
 * -2 when out of memory (*p and *cap unchanged). */
int tool_grow(void **p, size_t *cap, size_t need, size_t elem, size_t first);

/* The arguments every trace-reading subcommand shares: `--manifest FILE` (or --manifest=FILE) and
 * the one TRACE path. argv[*i] is the argument at hand (*i advances past a FILE). Returns -1 when
 * the argument was taken, else an exit status (usage error or bad manifest) after freeing ms. */
int tool_common_arg(const char *cmd, int argc, char **argv, int *i, tool_manifests *ms, const char **path);

/* json.c */
void json_string(FILE *out, const char *s, size_t len);
void json_utf16(FILE *out, const uint8_t *data, size_t units);
/* Writes the decoded fields of ev as a JSON object; returns the decoder's status. The names of
 * map fields' values are kept for json_maps() (until the next call). */
int json_fields(FILE *out, const mantra_trace_event *ev);
/* The map names of the last json_fields() call as a JSON object (docs/dump-json.md "maps"), and
 * their number. */
void json_maps(FILE *out);
size_t json_map_count(void);
/* "metadata", "manifest" or "none": where the field names of ev come from. */
const char *json_field_source(const mantra_trace_event *ev);
/* Writes one event as the JSON line of docs/dump-json.md (with the newline). */
void json_event(FILE *out, const mantra_trace_event *ev);

/* mantra stats --clock (stats_clock.c): the trace clock of this environment; a TOOL_* status. */
int stats_clock(int json);

#endif
