# CMake toolchain file: WebAssembly under WASI (preview 1) with Debian's toolchain - clang-14
# --target=wasm32-wasi, the wasi-libc sysroot (/usr/include/wasm32-wasi, /usr/lib/wasm32-wasi),
# lld-14's wasm-ld and libclang-rt-14-dev-wasm32's builtins (`make deps WASM=1` installs them).
# Used by `make wasm`:  cmake -S . -B build-wasm -DCMAKE_TOOLCHAIN_FILE=cmake/wasm32-wasi.cmake
set(CMAKE_SYSTEM_NAME WASI)
set(CMAKE_SYSTEM_VERSION 1)
set(CMAKE_SYSTEM_PROCESSOR wasm32)
# cmake/Platform/WASI.cmake (CMake 3.25 has no WASI platform of its own)
list(APPEND CMAKE_MODULE_PATH "${CMAKE_CURRENT_LIST_DIR}")

find_program(MANTRA_WASM_CC NAMES clang-14 clang REQUIRED)
set(CMAKE_C_COMPILER "${MANTRA_WASM_CC}")
set(CMAKE_C_COMPILER_TARGET wasm32-wasi)
set(MANTRA_WASI_SYSROOT_INCLUDE "/usr/include/wasm32-wasi" CACHE PATH "wasi-libc headers")
set(MANTRA_WASI_SYSROOT_LIB "/usr/lib/wasm32-wasi" CACHE PATH "wasi-libc libraries")
# Debian's clang also searches the host's /usr/include: -nostdlibinc keeps host headers (pthread.h,
# bits/...) out, so only wasi-libc's are seen.
set(CMAKE_C_FLAGS_INIT "-nostdlibinc -isystem ${MANTRA_WASI_SYSROOT_INCLUDE}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-fuse-ld=lld -L${MANTRA_WASI_SYSROOT_LIB} -Wno-unused-command-line-argument")
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH "${MANTRA_WASI_SYSROOT_LIB}")
