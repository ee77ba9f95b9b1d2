# MantraBench.cmake - benchmark programs (they print figures; they are not tests).
#
#   mantra_add_bench(NAME SOURCES src... [LIBS libs...] [ARGS args...])
#
# Builds the program with the project's flags, linked to mantra::mantra, and adds it to the
# `bench-run` target (`make bench`), which runs every benchmark in turn with its ARGS from the
# source root.
include_guard(GLOBAL)

function(mantra_add_bench NAME)
  cmake_parse_arguments(PARSE_ARGV 1 B "" "" "SOURCES;LIBS;ARGS")
  if(NOT B_SOURCES)
    message(FATAL_ERROR "mantra_add_bench(${NAME}): SOURCES is required")
  endif()
  add_executable(${NAME} ${B_SOURCES})
  mantra_target_flags(${NAME})
  target_include_directories(${NAME} PRIVATE "${PROJECT_SOURCE_DIR}/runtime/src" "${MANTRA_GENERATED_DIR}")
  target_link_libraries(${NAME} PRIVATE mantra::mantra ${B_LIBS})
  set_property(GLOBAL APPEND PROPERTY MANTRA_BENCH_TARGETS ${NAME})
  set_property(TARGET ${NAME} PROPERTY MANTRA_BENCH_ARGS "${B_ARGS}")
endfunction()

# Called once at the end of the top-level CMakeLists: the bench-run target.
function(_mantra_finish_bench)
  get_property(_benches GLOBAL PROPERTY MANTRA_BENCH_TARGETS)
  set(_cmds "")
  foreach(_b IN LISTS _benches)
    get_property(_args TARGET ${_b} PROPERTY MANTRA_BENCH_ARGS)
    list(APPEND _cmds COMMAND "${CMAKE_COMMAND}" -E echo "== bench: ${_b} ${_args}")
    list(APPEND _cmds COMMAND $<TARGET_FILE:${_b}> ${_args})
  endforeach()
  if(NOT _cmds)
    set(_cmds COMMAND "${CMAKE_COMMAND}" -E echo "no benchmarks defined (bench/CMakeLists.txt, mantra_add_bench)")
  endif()
  add_custom_target(bench-run ${_cmds} DEPENDS ${_benches}
                    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}" USES_TERMINAL VERBATIM)
endfunction()
