#!/usr/bin/env bash
# build.sh - builds session_write_lttng: bench/session_write.c with the LTTng-UST anchor variants
# (lttng, lttng2: `tracepoint(mantra_bench, tick, thread, index)`, the provider of
# mantra_bench_tp.h / mantra_bench_tp.c, two ctf_integer fields) beside the mantra variants, in one
# program, so that both are measured in the same run against the same baselines.
#
# Never part of the CMake build: gcc directly, against the libmantra.a / libmantra_dotnet.a of an
# existing CMake build folder (configured with -DMANTRA_BUILD_BENCH=ON and the session_write target
# built, whose compile flags and link line are reused), and LTTng-UST 2.13 (Debian:
# liblttng-ust-dev). When the LTTng-UST headers or library are missing it prints
# "skipped: ..." and exits 0 (exit 3 with --strict).
#
# Usage: bench/lttng/build.sh [--build-dir DIR] [-o OUT] [--strict]
#   --build-dir DIR  CMake build folder (default: build); session_write is (re)built there first
#   -o OUT           output program (default: DIR/bench/session_write_lttng)
# Prints the path of the program on its last line.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD_DIR="$REPO/build"
OUT=""
STRICT=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) BUILD_DIR=$2; shift 2 ;;
    -o) OUT=$2; shift 2 ;;
    --strict) STRICT=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "lttng/build.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR="$PWD/$BUILD_DIR" ;; esac
[ -n "$OUT" ] || OUT="$BUILD_DIR/bench/session_write_lttng"
CC=${CC:-gcc}

skip() {
  echo "skipped: $*"
  [ "$STRICT" = 1 ] && exit 3
  exit 0
}

command -v "$CC" >/dev/null 2>&1 || skip "no C compiler '$CC'"
if ! printf '#include <lttng/tracepoint.h>\nint main(void) { return 0; }\n' |
     "$CC" -x c - -o /dev/null -llttng-ust -ldl >/dev/null 2>&1; then
  skip "LTTng-UST headers/library not found (<lttng/tracepoint.h>, -llttng-ust): apt-get install -y liblttng-ust-dev lttng-tools"
fi
UST_VERSION=$(printf '#include <lttng/ust-version.h>\nLTTNG_UST_VERSION\n' | "$CC" -E -P -x c - 2>/dev/null | tail -1 | tr -d '" ')

[ -f "$BUILD_DIR/CMakeCache.txt" ] || skip "$BUILD_DIR is not a CMake build folder (configure with -DMANTRA_BUILD_BENCH=ON)"
cmake --build "$BUILD_DIR" --target session_write -j 2 >/dev/null ||
  { echo "lttng/build.sh: cannot build session_write in $BUILD_DIR" >&2; exit 1; }

# The project's own compile flags of session_write.c (compile_commands.json) and its link line.
CFLAGS=$(grep -o '"command": "[^"]*session_write\.c"' "$BUILD_DIR/compile_commands.json" 2>/dev/null | head -1 |
         sed 's/^"command": "//; s/"$//' | tr ' ' '\n' | grep -E '^(-I|-D|-O|-std=|-f|-m|-g)' | tr '\n' ' ' || true)
[ -n "$CFLAGS" ] || CFLAGS="-I$REPO/runtime/src -I$REPO/runtime/include -I$REPO/generated -O3 -DNDEBUG -std=c11"
LINK_TXT="$BUILD_DIR/bench/CMakeFiles/session_write.dir/link.txt"
LIBS=""
if [ -f "$LINK_TXT" ]; then
  for tok in $(sed 's/.* -o session_write //' "$LINK_TXT"); do
    case "$tok" in
      ../*) LIBS="$LIBS $BUILD_DIR/${tok#../}" ;;
      *) LIBS="$LIBS $tok" ;;
    esac
  done
else
  LIBS="$BUILD_DIR/libmantra.a $BUILD_DIR/libmantra_dotnet.a $BUILD_DIR/libmantra.a -lm"
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mantra-lttng-build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# The probe provider: LTTng's macros are GNU C; compiled on its own without -Wpedantic.
"$CC" -O2 -std=gnu11 -fPIC -I"$REPO/bench/lttng" -c "$REPO/bench/lttng/mantra_bench_tp.c" -o "$WORK/tp.o"
# shellcheck disable=SC2086
"$CC" $CFLAGS -std=gnu11 -Wall -DMANTRA_BENCH_LTTNG -I"$REPO/bench/lttng" -c "$REPO/bench/session_write.c" -o "$WORK/sw.o"
mkdir -p "$(dirname "$OUT")"
# shellcheck disable=SC2086
"$CC" -O3 "$WORK/sw.o" "$WORK/tp.o" -o "$OUT" $LIBS -llttng-ust -ldl -lpthread
echo "lttng/build.sh: LTTng-UST ${UST_VERSION:-?}, $CC $CFLAGS -DMANTRA_BENCH_LTTNG"
echo "$OUT"
