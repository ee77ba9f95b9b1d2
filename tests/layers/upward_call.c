/* A deliberate layering violation for the layer-check test: code of the `core` layer calling the
 * session layer above it. Linked with core and the layers below it only, it must not link. */
#include "mantra/session.h"

const char *upward_call(void);
const char *upward_call(void) { return mantra_session_last_error(); }
