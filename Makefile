# Herald — build, run, test and benchmark. `make help` lists the targets.
SHELL := /bin/bash
SWIFT ?= swift
# The toolchain's own clang (its swiftcall attribute builds the thread-sanitizer helper of make test-tsan).
CLANG ?= $(dir $(realpath $(shell command -v $(SWIFT))))clang
CONFIG ?= deploy/config/herald.yaml
APT_PACKAGES := pkg-config libmosquitto-dev libssl-dev libsqlite3-dev mosquitto mosquitto-clients
BROKER_PORT := 1883
# How long one test run may take before it is stopped as hung (about 3 minutes on 2 cores).
TEST_DEADLINE_SECONDS ?= 1200
# The scaffold check rebuilds what two new adapters change, in an overlay over the built tree (about a minute);
# where no overlay can be mounted it builds a copy of the tree from nothing (about 15 minutes on 2 cores).
SCAFFOLD_DEADLINE_SECONDS ?= 2700
# Suites whose servers must answer within limits of 40 ms to 1 s: they run after the rest, alone, because the
# parallel run keeps both cores busy (a statement that takes 5 ms alone then takes seconds).
QUIET_SUITES := PostgresTimeoutTests
# Where the test run's Swift processes write a backtrace if they crash.
CRASH_REPORTS := .build/crash-reports
# Runs one `swift test` of make test (Tests/Tools/run_tests.py): every Swift process it starts writes a backtrace
# into $(CRASH_REPORTS) if it crashes, and the tests start the herald of this build.
RUN_TESTS = SWIFT_BACKTRACE="enable=yes,interactive=no,output-to=$(abspath $(CRASH_REPORTS))" \
  HERALD_BINARY="$$($(SWIFT) build --show-bin-path)/herald" python3 Tests/Tools/run_tests.py

.PHONY: help deps test-deps build run test test-asan test-tsan fuzz fuzz-short fuzz-replay lint-docs docs release bench soak clean

help: ## List the targets.
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

deps: ## Install missing system packages with apt-get (libmosquitto-dev, libssl-dev, libsqlite3-dev, mosquitto, mosquitto-clients).
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "Installing system packages:" $$missing; \
	  sudo=$$([ "$$(id -u)" -eq 0 ] || echo sudo); \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@command -v $(SWIFT) >/dev/null || { echo "error: no Swift toolchain on PATH (Swift 6.x from swift.org is required)"; exit 1; }

test-deps: deps ## Install what the tests also need: Debian's postgresql server (the tests start their own cluster) and Python modules.
	@dpkg -s postgresql >/dev/null 2>&1 || { echo "Installing system packages: postgresql"; \
	  sudo=$$([ "$$(id -u)" -eq 0 ] || echo sudo); \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends postgresql; }
	@python3 -c 'import prometheus_client, jsonschema, yaml, cryptography' 2>/dev/null || python3 -m pip install -q prometheus_client jsonschema pyyaml cryptography

build: deps ## Build herald (debug).
	$(SWIFT) build --product herald

run: build ## Start a local mosquitto on 127.0.0.1:1883 if none listens, then run Herald with deploy/config/herald.yaml.
	@mkdir -p var/mosquitto
	@# mosquitto started as root drops to the 'mosquitto' user, which must be able to write its persistence.
	@if [ "$$(id -u)" -eq 0 ] && id mosquitto >/dev/null 2>&1; then chown mosquitto var/mosquitto; fi
	@if ! (exec 3<>/dev/tcp/127.0.0.1/$(BROKER_PORT)) 2>/dev/null; then \
	  echo "Starting mosquitto on 127.0.0.1:$(BROKER_PORT) with deploy/mosquitto/mosquitto.conf (log: var/mosquitto.log)"; \
	  mosquitto -c deploy/mosquitto/mosquitto.conf > var/mosquitto.log 2>&1 & \
	  for i in $$(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$(BROKER_PORT)) 2>/dev/null && break; sleep 0.1; done; \
	else echo "Using the MQTT broker already listening on 127.0.0.1:$(BROKER_PORT)"; fi
	.build/debug/herald check --config $(CONFIG)
	exec .build/debug/herald run --config $(CONFIG)

test: test-deps lint-docs ## Check the docs, then build and run the whole test suite (unit + integration against real mosquitto brokers and PostgreSQL clusters the tests start).
	$(SWIFT) build --build-tests
	@# Tests/Tools/run_tests.py shows the output as it comes, keeps it in .build/test-output.log, ends a failed
	@# run with its failures (a CI log read from its end names them), and stops a run that passes its deadline
	@# after printing the tests still running and the test binary's stacks, so a hang fails with its name.
	@# A crash report in $(CRASH_REPORTS) fails the run even where no test would notice the crash.
	@rm -rf $(CRASH_REPORTS) && mkdir -p $(CRASH_REPORTS)
	$(RUN_TESTS) --log .build/test-output.log --deadline $(TEST_DEADLINE_SECONDS) -- \
	  $(SWIFT) test --skip-build --skip 'ScaffoldTests|$(QUIET_SUITES)'
	@echo "Suites that time a server's answers (statement and connect timeouts of 40 ms to 1 s), with nothing else running"
	$(RUN_TESTS) --log .build/test-quiet-output.log --deadline $(TEST_DEADLINE_SECONDS) -- $(SWIFT) test --skip-build --filter '$(QUIET_SUITES)'
	@if [ -n "$$(ls -A $(CRASH_REPORTS))" ]; then echo "A Swift process crashed during the tests (reports in $(CRASH_REPORTS)):"; \
	  head -n 60 $(CRASH_REPORTS)/*; exit 1; fi
	$(MAKE) --no-print-directory fuzz-replay
	@echo "Scaffold check: herald new-adapter output must build and pass, in an overlay over the tree that leaves the tree as it is"
	HERALD_SCAFFOLD_TEST=1 $(RUN_TESTS) --log .build/scaffold-output.log --deadline $(SCAFFOLD_DEADLINE_SECONDS) -- \
	  $(SWIFT) test --skip-build --filter ScaffoldTests

FUZZ_TARGETS := json payload mqtt-topic websocket rest-page exec-line tail-filter config
FUZZ_SECONDS ?= 60
FUZZ_SHORT_SECONDS ?= 15
FUZZ_SEED ?=
# libFuzzer and the address sanitizer instrument every module in their own tree; -DHERALD_FUZZ turns herald-fuzz
# from a corpus replayer into a libFuzzer binary.
FUZZ_BUILD := --scratch-path .build-fuzz --product herald-fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -DHERALD_FUZZ

fuzz: test-deps ## Fuzz every decoder of untrusted bytes for FUZZ_SECONDS each (default 60) under libFuzzer and the address sanitizer; prints executions and coverage per target.
	$(SWIFT) build $(FUZZ_BUILD)
	python3 Tests/Tools/run_fuzz.py .build-fuzz/debug/herald-fuzz $(FUZZ_SECONDS) $(if $(FUZZ_SEED),--seed $(FUZZ_SEED))

fuzz-short: ## A short fuzzing pass, as CI runs it after make test: every target for FUZZ_SHORT_SECONDS (default 15) with a fixed seed.
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_SHORT_SECONDS) FUZZ_SEED=1

fuzz-replay: ## Replay the committed fuzz corpora (seeds and past findings) through every target's property checks.
	$(SWIFT) build --product herald-fuzz
	@for target in $(FUZZ_TARGETS); do "$$($(SWIFT) build --show-bin-path)/herald-fuzz" $$target Tests/Fuzz/Corpus/$$target || exit 1; done

# The sanitizer runs build a tree of their own (.build-asan, .build-tsan), so they never mix with the debug build.
# The suites that run: the core, the MQTT adapter and the integration tests, whose `herald` is the sanitized build.
SANITIZED_SUITES := HeraldCoreTests|MQTTAdapterTests|HTTPAdaptersTests|HeraldIntegrationTests

test-asan: test-deps ## The core, adapter and integration suites under the address sanitizer (not part of make test).
	$(SWIFT) build --build-tests --sanitize=address --scratch-path .build-asan
	@# detect_leaks=0: the Swift runtime keeps its type-metadata caches for the life of the process by design,
	@# which LeakSanitizer reports at exit; heap misuse (overflow, use after free) is what this run is for.
	@# The sanitizers bring their own allocator, so the glibc arenas and mmap threshold that MallocTuningTests checks do not exist,
	@# and their own handler of a crash, so no Swift backtracer writes the report that CrashReportTests checks.
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
	HERALD_BINARY="$$($(SWIFT) build --sanitize=address --scratch-path .build-asan --show-bin-path)/herald" \
	  $(SWIFT) test --skip-build --sanitize=address --scratch-path .build-asan --skip 'ScaffoldTests|MallocTuningTests|CrashReportTests' --filter '$(SANITIZED_SUITES)'

test-tsan: test-deps ## The same suites under the thread sanitizer (not part of make test).
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan
	@# The 100,000-message kill test is left out: under the thread sanitizer the gateway runs about ten times
	@# slower and the stream does not fit the test's time limits; the other delivery tests still kill it.
	@# The sanitizer cannot see a contended Mutex change hands inside the Swift runtime; the preloaded
	@# wrappers tell it (Tests/Tools/tsan_mutex_handover.c says how). No report is suppressed.
	$(CLANG) -O2 -Wall -shared -fPIC -o .build-tsan/libtsan_mutex_handover.so Tests/Tools/tsan_mutex_handover.c -ldl
	TSAN_OPTIONS=halt_on_error=1 LD_PRELOAD="$(CURDIR)/.build-tsan/libtsan_mutex_handover.so" \
	HERALD_BINARY="$$($(SWIFT) build --sanitize=thread --scratch-path .build-tsan --show-bin-path)/herald" \
	  $(SWIFT) test --skip-build --sanitize=thread --scratch-path .build-tsan --skip 'ScaffoldTests|killNineFiveTimes|MallocTuningTests|CrashReportTests' \
	  --filter '$(SANITIZED_SUITES)'

lint-docs: ## Check that every Markdown link inside the repository resolves and that nothing states history instead of the present.
	python3 Tests/Tools/check_docs.py

docs: build ## Regenerate docs/configuration.md from the code's option descriptions.
	.build/debug/herald adapters --markdown > docs/configuration.md

BENCH_JSON ?= docs/images/figures.jsonl

release: test-deps ## Release builds of herald and herald-bench, checked (every constant-size class allocation must match its class's metadata: a guard against stale inlined code, see Package.swift's last paragraph).
	$(SWIFT) build -c release --product herald
	$(SWIFT) build -c release --product herald-bench
	python3 Tests/Tools/check_allocation_sizes.py .build/release/herald .build/release/herald-bench

bench: release ## Release build, then throughput/latency figures against mosquitto_sub measured in the same run (direct chats and 5-member groups, on SQLite and on PostgreSQL), as text and as JSON lines drawn into docs/images/.
	@command -v wrk >/dev/null || { sudo=$$([ "$$(id -u)" -eq 0 ] || echo sudo); $$sudo apt-get install -y -qq --no-install-recommends wrk; }
	@# The Python bridge baseline (Tests/Bench/python_bridge.py) runs on paho-mqtt.
	@python3 -c 'import paho.mqtt' 2>/dev/null || python3 -m pip install -q paho-mqtt
	@mkdir -p $(dir $(BENCH_JSON)) && rm -f $(BENCH_JSON)
	.build/release/herald-bench --herald .build/release/herald --json $(BENCH_JSON)
	@echo; echo "5-member group chats (4 recipients per message), SQLite:"
	.build/release/herald-bench --herald .build/release/herald --herald-only --with-baseline --members 5 --json $(BENCH_JSON)
	.build/release/herald-bench --herald .build/release/herald --latency-only 200,2000 --members 5 --json $(BENCH_JSON)
	@echo; echo "PostgreSQL (a cluster with fsync on, started for the run):"
	.build/release/herald-bench --herald .build/release/herald --herald-only --with-baseline --store postgres --json $(BENCH_JSON)
	.build/release/herald-bench --herald .build/release/herald --latency-only 200,2000 --store postgres --json $(BENCH_JSON)
	@echo; echo "5-member group chats on PostgreSQL:"
	.build/release/herald-bench --herald .build/release/herald --herald-only --with-baseline --members 5 --store postgres --json $(BENCH_JSON)
	.build/release/herald-bench --herald .build/release/herald --latency-only 200,2000 --members 5 --store postgres --json $(BENCH_JSON)
	@echo; echo "Several instances on one PostgreSQL behind a shared subscription:"
	.build/release/herald-bench --herald .build/release/herald --scale-out --store postgres --json $(BENCH_JSON)
	@python3 -c 'import matplotlib' 2>/dev/null || python3 -m pip install -q matplotlib
	python3 Tests/Tools/plot_bench.py $(BENCH_JSON) $(dir $(BENCH_JSON))

SOAK_MINUTES ?= 30

soak: release ## SOAK_MINUTES (default 30) at half the live rate with a kill -9 every few minutes: RSS and open files over time, and the invariants afterwards (not part of make test).
	.build/release/herald-bench --herald .build/release/herald --soak $(SOAK_MINUTES)

clean: ## Remove build output and local state (var/).
	rm -rf .build var
