# mk/bench.mk — `make bench`: recuo beside the libraries users would pick instead, as ratios
# measured in one run (issues 7, 18 and 30). Included by the Makefile, which defines ROOT, VENV and CARGO.
#
# Never part of `make test`: nothing here is a test, and no test depends on timing. The peers
# (tenacity, stamina, backoff) go into a venv of their own under target/bench/, beside recuo's
# release wheel; they are never a dependency of recuo. The JavaScript row runs the npm package
# over the release librecuo; the core's instruction counts need valgrind (callgrind). The Redis
# step starts its own servers (redis-server and redis-benchmark, from `make deps`) and builds
# redis-cell, a peer, from crates.io.
# Everything is written under target/bench/; the report is target/bench/REPORT.md. Each step
# runs alone (-j1): two benchmarks side by side on two cores would only measure each other.

BENCH_DIR := $(ROOT)/target/bench
BENCH_VENV := $(BENCH_DIR)/venv
BENCH_PY := $(BENCH_VENV)/bin/python
BENCH_PEERS := tenacity==9.2.1 stamina==26.1.0 backoff==2.2.1
BENCH_PIP = $(BENCH_PY) -m pip install -q --disable-pip-version-check
# Rounds: each figure is a median over them, with its min–max.
BENCH_ROUNDS ?= 30
CRITERION_ROUNDS ?= 5
SCHEDULE_SEEDS ?= 21
# Short criterion runs, repeated: on a shared machine the spread between rounds says more than
# one long run's confidence interval (the report uses only each round's median).
CRITERION_OPTIONS := --warm-up-time 0.5 --measurement-time 1 --nresamples 2000 --noplot
PHP_RELEASE := $(ROOT)/target/release/librecuo_php.so
INSTRUCTIONS := $(ROOT)/target/release/instructions
bench_step = @echo "bench: $(1)" >&2

.PHONY: bench bench-rust bench-instructions lint-bench bench-schedules bench-python bench-php bench-js bench-redis bench-report bench-profile

bench: deps ## measure recuo beside its peers, ratios in one run, into target/bench/REPORT.md (~8 min; never part of make test)
	@mkdir -p $(BENCH_DIR)
	@$(MAKE) -j1 --no-print-directory lint-bench
	@$(MAKE) -j1 --no-print-directory bench-schedules
	@$(MAKE) -j1 --no-print-directory bench-rust
	@$(MAKE) -j1 --no-print-directory bench-instructions
	@$(MAKE) -j1 --no-print-directory bench-php
	@$(MAKE) -j1 --no-print-directory bench-js
	@$(MAKE) -j1 --no-print-directory bench-python
	@$(MAKE) -j1 --no-print-directory bench-redis
	@$(MAKE) -j1 --no-print-directory bench-report

lint-bench: ## rustfmt and clippy for recuo-bench, warnings are errors; the simulator's tests
	$(call bench_step,lint and test recuo-bench)
	@$(CARGO) fmt -p recuo-bench -- --check
	@$(CARGO) clippy -q -p recuo-bench --all-targets -- -D warnings
	@$(CARGO) test -q --release -p recuo-bench --lib >&2

bench-rust: ## criterion: Retry-After forms beside httpdate, decide beside a hand-rolled decision, try_acquire beside governor
	@mkdir -p $(BENCH_DIR)
	$(call bench_step,build the criterion benches (release))
	@$(CARGO) bench -q -p recuo-bench --no-run
	@python3 $(ROOT)/bench/report/criterion_rounds.py $(ROOT)/target $(BENCH_DIR)/criterion.json $(CRITERION_ROUNDS) $(CRITERION_OPTIONS)

bench-instructions: ## callgrind: instructions and allocations per call of decide and Retry-After seconds, beside their baselines
	@mkdir -p $(BENCH_DIR)
	$(call bench_step,build the instructions binary (release))
	@$(CARGO) build -q --release -p recuo-bench --bin instructions
	@python3 $(ROOT)/bench/report/core_instructions.py $(INSTRUCTIONS) $(BENCH_DIR)/instructions.json

bench-schedules: ## guide B's 600 requests against a simulated 120/min server, in virtual time
	@mkdir -p $(BENCH_DIR)
	$(call bench_step,build the schedules simulator (release))
	@$(CARGO) build -q --release -p recuo-bench --bin schedules
	@$(ROOT)/target/release/schedules $(SCHEDULE_SEEDS) > $(BENCH_DIR)/schedules.json

# The venv and its pinned peers, made again when the pins change.
$(BENCH_VENV)/.peers: mk/bench.mk
	$(call bench_step,a venv for the peers: $(BENCH_PEERS))
	@python3 -m venv $(BENCH_VENV)
	@$(BENCH_PIP) $(BENCH_PEERS)
	@touch $@

bench-python: $(BENCH_VENV)/.peers ## recuo.com_retry and recuo.retry beside guide A's pure Python, tenacity, stamina, backoff
	$(call bench_step,build recuo's release wheel into the bench venv)
	@rm -rf $(BENCH_DIR)/wheels
	@cd python && $(call py_quiet,env -u VIRTUAL_ENV $(MATURIN) build --release --interpreter $(BENCH_PY) -o $(BENCH_DIR)/wheels)
	@$(BENCH_PIP) --force-reinstall --no-deps $(BENCH_DIR)/wheels/recuo-*.whl
	@cd $(BENCH_DIR) && $(BENCH_PY) $(ROOT)/bench/python/bench_python.py $(BENCH_DIR)/python.json $(BENCH_ROUNDS)

bench-php: ## Recuo\comRetry (release build) beside guide A's pure-PHP comRetry
	@mkdir -p $(BENCH_DIR)
	$(call bench_step,build the PHP extension (release))
	@$(CARGO) build -q --release -p recuo-php
	@$(PHP) -d extension=$(PHP_RELEASE) $(ROOT)/bench/php/bench.php $(BENCH_DIR)/php.json $(BENCH_ROUNDS)

bench-js: ## recuo's comRetry (JavaScript, recuo.wasm) beside guide A's pure-JS comRetry and npm's retry libraries
	@mkdir -p $(BENCH_DIR)
	$(call bench_step,build recuo.wasm for the JavaScript package)
	@test -d $(ROOT)/js/node_modules || (cd $(ROOT)/js && npm ci --silent)
	@$(MAKE) --no-print-directory wasm
	@node $(ROOT)/bench/js/bench.js $(BENCH_DIR)/js.json $(BENCH_ROUNDS)

# Not part of `make bench`: a profile for whoever works on the bindings' cost, after it.
bench-profile: ## callgrind: instructions per call of recuo's loops beside the guides' and the floor, and where they go (target/bench/PROFILE.md)
	@$(BENCH_PY) -c 'import recuo' 2>/dev/null && test -f $(PHP_RELEASE) && test -f $(ROOT)/js/recuo.wasm || \
		{ echo "bench-profile: run make bench first (it builds what this profiles)" >&2; exit 1; }
	@$(CARGO) build -q --release -p recuo-bench --bin instructions
	@python3 $(ROOT)/bench/report/callgrind.py $(BENCH_DIR) $(BENCH_PY) $(PHP_RELEASE) $(INSTRUCTIONS)

# The Redis step (issue 30): redis-cell from crates.io (pinned by bench/redis/cell/Cargo.lock,
# built as a cdylib so that redis-server loads it without rustc's libraries), recuo's load
# binary, then bench/redis/redis_bench.py: one node it starts itself and a 3+3 cluster from
# scripts/redis-cluster, every server on 127.0.0.1 and stopped at the end (~1.5 min).
REDIS_CELL := $(BENCH_DIR)/redis-cell/release/libredis_cell.so
REDIS_ROUNDS ?= 5

bench-redis: ## the Redis regulator (EVALSHA) beside redis-cell's CL.THROTTLE and PING, 1/8/64 clients, one node and a cluster; one round trip per acquire checked
	@mkdir -p $(BENCH_DIR)
	$(call bench_step,build redis-cell 0.2.2 (crates.io) and recuo's Redis load binary (release))
	@$(CARGO) rustc -q --locked --release --manifest-path $(ROOT)/bench/redis/cell/Cargo.toml \
		--target-dir $(BENCH_DIR)/redis-cell -p redis-cell --crate-type cdylib
	@$(CARGO) build -q --release -p recuo-bench --bin redis_load
	@python3 $(ROOT)/bench/redis/redis_bench.py $(BENCH_DIR)/redis.json --rounds $(REDIS_ROUNDS) \
		--cell $(REDIS_CELL) --load $(ROOT)/target/release/redis_load \
		--script $(ROOT)/redis-store/src/gcra.lua --cluster-script $(ROOT)/scripts/redis-cluster

bench-report: ## target/bench/REPORT.md from the last runs' figures, printed
	@python3 $(ROOT)/bench/report/build_report.py $(BENCH_DIR)
	@echo "bench: written to $(BENCH_DIR)/REPORT.md" >&2
