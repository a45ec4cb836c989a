# The two commands a newcomer needs (README.md):
#   make run    build if needed and run the main job on the emulated controller
#   make test   install what the tests need, build, run every test
# Both install missing dependencies through apt (as root) and say so.

BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 300
FUZZ_TARGETS = emu driver tcp-disc tcp-pdu
SOAK_SECONDS ?= 180
SOAK_ARGS ?=
MESON_TEST_ARGS ?= --print-errorlogs

.PHONY: all build fio-headers run test test-asan test-tsan deps deps-test clean format \
	check-format install bench-cost fuzz soak

all: build

deps:
	@sh scripts/deps.sh build

# The tests also need fio's source tree (same version as the fio binary)
# for the fio ioengine; it lands in build-deps/fio-<version>.
deps-test:
	@sh scripts/deps.sh test
	@sh scripts/fio-source.sh >/dev/null

$(BUILD)/build.ninja: | deps fio-headers
	meson setup $(BUILD) --buildtype=release -Dtests=false

# The fio ioengine (build/fio/libnvq_fio.so) compiles only against fio's
# own headers, of the installed fio's version (fio/meson.build): when fio is
# installed, fetch them into build-deps/ (scripts/fio-source.sh) and say so,
# or say why the engine is not built. Neither stops the rest of the build.
fio-headers:
	@v=$$(fio --version 2>/dev/null || true); \
	if [ -z "$$v" ]; then \
		echo "== fio ioengine not built: fio is not installed" \
			"(apt-get install fio, then make again)"; \
	elif [ ! -f "build-deps/$$v/config-host.h" ]; then \
		echo "== fio ioengine: fetching $$v's headers into" \
			"build-deps/$$v (scripts/fio-source.sh)"; \
		sh scripts/fio-source.sh >/dev/null || \
			echo "== fio ioengine not built: fetching fio's" \
				"source failed (see above)"; \
	fi

# A tree configured before the fio headers were there is reconfigured
# once they are, so that it builds the engine.
build: deps fio-headers $(BUILD)/build.ninja
	@v=$$(fio --version 2>/dev/null || true); \
	if [ -n "$$v" ] && [ -f "build-deps/$$v/config-host.h" ] && \
	   ! grep -q libnvq_fio $(BUILD)/build.ninja; then \
		echo "== fio ioengine: reconfiguring $(BUILD) to build it"; \
		meson setup --reconfigure $(BUILD) >/dev/null; \
	fi
	ninja -C $(BUILD)

# The main job: a short benchmark on the emulated controller.
run: build
	@echo "== nvq list"
	@$(BUILD)/tools/nvq list
	@echo "== nvq-perf: 4 KiB random reads, QD32, 3 s, emulated controller"
	$(BUILD)/tools/perf/nvq-perf -d emu: --rw randread --bs 4k --qd 32 \
		--time 3s

$(ASAN_BUILD)/build.ninja: | deps-test
	meson setup $(ASAN_BUILD) --buildtype=debug -Dwerror=true \
		-Db_sanitize=address,undefined -Db_lundef=false

$(TSAN_BUILD)/build.ninja: | deps-test
	meson setup $(TSAN_BUILD) --buildtype=debug -Dwerror=true \
		-Db_sanitize=thread -Db_lundef=false

# The libFuzzer targets (docs/fuzzing.md) in their own clang tree, which
# builds only them and the library.
$(FUZZ_BUILD)/build.ninja: | deps-test
	CC=clang meson setup $(FUZZ_BUILD) --buildtype=debugoptimized \
		-Dtests=false -Dfuzz=true -Db_lundef=false

# Every test under ASan+UBSan, the concurrency suite once more under TSan,
# each fuzz target for a bounded time, then one closing line
# "N passed, N failed".
test: deps-test $(ASAN_BUILD)/build.ninja $(TSAN_BUILD)/build.ninja \
		$(FUZZ_BUILD)/build.ninja
	@ninja -C $(ASAN_BUILD)
	@ninja -C $(TSAN_BUILD)
	@ninja -C $(FUZZ_BUILD) $(FUZZ_TARGETS:%=tests/fuzz/fuzz-%)
	@-UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		meson test -C $(ASAN_BUILD) $(MESON_TEST_ARGS)
	@-TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
		meson test -C $(TSAN_BUILD) --suite concurrency $(MESON_TEST_ARGS)
	@-meson test -C $(FUZZ_BUILD) --no-rebuild --suite fuzz \
		$(MESON_TEST_ARGS)
	@python3 scripts/test-summary.py $(ASAN_BUILD) $(TSAN_BUILD) \
		$(FUZZ_BUILD)

# Each fuzz target for FUZZ_SECONDS (default 300), one after the other,
# growing its corpus in $(FUZZ_BUILD)/tests/fuzz/work/; prints the
# executions per target and the path of any reproducer.
fuzz: deps-test $(FUZZ_BUILD)/build.ninja
	@ninja -C $(FUZZ_BUILD) $(FUZZ_TARGETS:%=tests/fuzz/fuzz-%)
	@st=0; for t in $(FUZZ_TARGETS); do \
		python3 tests/fuzz/run.py $(FUZZ_BUILD)/tests/fuzz/fuzz-$$t \
			tests/fuzz/corpus/$$t $(FUZZ_BUILD)/tests/fuzz/work/$$t \
			$(FUZZ_SECONDS) || st=1; \
	done; exit $$st

install: build
	meson install -C $(BUILD)

# Driver instructions per 4 KiB polled read (callgrind, release tree).
bench-cost: deps-test build
	@python3 bench/cost.py $(BUILD)

# Mixed verified I/O for SOAK_SECONDS (default 180) while faults are armed
# at random moments (docs/faults.md, "Soak"); SOAK_ARGS adds options
# (bench/soak --help), e.g. SOAK_ARGS="--mode thread --file /tmp/soak.img".
soak: build
	$(BUILD)/bench/soak --seconds $(SOAK_SECONDS) $(SOAK_ARGS)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

check-format:
	clang-format --dry-run -Werror $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD)
