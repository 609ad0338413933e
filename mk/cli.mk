# mk/cli.mk — the `recuo` command (cli/, crate recuo-cli): plan, delay, classify, serve,
# trial, simulate. Included by the top-level Makefile, which defines ROOT and CARGO.
# Everything built or written here lands in target/, never in the source tree.

CLI_BIN := $(ROOT)/target/debug/recuo
CLI_OUT := $(ROOT)/target/cli

.PHONY: build-cli build-cli-release install-cli uninstall-cli test-cli lint-cli demo-cli

build-cli: ## build the recuo command: target/debug/recuo
	@$(CARGO) build -q -p recuo-cli

test-cli: ## the command's tests: real recuo processes, real HTTP on 127.0.0.1
	$(CARGO) test -q -p recuo-cli

lint-cli: ## rustfmt and clippy for recuo-cli, warnings are errors
	$(CARGO) fmt -p recuo-cli -- --check
	$(CARGO) clippy -q -p recuo-cli --all-targets -- -D warnings

# The embedded server allows 60/min with a burst of 5, answers in 2 s and fails 10% with
# 503: a 90/min trial meets both 429s and 503s. The seed fixes which requests fail.
demo-cli: build-cli ## recuo trial against its own simulated API: 20 reads, 90/min, 3 in flight, an SVG timeline
	@mkdir -p $(CLI_OUT)
	@$(CLI_BIN) trial --count 20 --rate 90/min --concurrency 3 --seed 1 --plot $(CLI_OUT)/trial.svg

# ---- the release build, install-cli ---------------------------------------------------------
# What the C tarball (mk/c.mk's dist-c) and the recuo .deb (mk/deb.mk) ship: the release build,
# target/release/recuo. install-cli puts it in $(DESTDIR)$(BINDIR), BINDIR defaulting to
# $(PREFIX)/bin like the top-level Makefile's other directories. It needs what the C library
# needs, Rust and a C compiler (mk/c.mk's c_need says which is missing).
CLI_RELEASE_BIN := $(ROOT)/target/release/recuo
BINDIR ?= $(PREFIX)/bin

build-cli-release: ## build the recuo command for installing: target/release/recuo
	@$(c_need)
	@$(CARGO) build -q --release -p recuo-cli

# Where install-cli put the command, kept per DESTDIR (as install-c keeps its manifest), so that
# uninstall-cli removes it whatever PREFIX or BINDIR it is given.
CLI_MANIFEST = $(ROOT)/target/install/cli$(if $(DESTDIR),$(subst /,%,$(abspath $(DESTDIR))),-system).txt

install-cli: build-cli-release ## install the recuo command in BINDIR (default PREFIX/bin; DESTDIR honoured)
	@install -D -m 755 $(CLI_RELEASE_BIN) $(DESTDIR)$(BINDIR)/recuo
	@mkdir -p $(dir $(CLI_MANIFEST)) && echo '$(BINDIR)/recuo' > '$(CLI_MANIFEST)'
	@echo "install-cli: $(DESTDIR)$(BINDIR)/recuo"

uninstall-cli: ## remove what install-cli installed (the same DESTDIR)
	@if [ -f '$(CLI_MANIFEST)' ]; then \
		f=$$(cat '$(CLI_MANIFEST)'); rm -f "$(DESTDIR)$$f"; rm -f '$(CLI_MANIFEST)'; \
		if [ -n "$(DESTDIR)" ]; then rmdir "$(DESTDIR)$$(dirname "$$f")" 2>/dev/null || true; fi; \
	else rm -f $(DESTDIR)$(BINDIR)/recuo; fi
