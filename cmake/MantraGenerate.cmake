# MantraGenerate.cmake - mantra_generate(): turn an event manifest into a static library of
# generated writers, readers and registration tables at build time.
#
#   mantra_generate(TARGET <lib-name> MANIFEST <file> [OUTPUT_DIR <dir>])
#
# Runs `mantra-gen -o <dir> <file>` whenever the manifest or the generator changes, and creates
# the STATIC library <lib-name> from the generated .c files, with PUBLIC include dir <dir> and
# linked PUBLIC to mantra::mantra. For a manifest whose file stem is S, B is S with '-' and '.'
# replaced by '_', and the generator writes exactly:
#   B_defs.h B_writers.h B_writers.c B_readers.h B_readers.c B_registry.h B_registry.c B_events.md
# <dir> defaults to ${CMAKE_CURRENT_BINARY_DIR}/<lib-name>_generated; relative paths are taken
# from ${CMAKE_CURRENT_BINARY_DIR}. The target property MANTRA_GENERATED_DIR and the variable
# <lib-name>_GENERATED_DIR (in the caller's scope) name it.
#
# Whoever includes this file sets first:
#   MANTRA_GEN_COMMAND   the command (a list) that runs mantra-gen, e.g. `python3 tools/mantra-gen`
#                        in the source tree, or the installed `bin/mantra-gen` launcher
#   MANTRA_GEN_DEPENDS   the generator's files (the command reruns when one changes)
include_guard(GLOBAL)

if(NOT MANTRA_GEN_COMMAND)
  message(FATAL_ERROR "MantraGenerate.cmake: set MANTRA_GEN_COMMAND before including it")
endif()
set_property(GLOBAL PROPERTY MANTRA_GEN_COMMAND "${MANTRA_GEN_COMMAND}")
set_property(GLOBAL PROPERTY MANTRA_GEN_DEPENDS "${MANTRA_GEN_DEPENDS}")

# The base name mantra-gen uses for a manifest path: stem with '-' and '.' turned into '_'.
function(mantra_manifest_base manifest out_var)
  get_filename_component(_stem "${manifest}" NAME_WLE)
  string(REGEX REPLACE "[-.]" "_" _base "${_stem}")
  set(${out_var} "${_base}" PARENT_SCOPE)
endfunction()

function(mantra_generate)
  cmake_parse_arguments(PARSE_ARGV 0 MG "" "TARGET;MANIFEST;OUTPUT_DIR" "")
  if(MG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "mantra_generate: unknown arguments: ${MG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT MG_TARGET OR NOT MG_MANIFEST)
    message(FATAL_ERROR "mantra_generate: TARGET and MANIFEST are required")
  endif()
  if(TARGET ${MG_TARGET})
    message(FATAL_ERROR "mantra_generate: target ${MG_TARGET} already exists")
  endif()

  get_filename_component(_manifest "${MG_MANIFEST}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${_manifest}")
    message(FATAL_ERROR "mantra_generate: manifest ${_manifest} does not exist")
  endif()
  if(MG_OUTPUT_DIR)
    get_filename_component(_dir "${MG_OUTPUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  else()
    set(_dir "${CMAKE_CURRENT_BINARY_DIR}/${MG_TARGET}_generated")
  endif()
  mantra_manifest_base("${_manifest}" _b)

  set(_sources "${_dir}/${_b}_writers.c" "${_dir}/${_b}_readers.c" "${_dir}/${_b}_registry.c")
  set(_headers "${_dir}/${_b}_defs.h" "${_dir}/${_b}_writers.h" "${_dir}/${_b}_readers.h"
               "${_dir}/${_b}_registry.h")
  set(_outputs ${_headers} ${_sources} "${_dir}/${_b}_events.md")

  get_property(_cmd GLOBAL PROPERTY MANTRA_GEN_COMMAND)
  get_property(_deps GLOBAL PROPERTY MANTRA_GEN_DEPENDS)
  # mantra-gen leaves unchanged files alone; the touch keeps make from rerunning it every build.
  add_custom_command(
    OUTPUT ${_outputs}
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${_dir}"
    COMMAND ${_cmd} -o "${_dir}" "${_manifest}"
    COMMAND "${CMAKE_COMMAND}" -E touch_nocreate ${_outputs}
    DEPENDS "${_manifest}" ${_deps}
    COMMENT "mantra-gen: ${MG_MANIFEST} -> ${_dir}"
    VERBATIM)

  add_library(${MG_TARGET} STATIC ${_sources} ${_headers})
  target_include_directories(${MG_TARGET} PUBLIC "$<BUILD_INTERFACE:${_dir}>")
  target_link_libraries(${MG_TARGET} PUBLIC mantra::mantra)
  target_compile_features(${MG_TARGET} PRIVATE c_std_11)
  set_target_properties(${MG_TARGET} PROPERTIES MANTRA_GENERATED_DIR "${_dir}")
  if(COMMAND mantra_target_flags)
    # Inside mantra's own tree: generated code gets the project's warning set too.
    mantra_target_flags(${MG_TARGET})
  endif()
  set(${MG_TARGET}_GENERATED_DIR "${_dir}" PARENT_SCOPE)
endfunction()
