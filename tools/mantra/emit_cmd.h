/* mantra emit (emit.c): the subcommand's entry point, dispatched from main.c. */
#ifndef MANTRA_TOOL_EMIT_CMD_H
#define MANTRA_TOOL_EMIT_CMD_H

int cmd_emit(int argc, char **argv);

#endif
