# skip.cmake - stands in for the ClrEtwAll tests when they cannot be built (see CMakeLists.txt).
#   cmake -DREASON=<why> -P skip.cmake
# Prints "SKIP: <why>" (CTest reports the test as skipped), or fails when the environment sets
# MANTRA_REQUIRE_INTEROP=1 (CI machines that must run them).
if("$ENV{MANTRA_REQUIRE_INTEROP}" STREQUAL "1")
  message(FATAL_ERROR "tests/clr: the ClrEtwAll tests are required (MANTRA_REQUIRE_INTEROP=1) "
                      "but were not built: ${REASON}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -E echo
  "SKIP: tests/clr: ClrEtwAll tests not built: ${REASON} (set MANTRA_REQUIRE_INTEROP=1 to make this fail)")
