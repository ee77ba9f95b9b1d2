# embed_file.cmake - writes a C file holding the bytes of a file (the project's manifest, which the
# `mantra` tool uses to complete the generated registry's partial event descriptions).
#   cmake -DINPUT=FILE -DOUTPUT=FILE.c -DNAME=symbol -P embed_file.cmake
file(READ "${INPUT}" _hex HEX)
string(LENGTH "${_hex}" _len)
math(EXPR _size "${_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," _bytes "${_hex}")
string(REGEX REPLACE "((0x..,){32})" "\\1\n" _bytes "${_bytes}")
file(WRITE "${OUTPUT}.tmp"
  "/* Generated from ${INPUT} by tools/embed_file.cmake. */\n#include <stddef.h>\n"
  "const unsigned char ${NAME}[] = {\n${_bytes}0x00};\nconst size_t ${NAME}_size = ${_size};\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
