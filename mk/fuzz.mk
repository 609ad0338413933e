# mk/fuzz.mk — the fuzz targets of fuzz/ (its own cargo workspace; issue 11). Included by the
# top-level Makefile, which defines ROOT and CARGO.
#
# Two ways to run the same checks (fuzz/src/lib.rs):
# * `make fuzz`: cargo-fuzz (libFuzzer, AddressSanitizer, debug assertions), coverage-guided,
#   FUZZ_SECONDS (default 600) or FUZZ_RUNS executions (default 10 M) per target, whichever
#   comes first, one target at a time, one process. On stable Rust, through
#   RUSTC_BOOTSTRAP=1. Installs cargo-fuzz with `cargo install --locked` when it is missing.
#   New inputs it finds land in fuzz/work/<target>/ (not committed; `make fuzz-merge` folds
#   the ones that add coverage into the committed fuzz/corpus/<target>/, kept small); a crash
#   lands in fuzz/artifacts/<target>/ and stops the run: add it to the corpus and write a
#   regression test in the ordinary suite.
# * `make test-fuzz` (part of `make test`): no libFuzzer, no nightly — an ordinary test binary
#   replays every committed corpus file, then a short burst of mutations of them
#   (FUZZ_SMOKE_MS per target), so a crash in the corpus fails CI in seconds.

FUZZ_DIR := $(ROOT)/fuzz
FUZZ_TARGETS := retry_after rate_limit redaction who_answered shared_file
FUZZ_SECONDS ?= 600
FUZZ_SMOKE_MS ?= 300
FUZZ_RUNS ?= 10000000
FUZZ_FLAGS ?= -runs=$(FUZZ_RUNS) -rss_limit_mb=1024 -malloc_limit_mb=64 -timeout=5
FUZZ_CARGO := RUSTC_BOOTSTRAP=1 $(CARGO) fuzz

.PHONY: fuzz fuzz-build fuzz-merge test-fuzz lint-fuzz $(addprefix fuzz-,$(FUZZ_TARGETS))

fuzz: fuzz-build ## run every fuzz target for FUZZ_SECONDS each (cargo-fuzz, libFuzzer, ASan)
	@for t in $(FUZZ_TARGETS); do $(MAKE) --no-print-directory fuzz-$$t || exit 1; done

fuzz-build: ## build the fuzz targets with cargo-fuzz (installs cargo-fuzz when missing)
	@command -v cargo-fuzz >/dev/null || $(CARGO) install cargo-fuzz --locked
	cd $(FUZZ_DIR) && $(FUZZ_CARGO) build --features libfuzzer -a

$(addprefix fuzz-,$(FUZZ_TARGETS)): fuzz-%: ## (one target) fuzz-<target>: run it for FUZZ_SECONDS
	@mkdir -p $(FUZZ_DIR)/work/$*
	cd $(FUZZ_DIR) && $(FUZZ_CARGO) run --features libfuzzer -a $* work/$* corpus/$* -- \
	  -max_total_time=$(FUZZ_SECONDS) $(FUZZ_FLAGS) -print_final_stats=1

fuzz-merge: fuzz-build ## fold what `make fuzz` found that adds coverage into fuzz/corpus/ (inputs up to 4 KiB)
	@for t in $(FUZZ_TARGETS); do mkdir -p $(FUZZ_DIR)/work/$$t; \
	  (cd $(FUZZ_DIR) && $(FUZZ_CARGO) run --features libfuzzer -a $$t corpus/$$t work/$$t -- \
	    -merge=1 -max_len=4096 $(FUZZ_FLAGS)) || exit 1; done

test-fuzz: ## replay the committed fuzz corpora (and mutations of them) as ordinary tests
	cd $(FUZZ_DIR) && RECUO_FUZZ_SMOKE_MS=$(FUZZ_SMOKE_MS) $(CARGO) test -q

lint-fuzz: ## rustfmt and clippy for fuzz/, warnings are errors
	cd $(FUZZ_DIR) && $(CARGO) fmt -- --check
	cd $(FUZZ_DIR) && $(CARGO) clippy -q --all-targets -- -D warnings
