# mantra - thin wrapper around CMake/CTest. `make demo` and `make test` are the two commands.
#
#   make deps    install what is missing (apt): cmake, pkg-config, check, libyaml-dev, Python
#                jinja2 + yaml + pytest; with FUZZ=1 also clang + its libFuzzer runtime
#   make build   configure build/ (RelWithDebInfo) and build
#   make wasm    deps (WASM=1: clang-14, wasi-libc, lld-14, the wasm32 builtins, node, chromium,
#                and playwright-core and speedscope from npm into build-node/), then the
#                WASI build in build-wasm/ (cmake/wasm32-wasi.cmake): build-wasm/tools/mantra.wasm
#   make demo    deps, build, run the generator into build/demo-gen, run the demo program, then
#                `mantra emit` (4 threads x 250000 events through a real session) into
#                build/demo-emit.nettrace and `mantra stats` of that trace; then PGO end to end:
#                `mantra run` of examples/programs/sort.masm with probes and a collection,
#                `mantra pgo` to the CLR text profile, --check, and --top 5
#   make interop check for the .NET SDK (`dotnet --version`) that the TraceEvent interop tests
#                (tests/interop) build with; without it they are skipped, or with
#                MANTRA_REQUIRE_INTEROP=1 this fails
#   make test    deps, interop, then: test-gen (generated/ fresh), wasm (build-wasm/, whose
#                mantra.wasm tests/wasm runs under Node), test-build (build/ + ctest),
#                test-asan (ASan+UBSan build in build-asan/ + ctest), test-tsan (TSan build in
#                build-tsan/, ctest -L 'threads|session'), test-threadless (MANTRA_THREADLESS build
#                with ASan/LSan in build-threadless/, ctest -L 'session|threads|unit|startup'), test-downstream
#                (install build/ into build/prefix, check mantra.pc, build + run
#                examples/downstream), then `make fuzz` for TEST_FUZZ_SECONDS (20) seconds per target
#   make bench   build and run the benchmarks
#   make fuzz    clang libFuzzer build in build-fuzz/, each target for FUZZ_SECONDS seconds
#   make clean   remove every build folder
#
# Variables: BUILD_DIR ASAN_DIR TSAN_DIR THREADLESS_DIR FUZZ_DIR JOBS CTEST_JOBS CMAKE_ARGS
#            FUZZ_SECONDS PYTHON TSAN_OPTIONS

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build
MAKEFLAGS += --no-print-directory

BUILD_DIR    ?= build
ASAN_DIR     ?= build-asan
TSAN_DIR     ?= build-tsan
THREADLESS_DIR ?= build-threadless
FUZZ_DIR     ?= build-fuzz
WASM_DIR     ?= build-wasm
NODE_DIR     ?= build-node
PLAYWRIGHT_VERSION ?= 1.65.1
SPEEDSCOPE_VERSION ?= 1.25.0
PREFIX_DIR   ?= $(BUILD_DIR)/prefix
DOWNSTREAM_DIR ?= $(BUILD_DIR)/downstream
JOBS         ?= 2
CTEST_JOBS   ?= $(JOBS)
CMAKE_ARGS   ?=
FUZZ_SECONDS ?= 30
TEST_FUZZ_SECONDS ?= 20
FUZZ         ?=
# TSan: stop at the first report (the test fails), with both stacks of a lock-order inversion.
TSAN_OPTIONS ?= halt_on_error=1:second_deadlock_stack=1

# A Python that has jinja2, yaml and pytest (evaluated when used, i.e. after `deps` has run).
PYTHON ?= $(shell for p in python3 /usr/bin/python3; do \
            if command -v $$p >/dev/null 2>&1 && $$p -c 'import jinja2, yaml, pytest' >/dev/null 2>&1; then \
              $$p -c 'import sys; print(sys.executable)'; exit 0; fi; done; echo python3)
MANIFESTS = $(sort $(wildcard manifest/*.yaml))
CTEST = ctest --output-on-failure --no-tests=error -j $(CTEST_JOBS)

say = printf '\n==> %s\n' "$(1)"

.PHONY: deps interop build demo wasm test test-gen test-build test-asan test-tsan test-threadless test-downstream \
        bench fuzz clean help

help:
	@sed -n '1,/^$$/p' Makefile | sed 's/^# \{0,1\}//'

# ---------------------------------------------------------------------------------------------
deps:
	@missing=(); \
	command -v cmake >/dev/null 2>&1 || missing+=(cmake); \
	command -v cc >/dev/null 2>&1 || missing+=(gcc); \
	command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config); \
	{ dpkg -s check >/dev/null 2>&1 && pkg-config --exists check 2>/dev/null; } || missing+=(check); \
	pkg-config --exists yaml-0.1 2>/dev/null || missing+=(libyaml-dev); \
	pyok=; for p in python3 /usr/bin/python3; do \
	  if command -v $$p >/dev/null 2>&1 && $$p -c 'import jinja2, yaml, pytest' >/dev/null 2>&1; then pyok=1; break; fi; \
	done; \
	[ -n "$$pyok" ] || missing+=(python3 python3-jinja2 python3-yaml python3-pytest); \
	if [ -n "$(FUZZ)" ]; then \
	  command -v clang >/dev/null 2>&1 || command -v clang-14 >/dev/null 2>&1 || missing+=(clang); \
	  ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 || missing+=(libclang-rt-14-dev); \
	fi; \
	if [ -n "$(WASM)" ]; then \
	  command -v clang-14 >/dev/null 2>&1 || missing+=(clang-14); \
	  [ -e /usr/lib/wasm32-wasi/libc.a ] || missing+=(wasi-libc); \
	  command -v wasm-ld-14 >/dev/null 2>&1 || [ -x /usr/lib/llvm-14/bin/wasm-ld ] || missing+=(lld-14); \
	  ls /usr/lib/llvm-14/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a >/dev/null 2>&1 \
	    || missing+=(libclang-rt-14-dev-wasm32); \
	  command -v node >/dev/null 2>&1 || missing+=(nodejs); \
	  command -v npm >/dev/null 2>&1 || missing+=(npm); \
	  command -v chromium >/dev/null 2>&1 || missing+=(chromium); \
	fi; \
	if [ $${#missing[@]} -eq 0 ]; then \
	  echo "deps: all present"; \
	else \
	  echo "deps: installing $${missing[*]}"; \
	  sudo=; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  $$sudo apt-get update -qq </dev/null; \
	  $$sudo apt-get install -y -qq --no-install-recommends "$${missing[@]}" </dev/null; \
	fi
	@if [ -n "$(WASM)" ] && [ ! -e $(NODE_DIR)/node_modules/playwright-core/package.json ]; then \
	  echo "deps: npm install playwright-core@$(PLAYWRIGHT_VERSION) into $(NODE_DIR)/ (drives chromium in tests/browser)"; \
	  mkdir -p $(NODE_DIR); \
	  npm install --prefix $(NODE_DIR) --no-audit --no-fund --loglevel=error playwright-core@$(PLAYWRIGHT_VERSION) </dev/null; \
	fi
	@if [ -n "$(WASM)" ] && [ ! -e $(NODE_DIR)/node_modules/speedscope/package.json ]; then \
	  echo "deps: npm install speedscope@$(SPEEDSCOPE_VERSION) into $(NODE_DIR)/ (its app opens mantra export's files in tests/browser)"; \
	  mkdir -p $(NODE_DIR); \
	  npm install --prefix $(NODE_DIR) --no-audit --no-fund --loglevel=error speedscope@$(SPEEDSCOPE_VERSION) </dev/null; \
	fi

# configure DIR ARGS: runs cmake quietly (log in DIR/configure.log), shows mantra's summary
# lines and any CMake warning; the whole log on failure.
configure = mkdir -p $(1) && if cmake -S . -B $(1) -DMANTRA_PYTHON=$(PYTHON) $(2) $(CMAKE_ARGS) >$(1)/configure.log 2>&1; \
  then grep -E '^-- mantra' $(1)/configure.log || true; sed -n '/^CMake Warning/,/^$$/p' $(1)/configure.log; \
  else cat $(1)/configure.log; exit 1; fi

# ---------------------------------------------------------------------------------------------
build:
	@$(call say,configure + build $(BUILD_DIR)/ (RelWithDebInfo))
	@$(call configure,$(BUILD_DIR),-DCMAKE_BUILD_TYPE=RelWithDebInfo)
	cmake --build $(BUILD_DIR) -j $(JOBS)

demo: deps
	@$(MAKE) build
	@$(call say,generator: manifest/dotnet.yaml -> $(BUILD_DIR)/demo-gen)
	$(PYTHON) tools/mantra-gen -o $(BUILD_DIR)/demo-gen manifest/dotnet.yaml
	@ls -l $(BUILD_DIR)/demo-gen | awk 'NR > 1 { printf "  %8d  %s\n", $$5, $$9 }'
	@$(call say,$(BUILD_DIR)/examples/demo/mantra-demo)
	$(BUILD_DIR)/examples/demo/mantra-demo
	@$(call say,mantra emit: 4 threads x 250000 Mantra-Demo events -> $(BUILD_DIR)/demo-emit.nettrace)
	$(BUILD_DIR)/tools/mantra emit --threads 4 --events 250000 --trace $(BUILD_DIR)/demo-emit.nettrace
	@$(call say,mantra stats $(BUILD_DIR)/demo-emit.nettrace)
	$(BUILD_DIR)/tools/mantra stats $(BUILD_DIR)/demo-emit.nettrace
	@$(call say,PGO: examples/programs/sort.masm with block-count probes (MANTRA_InterpPgo=1) and a collection -> $(BUILD_DIR)/demo-pgo.nettrace)
	MANTRA_InterpPgo=1 $(BUILD_DIR)/tools/mantra run examples/programs/sort.masm \
	  --pgo-collect $(BUILD_DIR)/demo-pgo.nettrace:10 >/dev/null
	$(BUILD_DIR)/tools/mantra stats $(BUILD_DIR)/demo-pgo.nettrace | sed -n '/Microsoft-Windows-DotNETRuntime/p'
	@$(call say,mantra pgo: the trace -> $(BUILD_DIR)/demo-pgo.txt (the CLR's DOTNET_WritePGOData format))
	$(BUILD_DIR)/tools/mantra pgo $(BUILD_DIR)/demo-pgo.nettrace -o $(BUILD_DIR)/demo-pgo.txt
	$(BUILD_DIR)/tools/mantra pgo --check $(BUILD_DIR)/demo-pgo.txt
	@$(call say,the hottest methods and loops (IL offsets of method entries and loop heads))
	$(BUILD_DIR)/tools/mantra pgo --top 5 $(BUILD_DIR)/demo-pgo.nettrace 2>/dev/null

# The WASI build: libmantra (threadless), the interpreter and the CLI as the WASI command
# $(WASM_DIR)/tools/mantra.wasm (cmake/wasm32-wasi.cmake; run it with tools/wasm/mantra-wasi.mjs).
wasm:
	@$(MAKE) deps WASM=1
	@$(call say,WASI build in $(WASM_DIR)/ (clang-14 --target=wasm32-wasi, wasi-libc, lld))
	@$(call configure,$(WASM_DIR),-DCMAKE_TOOLCHAIN_FILE=$(abspath cmake/wasm32-wasi.cmake) -DCMAKE_BUILD_TYPE=Release)
	cmake --build $(WASM_DIR) -j $(JOBS)
	@ls -l $(WASM_DIR)/tools/mantra.wasm | awk '{ printf "  %s  %d bytes\n", $$9, $$5 }'

# The TraceEvent interop harness (tests/interop) is built by CMake with dotnet (NuGet restore of
# TraceEvent and dotnet-trace on first use); this only reports whether dotnet is there.
interop:
	@$(call say,.NET SDK for the TraceEvent interop tests (tests/interop))
	@if v=$$(dotnet --version 2>/dev/null); then \
	  echo "  dotnet --version: $$v"; \
	elif [ "$${MANTRA_REQUIRE_INTEROP:-}" = 1 ]; then \
	  echo "  dotnet not found, and MANTRA_REQUIRE_INTEROP=1: install the .NET 10 SDK" >&2; exit 1; \
	else \
	  echo "  dotnet not found: the interop tests will be skipped (MANTRA_REQUIRE_INTEROP=1 makes this an error)"; \
	fi

# ---------------------------------------------------------------------------------------------
test: deps interop
	@$(MAKE) test-gen
	@$(MAKE) wasm
	@$(MAKE) test-build
	@$(MAKE) test-asan
	@$(MAKE) test-tsan
	@$(MAKE) test-threadless
	@$(MAKE) test-downstream
	@$(MAKE) fuzz FUZZ_SECONDS=$(TEST_FUZZ_SECONDS)
	@$(call say,make test: all passed)

test-gen:
	@$(call say,generated/ is up to date with manifest/*.yaml and manifest/clr/readers.args)
	@[ -n "$(MANIFESTS)" ] || { echo "no manifest/*.yaml"; exit 1; }
	$(PYTHON) tools/mantra-gen --check -o generated $(MANIFESTS)
	$(PYTHON) tools/mantra-gen --check -o generated @manifest/clr/readers.args
	@$(call say,no breaking change against manifest/baseline/)
	@for m in $(MANIFESTS); do \
	  b=manifest/baseline/$$(basename $$m); \
	  if [ -f $$b ]; then echo "$(PYTHON) tools/mantra-gen --compat $$b $$m"; $(PYTHON) tools/mantra-gen --compat $$b $$m; \
	  else echo "no baseline for $$m"; fi; \
	done

test-build: build
	@$(call say,ctest in $(BUILD_DIR)/)
	cd $(BUILD_DIR) && $(CTEST)

test-asan:
	@$(call say,ASan + UBSan build in $(ASAN_DIR)/)
	@$(call configure,$(ASAN_DIR),-DCMAKE_BUILD_TYPE=Debug -DMANTRA_SANITIZE=ON -DMANTRA_BUILD_BENCH=OFF -DMANTRA_BUILD_SHARED=OFF)
	cmake --build $(ASAN_DIR) -j $(JOBS)
	@$(call say,ctest in $(ASAN_DIR)/)
	cd $(ASAN_DIR) && $(CTEST)

# The threaded tests (label threads) and the session tests under ThreadSanitizer.
test-tsan:
	@$(call say,TSan build in $(TSAN_DIR)/)
	@$(call configure,$(TSAN_DIR),-DCMAKE_BUILD_TYPE=Debug -DMANTRA_SANITIZE_THREAD=ON -DMANTRA_BUILD_BENCH=OFF -DMANTRA_BUILD_SHARED=OFF)
	cmake --build $(TSAN_DIR) -j $(JOBS)
	@$(call say,ctest -L 'threads|session' in $(TSAN_DIR)/)
	cd $(TSAN_DIR) && TSAN_OPTIONS='$(TSAN_OPTIONS)' $(CTEST) -L 'threads|session'

# The threadless build (no drain thread; the host pumps the job queue): the tests that touch sessions.
test-threadless:
	@$(call say,threadless build (MANTRA_THREADLESS) with ASan + UBSan + LeakSanitizer in $(THREADLESS_DIR)/)
	@$(call configure,$(THREADLESS_DIR),-DCMAKE_BUILD_TYPE=Debug -DMANTRA_THREADLESS=ON -DMANTRA_SANITIZE=ON -DMANTRA_BUILD_BENCH=OFF -DMANTRA_BUILD_SHARED=OFF)
	cmake --build $(THREADLESS_DIR) -j $(JOBS)
	@$(call say,ctest -L 'session|threads|unit|startup' in $(THREADLESS_DIR)/)
	cd $(THREADLESS_DIR) && $(CTEST) -L 'session|threads|unit|startup'

test-downstream:
	@[ -f $(BUILD_DIR)/CMakeCache.txt ] || $(MAKE) build
	@$(call say,install into $(PREFIX_DIR)/)
	rm -rf $(PREFIX_DIR) $(DOWNSTREAM_DIR)
	cmake --install $(BUILD_DIR) --prefix $(abspath $(PREFIX_DIR)) >$(BUILD_DIR)/install.log \
	  || { cat $(BUILD_DIR)/install.log; exit 1; }
	@$(call say,pkg-config mantra: compile + link a program)
	@pc=$$(dirname $$(find $(abspath $(PREFIX_DIR)) -name mantra.pc | head -1)); \
	flags=$$(PKG_CONFIG_PATH=$$pc pkg-config --cflags --libs --static mantra); \
	echo "  pkg-config --cflags --libs --static mantra: $$flags"; \
	printf '#include <mantra/event.h>\nint main(void) { mantra_set_listener(NULL, NULL); return 0; }\n' \
	  | $(CC) -std=c11 -Wall -Werror -x c - -o $(BUILD_DIR)/pkgconfig-check $$flags; \
	LD_LIBRARY_PATH=$$(PKG_CONFIG_PATH=$$pc pkg-config --variable=libdir mantra) $(BUILD_DIR)/pkgconfig-check; \
	echo "  ok"
	@$(call say,examples/downstream against $(PREFIX_DIR)/)
	mkdir -p $(DOWNSTREAM_DIR)
	cmake -S examples/downstream -B $(DOWNSTREAM_DIR) -DCMAKE_PREFIX_PATH=$(abspath $(PREFIX_DIR)) \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo >$(DOWNSTREAM_DIR)/configure.log 2>&1 \
	  || { cat $(DOWNSTREAM_DIR)/configure.log; exit 1; }
	cmake --build $(DOWNSTREAM_DIR) -j $(JOBS)
	$(DOWNSTREAM_DIR)/downstream_app

# ---------------------------------------------------------------------------------------------
bench: deps
	@$(MAKE) build CMAKE_ARGS="$(CMAKE_ARGS) -DMANTRA_BUILD_BENCH=ON"
	@$(call say,benchmarks)
	PYTHON="$(PYTHON)" bench/run_all.sh --build-dir $(BUILD_DIR)

fuzz:
	@$(MAKE) deps FUZZ=1
	@$(call say,libFuzzer build in $(FUZZ_DIR)/)
	@cc=$$(command -v clang || command -v clang-14); \
	$(call configure,$(FUZZ_DIR),-DCMAKE_C_COMPILER=$$cc -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMANTRA_FUZZ=ON -DMANTRA_BUILD_TESTS=OFF -DMANTRA_BUILD_BENCH=OFF -DMANTRA_BUILD_EXAMPLES=OFF -DMANTRA_BUILD_SHARED=OFF)
	cmake --build $(FUZZ_DIR) -j $(JOBS)
	@list=$(FUZZ_DIR)/fuzz-targets.txt; \
	[ -s $$list ] || { echo "no fuzz targets (tests/fuzz/CMakeLists.txt, mantra_add_fuzz_target)"; exit 0; }; \
	while read -r t seeds; do \
	  name=$$(basename $$t); corpus=$(FUZZ_DIR)/corpus/$$name; mkdir -p $$corpus; \
	  $(call say,$$name for $(FUZZ_SECONDS)s (new inputs: $$corpus; crashes: $(FUZZ_DIR)/)); \
	  log=$(FUZZ_DIR)/$$name.log; \
	  if $$t -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	       -artifact_prefix=$(FUZZ_DIR)/ $$corpus $$seeds </dev/null >$$log 2>&1; then \
	    grep -E '^(Done|stat::number_of_executed_units|stat::new_units_added)' $$log || true; \
	  else tail -n 40 $$log; echo "fuzz: $$name found a problem (log $$log, artifacts in $(FUZZ_DIR)/)"; exit 1; fi; \
	done < $$list

# ---------------------------------------------------------------------------------------------
clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(TSAN_DIR) $(THREADLESS_DIR) $(FUZZ_DIR) $(WASM_DIR) $(NODE_DIR)
