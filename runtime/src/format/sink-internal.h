/* sink-internal.h - what the library asks of a sink beyond mantra/sink.h. */
#ifndef MANTRA_SINK_INTERNAL_H
#define MANTRA_SINK_INTERNAL_H

#include "mantra/sink.h"

/* 1 when mantra_sink_write_parts() hands the parts to the output in one gathered call (a
 * descriptor: writev), so that writing borrowed bytes from where they are beats copying them;
 * 0 for memory, fixed-buffer and callback sinks, which take the parts one by one (a callback a
 * call each: the diagnostics stream's sends), and for NULL. */
int mantra_sink_gathers(const mantra_sink *s);

#endif /* MANTRA_SINK_INTERNAL_H */
