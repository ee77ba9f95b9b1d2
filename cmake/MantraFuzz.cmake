# MantraFuzz.cmake - fuzz targets.
#
#   mantra_add_fuzz_target(NAME SOURCES src... [LIBS libs...] [CORPUS dir...])
#
# SOURCES define `int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)`.
# * MANTRA_FUZZ=ON (clang only): a libFuzzer binary (-fsanitize=fuzzer,address,undefined).
#   Run it as `build-fuzz/tests/fuzz/NAME CORPUS_DIR` (or `make fuzz`).
# * otherwise: the same sources linked with cmake/fuzz-main.c, a driver that feeds every file
#   named on its command line (folders are walked) to LLVMFuzzerTestOneInput once.
# Either way, when CORPUS is given, a ctest `NAME` replays the corpus (in the ASan build too), so
# every checked-in crash reproducer stays a regression test.
include_guard(GLOBAL)

set(MANTRA_FUZZ_MAIN "${CMAKE_CURRENT_LIST_DIR}/fuzz-main.c")

function(mantra_add_fuzz_target NAME)
  cmake_parse_arguments(PARSE_ARGV 1 F "" "" "SOURCES;LIBS;CORPUS")
  if(NOT F_SOURCES)
    message(FATAL_ERROR "mantra_add_fuzz_target(${NAME}): SOURCES is required")
  endif()
  if(MANTRA_FUZZ)
    add_executable(${NAME} ${F_SOURCES})
    target_link_options(${NAME} PRIVATE -fsanitize=fuzzer)
  else()
    add_executable(${NAME} ${F_SOURCES} "${MANTRA_FUZZ_MAIN}")
  endif()
  mantra_target_flags(${NAME})
  target_include_directories(${NAME} PRIVATE "${PROJECT_SOURCE_DIR}/runtime/src" "${MANTRA_GENERATED_DIR}")
  target_link_libraries(${NAME} PRIVATE mantra::mantra ${F_LIBS})
  set_property(GLOBAL APPEND PROPERTY MANTRA_FUZZ_TARGETS ${NAME})

  set(_corpus "")
  foreach(_c IN LISTS F_CORPUS)
    get_filename_component(_abs "${_c}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND _corpus "${_abs}")
  endforeach()
  set_property(TARGET ${NAME} PROPERTY MANTRA_FUZZ_CORPUS "${_corpus}")
  if(_corpus)
    if(MANTRA_FUZZ)
      set(_cmd ${NAME} -runs=0 ${_corpus})
    else()
      set(_cmd ${NAME} ${_corpus})
    endif()
    if(COMMAND mantra_add_script_test)
      mantra_add_script_test(${NAME} COMMAND ${_cmd})
    else()
      add_test(NAME ${NAME} COMMAND ${_cmd} WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
    endif()
    set_property(TEST ${NAME} APPEND PROPERTY LABELS fuzz)
  endif()
endfunction()

# Called once at the end of the top-level CMakeLists: writes ${PROJECT_BINARY_DIR}/fuzz-targets.txt,
# one line per fuzz target: `<binary> [<corpus dir>...]` (read by `make fuzz`).
function(_mantra_finish_fuzz)
  get_property(_targets GLOBAL PROPERTY MANTRA_FUZZ_TARGETS)
  set(_lines "")
  foreach(_t IN LISTS _targets)
    get_property(_corpus TARGET ${_t} PROPERTY MANTRA_FUZZ_CORPUS)
    list(JOIN _corpus " " _c)
    string(APPEND _lines "$<TARGET_FILE:${_t}> ${_c}\n")
  endforeach()
  file(GENERATE OUTPUT "${PROJECT_BINARY_DIR}/fuzz-targets.txt" CONTENT "${_lines}")
endfunction()
