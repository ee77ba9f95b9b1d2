/* assemble.c - a program file assembled for a subcommand (run, precompile): read, assembled, its
 * first error printed as FILE:LINE:COL: error: MESSAGE (docs/interp.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

int tool_assemble(const char *cmd, const char *path, mantra_interp_module **out) {
    size_t size = 0;
    errno = 0;
    char *text = tool_read_file(path, &size);
    if (text == NULL) {
        fprintf(stderr, "mantra %s: %s: %s\n", cmd, path, errno ? strerror(errno) : "out of memory");
        return -1;
    }
    mantra_interp_diag diag;
    int rc = mantra_interp_assemble(text, size, strcmp(path, "-") == 0 ? "<stdin>" : path, out, &diag);
    free(text);
    if (rc == MANTRA_EFORMAT)
        fprintf(stderr, "%s\n", diag.text);
    else if (rc != 0)
        fprintf(stderr, "mantra %s: %s: %s\n", cmd, path, mantra_strerror(rc));
    return rc == 0 ? 0 : -1;
}
