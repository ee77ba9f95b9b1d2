/* Shared declarations of the mantra CLI (tools/mantra/). */
#ifndef MANTRA_TOOL_H
#define MANTRA_TOOL_H

#include <stdint.h>
#include <stdio.h>

#include "mantra/reader.h"

#ifndef MANTRA_VERSION_STRING
#define MANTRA_VERSION_STRING "0.0.0"
#endif

/* Exit statuses of every subcommand. */
enum { TOOL_OK = 0, TOOL_BAD_INPUT = 1, TOOL_USAGE = 2 };

int cmd_dump(int argc, char **argv);
int cmd_stats(int argc, char **argv);

/* common.c */
/* A reader over path (or standard input for "-") with the registered providers. NULL when out of
 * memory (reported). */
mantra_reader *tool_reader(const char *cmd, unsigned flags);
/* Opens path; on failure prints `mantra CMD: PATH: MESSAGE` and returns the code. */
int tool_open(mantra_reader *r, const char *cmd, const char *path);
/* Prints `mantra CMD: PATH: ERROR` for the reader's last error. */
void tool_report(const mantra_reader *r, const char *cmd, const char *path);
/* Exit status for a reader status (0/ETRUNCATED -> 0, others -> 1). */
int tool_status(int rc);
/* Progress on stderr when it is a terminal and the run is long; call often, cheap. */
void tool_progress(const mantra_reader *r, const char *cmd, int done);
int tool_usage_error(const char *cmd, const char *fmt, const char *arg);

/* json.c */
void json_string(FILE *out, const char *s, size_t len);
void json_utf16(FILE *out, const uint8_t *data, size_t units);
/* Writes the decoded fields of ev as a JSON object; returns the decoder's status. */
int json_fields(FILE *out, const mantra_trace_event *ev);
/* Writes one event as the JSON line of docs/dump-json.md (with the newline). */
void json_event(FILE *out, const mantra_trace_event *ev);

#endif
