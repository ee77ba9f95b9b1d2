/* json_read.h - the tool's JSON reader (json_read.c): a document as a tree of values. */
#ifndef MANTRA_TOOL_JSON_READ_H
#define MANTRA_TOOL_JSON_READ_H

#include <stddef.h>
#include <stdint.h>

typedef enum jr_type { JR_NULL, JR_BOOL, JR_NUMBER, JR_STRING, JR_ARRAY, JR_OBJECT } jr_type;

typedef struct jr_value {
    jr_type type;
    int boolean;
    /* a number: its double, and when it is an integer in the int64 or uint64 range, its exact
     * magnitude and sign */
    double number;
    int is_integer, negative;
    uint64_t magnitude;
    char *str;               /* a string, UTF-8 */
    struct jr_value **items; /* array elements, object member values */
    char **keys;             /* object member names */
    size_t count;
} jr_value;

/* The document in text[0..size); NULL with error ("line L, column C: what") when it is not JSON. */
jr_value *jr_parse(const char *text, size_t size, char *error, size_t error_size);
void jr_free(jr_value *v);
/* An object's member (the first of that name), NULL when none or not an object. */
const jr_value *jr_get(const jr_value *obj, const char *key);
/* An integer (a uint64 above INT64_MAX keeps its bits): 0, or -1 when not an integer. */
int jr_int64(const jr_value *v, int64_t *out);

#endif
