# recuo — every entry point. `make help` lists them.
# The language parts live in mk/*.mk; this file ties them together.

SHELL := /bin/bash
.DEFAULT_GOAL := help
ROOT := $(abspath .)
VENV := $(ROOT)/.venv
CARGO ?= cargo
export CARGO_TERM_COLOR ?= never
# The release's version (the workspace's, which every manifest takes) and where make dist
# writes what a release uploads.
RECUO_VERSION := $(shell sed -n 's/^version *= *"\([^"]*\)".*/\1/p' $(ROOT)/Cargo.toml | head -n 1)
DIST_DIR := $(ROOT)/target/dist
# $(call need,TOOL,HOW): stops the target with one line saying what is missing and how to get
# it, when TOOL is not on PATH. A build target checks only the tools of its own part.
need = command -v $(1) >/dev/null || { echo "make $(or $(MAKECMDGOALS),$@): $(1) is missing: $(2)" >&2; exit 1; }
NEED_CARGO = $(call need,$(firstword $(CARGO)),install Rust stable (https://rustup.rs))

include mk/c.mk mk/python.mk mk/php.mk mk/cli.mk mk/js.mk mk/fuzz.mk mk/deb.mk mk/dist.mk

.PHONY: help deps test demo demo-guides test-rust lint-rust fmt faces faces-check test-docs test-readme test-guide-b test-guide-b-cut bench bench-rust

# `make help`: what users run first (build, install, try), then the developers' targets.
HELP_USE := demo demo-guides test dist wheel sdist js install install-c install-cli install-php uninstall uninstall-c uninstall-cli uninstall-php help
HELP_LINE := awk -F':.*\#\# ' '{printf "  make %-16s %s\n", $$1, $$2}'

help: ## list the targets: "Use" first, then "Develop"
	@echo "Use:"
	@for t in $(HELP_USE); do grep -hE "^$$t:.*## " $(MAKEFILE_LIST) | head -n 1 | $(HELP_LINE); done
	@echo
	@echo "Develop:"
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | sort \
		| awk -F: -v use=" $(HELP_USE) " 'index(use, " " $$1 " ") == 0' | $(HELP_LINE)

deps: ## install what the build and the tests need (apt, .venv); quiet when present
	@scripts/install-deps.sh

# make test's suites, in two lanes that run side by side (one mostly builds and runs Rust and C,
# the other the hosts' suites and the release's artifacts: neither waits for the other, and
# cargo holds its build folder's lock only while it compiles), then guide B's job alone, since
# it measures a schedule. Each lane's lines carry its name; each suite's time is printed.
TEST_LANE_core  := lint-rust lint-cli lint-fuzz test-rust test-cli test-docs test-fuzz test-c test-install
TEST_LANE_hosts := test-python test-php test-js-runtimes test-readme test-dist
TEST_LAST       := test-guide-b

test: deps ## run every test: Rust, the recuo command, the docs' checks, the fuzz corpora, C, header drift, install, Python, PHP, JavaScript, the README's examples and the recipes, the release's artifacts installed, guide B's job
	@$(MAKE) --no-print-directory -j2 test-lane-core test-lane-hosts
	@$(MAKE) --no-print-directory test-suites SUITES="$(TEST_LAST)"
	@echo "make test: all suites passed"

.PHONY: test-lane-core test-lane-hosts test-suites
test-lane-core test-lane-hosts:
	@# -j1: each lane runs its suites one by one, with no jobserver of make's for cargo to join.
	@set -o pipefail; $(MAKE) --no-print-directory -j1 test-suites SUITES="$(TEST_LANE_$(@:test-lane-%=%))" 2>&1 \
		| sed -u 's/^/[$(@:test-lane-%=%)] /'

# Runs SUITES one after the other, printing each one's time; stops at the first that fails.
test-suites:
	@for suite in $(SUITES); do \
		start=$$(date +%s); \
		$(MAKE) --no-print-directory $$suite || { echo "make test: $$suite failed" >&2; exit 1; }; \
		echo "make test: $$suite passed in $$(( $$(date +%s) - start )) s"; \
	done

demo: deps ## build recuo and run a trial batch against its embedded rate-limited API
	@$(MAKE) --no-print-directory demo-cli

demo-guides: deps ## build and run the guide examples in C, Python and PHP
	@$(MAKE) --no-print-directory demo-c demo-python demo-php

test-rust: ## Rust unit, vector and property tests (core, recuo-redis against its own redis-server, ffi), the generated faces' drift
	$(CARGO) build -p recuo-cli
	$(CARGO) test --workspace --exclude recuo-python --exclude recuo-php --exclude recuo-bench --exclude recuo-cli
	$(CARGO) test -p recuo --features tracing --test tracing_spans

lint-rust: ## rustfmt and clippy (also the builds without Redis), warnings are errors
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --exclude recuo-python --exclude recuo-php --exclude recuo-bench --exclude recuo-cli --all-targets -- -D warnings
	$(CARGO) clippy -p recuo-redis -p recuo-ffi --no-default-features --all-targets -- -D warnings
	$(CARGO) clippy -p recuo --features tracing --all-targets -- -D warnings

fmt: ## format the Rust code
	$(CARGO) fmt --all

faces: ## regenerate each language's face of the values the core declares once (Python, TypeScript, PHP stub)
	@RECUO_UPDATE_FACES=1 $(CARGO) test -q -p recuo --test faces

faces-check: ## fail when a generated face differs from the core's declarations (test-rust runs it too)
	@$(CARGO) test -q -p recuo --test faces

# ---- make install, make uninstall --------------------------------------------------------
# Where things go (GNU's names): PREFIX (default /usr/local), LIBDIR, INCLUDEDIR, DOCDIR, and
# DESTDIR, prepended to every path for a staged install (packaging, tests). Each part has an
# install-* and an uninstall-* target; `make install` runs every install step in
# INSTALL_TARGETS, `make uninstall` every uninstall step — add yours to both lists.
PREFIX       ?= /usr/local
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DOCDIR       ?= $(PREFIX)/share/doc/recuo
DESTDIR      ?=

INSTALL_TARGETS   := install-c install-cli install-php
UNINSTALL_TARGETS := uninstall-c uninstall-cli uninstall-php

.PHONY: install uninstall test-install

install: $(INSTALL_TARGETS) ## install every part (PREFIX=/usr/local, LIBDIR, DESTDIR)

uninstall: $(UNINSTALL_TARGETS) ## remove exactly what make install installed (give the same DESTDIR)

test-install: ## make install into a temporary DESTDIR, the README's C example built with pkg-config, make uninstall
	@tests/c/test_install.sh $(ROOT)

test-guide-b: build-python build-php wasm deps-js build-cli ## guide B's job against nginx's limit_req: 4 worker processes per language (Python, PHP, Node) sharing one allowance
	@cd tests/guide_b && RECUO_BIN=$(ROOT)/target/debug/recuo RECUO_PHP_EXTENSION=$(PHP_EXTENSION) $(PY_ENV) $(PY) -m pytest -q -s -rxX -p no:cacheprovider test_guide_b_job.py

test-guide-b-cut: build-python build-php wasm deps-js build-cli ## only guide B's allowance cut (test-guide-b runs Python's): nginx cut to 6/s mid-run, adaptive against fixed; LANGUAGES="python node" (about 80 s each)
	@cd tests/guide_b && RECUO_GUIDE_B_CUT_LANGUAGES="$(or $(LANGUAGES),python)" RECUO_PHP_EXTENSION=$(PHP_EXTENSION) RECUO_BIN=$(ROOT)/target/debug/recuo $(PY_ENV) $(PY) -m pytest -q -s -p no:cacheprovider test_guide_b_job.py -k adaptive

test-docs: build-cli ## what users read: no internal citations, the guides named where first used, each language page's order, every relative link and anchor
	@python3 tests/docs/check_docs.py $(ROOT) $(ROOT)/target/debug/recuo

test-readme: build-c build-python build-php build-cli wasm ## run the README's examples: the install checks, and a request retried in Python, JavaScript, PHP and C against recuo serve
	$(VENV)/bin/python tests/readme/check_examples.py $(ROOT) $(ROOT)/target/debug/recuo

# make bench and its steps (bench-rust, bench-python, bench-php, ...): mk/bench.mk.
include mk/bench.mk
