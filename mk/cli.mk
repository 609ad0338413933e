# mk/cli.mk — the `recuo` command (cli/, crate recuo-cli): plan, delay, classify, serve,
# trial, simulate. Included by the top-level Makefile, which defines ROOT and CARGO.
# Everything built or written here lands in target/, never in the source tree.

CLI_BIN := $(ROOT)/target/debug/recuo
CLI_OUT := $(ROOT)/target/cli

.PHONY: build-cli test-cli lint-cli demo-cli

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
