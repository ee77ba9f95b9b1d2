/* image_names.h - a ReadyToRun image's methods named as the runtime names them (image_names.c). */
#ifndef MANTRA_TOOL_IMAGE_NAMES_H
#define MANTRA_TOOL_IMAGE_NAMES_H

#include "mantra/ecma.h"
#include "pgo_mibc.h"

/* m's type with its instantiation ("Ns.Outer+Inner", "Ns.List`1[System.Int32]") into ns, its name
 * with a generic method's arguments ("Deconstruct[System.__Canon]") into name, its MethodDef's
 * signature text ("instance bool  (!0)") into sig (may be NULL). 0; -1 when m has no MethodDef of
 * md (an instantiation of another module's method); -2 out of memory. */
int image_method_names(const mantra_md *md, const mantra_r2r_method *m, pgo_text *ns, pgo_text *name, pgo_text *sig);

#endif
