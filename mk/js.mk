# mk/js.mk — the npm package `recuo` (js/): librecuo through koffi, the guides' JavaScript
# functions and the idiomatic API over the operation machine; its tests run with `node --test`
# (tests/vectors/ through the package, recuo serve, a Node and a Python process sharing one
# regulator file, npm pack into an empty folder). Included by the top-level Makefile, which
# defines ROOT and CARGO.
#
# `make js` builds librecuo and bundles it into the package as js/native/librecuo.so (the
# package finds it there after RECUO_LIB and before the system's librecuo.so.0.1);
# `make js JS_PROFILE=release` bundles the release build.

JS_DIR     := $(ROOT)/js
JS_PROFILE ?= debug
JS_NATIVE  := $(JS_DIR)/native
JS_CARGO_FLAGS := $(if $(filter release,$(JS_PROFILE)),--release,)

.PHONY: js deps-js test-js

deps-js: ## js/node_modules from js/package-lock.json (npm ci); Node and npm from apt only when node is missing
	@scripts/install-deps.sh

js: deps-js ## build librecuo and bundle it into the npm package (js/native/librecuo.so; JS_PROFILE=release)
	@$(CARGO) build -q -p recuo-ffi $(JS_CARGO_FLAGS)
	@mkdir -p $(JS_NATIVE)
	@cp $(ROOT)/target/$(JS_PROFILE)/librecuo.so $(JS_NATIVE)/librecuo.so.tmp
	@mv $(JS_NATIVE)/librecuo.so.tmp $(JS_NATIVE)/librecuo.so

test-js: js build-cli build-python ## the npm package's tests (node --test): vectors, recuo serve, a shared regulator with Python, npm pack
	@cd $(JS_DIR) && RECUO_BIN=$(ROOT)/target/debug/recuo RECUO_PYTHON=$(VENV)/bin/python node --test test/*.test.js
