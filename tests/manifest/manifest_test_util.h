/* Helpers shared by the tests of the run-time manifest loader (tests/manifest). */
#ifndef MANTRA_TESTS_MANIFEST_UTIL_H
#define MANTRA_TESTS_MANIFEST_UTIL_H

#include "mantra/manifest.h"

/* $MANTRA_SOURCE_DIR/rel (or ./rel); a static buffer. */
const char *mt_source_path(const char *rel);

/* Loads a manifest file; fails the test (with the loader's message) when it does not load. */
mantra_manifest *mt_load_file(const char *path);

/* Loads text (named `name` in errors) expecting a failure; returns the formatted error, with
 * "\n<FILE:LINE:COL>: note: <NOTE>" appended when there is a note (static buffer). Fails the test
 * when the text loads. */
const char *mt_load_error(const char *text, const char *name);

/* The fields of a template in one line (see manifest_test_util.c); a static buffer. */
const char *mt_fields(const mantra_manifest_template *t);

/* One line per event, as tests/manifest/dump_events.py prints them from the generator's model. */
char *mt_describe_events(const mantra_manifest *m); /* malloc'd */

#endif
