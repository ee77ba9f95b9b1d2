# skip.cmake - stands in for the interop tests when there is no usable dotnet (see CMakeLists.txt).
#   cmake -DREASON=<why> -P skip.cmake
# Prints "SKIP: <why>" (CTest reports the test as skipped), or fails when the environment sets
# MANTRA_REQUIRE_INTEROP=1 (CI machines that must run them).
if("$ENV{MANTRA_REQUIRE_INTEROP}" STREQUAL "1")
  message(FATAL_ERROR "tests/interop: the TraceEvent interop tests are required (MANTRA_REQUIRE_INTEROP=1) "
                      "but cannot run: ${REASON}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -E echo
  "SKIP: tests/interop: TraceEvent interop tests not run: ${REASON} (set MANTRA_REQUIRE_INTEROP=1 to make this fail)")
