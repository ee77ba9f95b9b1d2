/* yaml_input.c - the manifest loader's checks on the input before libyaml sees it, as
 * generator/mantra_gen/load_yaml.py (_read, _check_depth, _compose) makes them: UTF-16 input with a
 * byte order mark converted to UTF-8, line and column of a byte offset, the nesting depth limit,
 * and libyaml's errors worded as PyYAML's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(MANTRA_HAVE_LIBYAML)

#include "common/utf-internal.h"
#include "manifest/loader-internal.h"

void mf_byte_loc(const uint8_t *data, size_t offset, unsigned *line, unsigned *col) {
    unsigned ln = 1, c = 1;
    for (size_t i = 0; i < offset; i++) {
        if (data[i] == '\n') {
            ln++;
            c = 1;
        } else if ((data[i] & 0xC0) != 0x80) {
            c++;
        }
    }
    *line = ln;
    *col = c;
}

uint8_t *mf_utf16_to_utf8(const uint8_t *d, size_t n, size_t *out_n, const char **reason) {
    int le = d[0] == 0xFF;
    d += 2;
    n -= 2;
    if (n % 2 != 0) {
        *reason = "truncated data";
        return NULL;
    }
    uint8_t *out = malloc(n / 2 * 3 + 1);
    if (out == NULL) {
        *reason = "out of memory";
        return NULL;
    }
    enum cm_utf16_problem problem;
    size_t o = cm_utf16_to_utf8(d, n, le, out, &problem);
    if (o == SIZE_MAX) {
        /* the words of Python's UTF-16 codec */
        *reason = problem == CM_UTF16_CUT_PAIR  ? "unexpected end of data"
                  : problem == CM_UTF16_BAD_LOW ? "illegal UTF-16 surrogate"
                  : problem == CM_UTF16_LONE_LOW ? "illegal encoding"
                                                 : "truncated data";
        free(out);
        return NULL;
    }
    *out_n = o;
    return out;
}

#define MAX_DEPTH 1000

/* libyaml itself copes with deep nesting, but the manifest loaders refuse more than MAX_DEPTH levels
 * (as load_yaml does): a cheap bound first, the parse events only when it is high. Returns 0, or 1
 * with the error set. */
int mf_check_depth(mf_loader *l, const uint8_t *data, size_t n) {
    size_t depth = 0, deepest = 0, line = 0, longest = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = data[i];
        if (c == '[' || c == '{') {
            if (++depth > deepest)
                deepest = depth;
        } else if (c == ']' || c == '}') {
            if (depth > 0)
                depth--;
        }
        if (c == '\n') {
            if (line > longest)
                longest = line;
            line = 0;
        } else {
            line++;
        }
    }
    if (line > longest)
        longest = line;
    if (deepest + 2 * longest + 2 <= MAX_DEPTH)
        return 0;
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return 0;
    yaml_parser_set_input_string(&parser, data, n);
    size_t d = 0;
    int result = 0;
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev))
            break; /* the loader reports it */
        yaml_event_type_t t = ev.type;
        if (t == YAML_MAPPING_START_EVENT || t == YAML_SEQUENCE_START_EVENT) {
            if (++d > MAX_DEPTH) {
                l->line = (unsigned)ev.start_mark.line + 1;
                l->column = (unsigned)ev.start_mark.column + 1;
                snprintf(l->message, sizeof l->message, "the YAML is nested too deeply (more than %d levels)",
                         MAX_DEPTH);
                l->has_note = 0;
                result = 1;
            }
        } else if (t == YAML_MAPPING_END_EVENT || t == YAML_SEQUENCE_END_EVENT) {
            d--;
        }
        yaml_event_delete(&ev);
        if (result || t == YAML_STREAM_END_EVENT)
            break;
    }
    yaml_parser_delete(&parser);
    return result;
}

void mf_yaml_error(mf_loader *l, const yaml_parser_t *parser, const uint8_t *data, size_t n) {
    l->has_note = 0;
    if (parser->error == YAML_MEMORY_ERROR) {
        l->oom = 1;
        return;
    }
    if (parser->error == YAML_READER_ERROR) {
        size_t off = parser->problem_offset <= n ? parser->problem_offset : n;
        mf_byte_loc(data, off, &l->line, &l->column);
        snprintf(l->message, sizeof l->message, "YAML syntax error: unacceptable character #x%04x: %s",
                 (unsigned)parser->problem_value, parser->problem ? parser->problem : "invalid input");
        return;
    }
    const char *problem = parser->problem, *context = parser->context;
    yaml_mark_t mark = parser->problem_mark;
    if (problem == NULL) {
        mark = parser->context_mark;
        if (context == NULL) {
            mark.line = 0;
            mark.column = 0;
        }
    }
    l->line = (unsigned)mark.line + 1;
    l->column = (unsigned)mark.column + 1;
    const char *text = problem ? problem : context ? context : "invalid YAML";
    if (context != NULL && problem != NULL && strncmp(problem, "but ", 4) == 0) {
        snprintf(l->message, sizeof l->message, "YAML syntax error: %s, %s", context, problem);
    } else {
        snprintf(l->message, sizeof l->message, "YAML syntax error: %s", text);
        if (context != NULL && problem != NULL) {
            l->has_note = 1;
            snprintf(l->note, sizeof l->note, "%s (started at line %u, column %u)", context,
                     (unsigned)parser->context_mark.line + 1, (unsigned)parser->context_mark.column + 1);
        }
    }
}

#endif /* MANTRA_HAVE_LIBYAML */
