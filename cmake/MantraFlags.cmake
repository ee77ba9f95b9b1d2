# MantraFlags.cmake - compiler flags for all of mantra's own C code (library, generated code,
# tests, examples, benchmarks).
#
#   mantra::build_flags        INTERFACE target: C11 + the warning set (link it PRIVATE)
#                              (the project sets CMAKE_C_STANDARD 11 without extensions: -std=c11)
#   mantra_target_flags(<tgt>) applies it to a target (works for exported targets too)
#
# Sanitizer and fuzzing instrumentation is global (add_compile_options/add_link_options) because
# every object of an instrumented binary, libmantra included, must be built the same way.
include_guard(GLOBAL)

add_library(mantra_build_flags INTERFACE)
add_library(mantra::build_flags ALIAS mantra_build_flags)
target_compile_features(mantra_build_flags INTERFACE c_std_11)

if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(mantra_build_flags INTERFACE
    -Wall -Wextra -Wpedantic -Wconversion
    $<$<BOOL:${MANTRA_WERROR}>:-Werror>)
elseif(MSVC)
  target_compile_options(mantra_build_flags INTERFACE /W4 $<$<BOOL:${MANTRA_WERROR}>:/WX>)
endif()

# Applies the build flags and C11 (no extensions) to one target.
function(mantra_target_flags target)
  target_link_libraries(${target} PRIVATE $<BUILD_INTERFACE:mantra::build_flags>)
  set_target_properties(${target} PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
endfunction()

if(MANTRA_SANITIZE)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
    message(FATAL_ERROR "MANTRA_SANITIZE needs gcc or clang")
  endif()
  message(STATUS "mantra: ASan + UBSan instrumentation on")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
endif()

# ThreadSanitizer (the threaded tests, `make test-tsan`). TSan cannot be combined with ASan, so it
# excludes MANTRA_SANITIZE and MANTRA_FUZZ (which instruments with ASan too).
if(MANTRA_SANITIZE_THREAD)
  if(MANTRA_SANITIZE OR MANTRA_FUZZ)
    message(FATAL_ERROR "MANTRA_SANITIZE_THREAD (TSan) cannot be combined with MANTRA_SANITIZE or "
                        "MANTRA_FUZZ (ASan): configure separate build folders")
  endif()
  if(NOT CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
    message(FATAL_ERROR "MANTRA_SANITIZE_THREAD needs gcc or clang")
  endif()
  message(STATUS "mantra: TSan instrumentation on")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()

if(MANTRA_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(WARNING "MANTRA_FUZZ needs clang (libFuzzer); compiler is ${CMAKE_C_COMPILER_ID}: "
                    "fuzz targets build as corpus-replay programs instead. "
                    "Configure with -DCMAKE_C_COMPILER=clang-14 (or `make fuzz`).")
    set(MANTRA_FUZZ OFF CACHE BOOL "Build clang libFuzzer targets under tests/fuzz" FORCE)
  else()
    message(STATUS "mantra: libFuzzer instrumentation on (fuzzer-no-link + ASan + UBSan)")
    add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                        -fno-sanitize-recover=all)
    add_link_options(-fsanitize=address,undefined)
  endif()
endif()
