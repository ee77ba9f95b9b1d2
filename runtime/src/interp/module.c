/* module.c - the assembled module: method identities and signatures, freeing. */
#include <stdlib.h>

#include "interp/interp-internal.h"

void mantra_interp_module_free(mantra_interp_module *m) {
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->nmethods; i++) {
        ip_method *x = &m->methods[i];
        free(x->namespace_name);
        free(x->name);
        free(x->full_name);
        free(x->signature);
        free(x->il);
    }
    free(m->methods);
    for (size_t i = 0; i < m->nstrings; i++)
        free(m->strings[i]);
    free(m->strings);
    free(m->string_lens);
    free(m->name);
    free(m);
}

size_t mantra_interp_module_method_count(const mantra_interp_module *m) {
    return m ? m->nmethods : 0;
}

int mantra_interp_module_method(const mantra_interp_module *m, size_t i, mantra_interp_method_identity *out) {
    if (m == NULL || out == NULL || i >= m->nmethods)
        return MANTRA_EINVAL;
    const ip_method *x = &m->methods[i];
    out->module_name = m->name;
    out->module_guid = m->guid;
    out->token = x->token;
    out->namespace_name = x->namespace_name;
    out->name = x->name;
    out->signature = x->signature;
    out->il_size = x->il_size;
    return 0;
}

int mantra_interp_module_returns_double(const mantra_interp_module *m, size_t method) {
    if (m == NULL || method >= m->nmethods || m->methods[method].ret_type == IP_TYPE_VOID)
        return -1;
    return m->methods[method].ret_type == IP_TYPE_F64;
}

int mantra_interp_module_arg_count(const mantra_interp_module *m, size_t method) {
    if (m == NULL || method >= m->nmethods)
        return -1;
    return m->methods[method].nargs;
}

int mantra_interp_module_arg_is_double(const mantra_interp_module *m, size_t method, size_t i) {
    if (m == NULL || method >= m->nmethods || i >= m->methods[method].nargs)
        return -1;
    return m->methods[method].arg_types[i] == IP_TYPE_F64;
}
