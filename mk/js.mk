# mk/js.mk — the npm package `recuo` (js/): recuo's core compiled to WebAssembly (recuo.wasm),
# the guides' JavaScript functions and the idiomatic API over the operation machine; its tests
# run in Node (`node --test`), Deno, Bun, headless Chromium and Cloudflare's workerd
# (tests/vectors/ through the package, recuo serve, Redis through node-redis and ioredis,
# npm pack into an empty folder). Included by the top-level Makefile, which defines ROOT and
# CARGO.

JS_DIR     := $(ROOT)/js

.PHONY: js dist-js test-dist-js deps-js test-js wasm test-js-deno test-js-bun test-js-hosts test-js-runtimes
js: wasm ## build the npm package's recuo.wasm (and its inlined form); needs Rust and Node (make dist-js packs it)

deps-js: ## js/node_modules from js/package-lock.json (npm ci); Node and npm from apt only when node is missing
	@scripts/install-deps.sh js

# The core's C ABI as WebAssembly (js/recuo.wasm), built with Debian's rustc-web and lld
# (scripts/wasm-toolchain.sh unpacks them into target/wasm-toolchain/; rustup's toolchain has
# no wasm32 standard library), into a target folder of its own so that the two compilers never
# share build output.
WASM_TARGET := wasm32-unknown-unknown
WASM_OUT    := $(ROOT)/target/wasm/$(WASM_TARGET)/wasm/recuo.wasm
# recuo.wasm with the tests' functions too (js/test/otel.test.js): never shipped.
WASM_TEST   := $(ROOT)/target/wasm/recuo-test.wasm
# What rustc 1.96 (LLVM 22) emits for wasm32 by default, which wasm-opt must be told.
WASM_FEATURES := --enable-bulk-memory --enable-sign-ext --enable-mutable-globals \
  --enable-nontrapping-float-to-int --enable-multivalue --enable-reference-types
JS_TESTS = $(patsubst $(JS_DIR)/%,%,$(wildcard $(JS_DIR)/test/*.test.js))

wasm: ## build the core's C ABI as WebAssembly for the npm package (js/recuo.wasm)
	@$(NEED_CARGO)
	@$(call need,node,install Node 20 or newer (Debian: apt-get install nodejs))
	@$(call need,apt-get,the WebAssembly toolchain comes from Debian's rustc-web and lld (scripts/wasm-toolchain.sh))
	@tc=$$($(ROOT)/scripts/wasm-toolchain.sh) && \
	  LD_LIBRARY_PATH=$$tc/lib/x86_64-linux-gnu RUSTC=$$tc/bin/rustc RUSTC_BOOTSTRAP=1 \
	  CARGO_TARGET_DIR=$(ROOT)/target/wasm CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER=$$tc/lib/llvm-22/bin/wasm-ld \
	  $(CARGO) build -q -p recuo-ffi --no-default-features --profile wasm --target $(WASM_TARGET) -Zbuild-std=std,panic_abort
	@node $(ROOT)/scripts/wasm-exports.mjs $(WASM_OUT) $(WASM_OUT:.wasm=.kept.wasm)
	@tc=$$($(ROOT)/scripts/wasm-toolchain.sh) && $$tc/bin/wasm-opt -Oz --converge $(WASM_FEATURES) $(WASM_OUT:.wasm=.kept.wasm) -o $(JS_DIR)/recuo.wasm.tmp
	@mv $(JS_DIR)/recuo.wasm.tmp $(JS_DIR)/recuo.wasm
	@# The tests' own build: the same module, with the functions only the tests call (abi.js's
	@# TEST_ONLY) still exported.
	@node $(ROOT)/scripts/wasm-exports.mjs $(WASM_OUT) $(WASM_TEST:.wasm=.kept.wasm) --test
	@tc=$$($(ROOT)/scripts/wasm-toolchain.sh) && $$tc/bin/wasm-opt -Oz $(WASM_FEATURES) $(WASM_TEST:.wasm=.kept.wasm) -o $(WASM_TEST)
	@cp $(ROOT)/LICENSE-MIT $(ROOT)/LICENSE-APACHE $(JS_DIR)/
	@printf '%s\n%s\n' '// recuo.wasm as base64, made by `make wasm`: what browsers and bundlers load.' \
	  "export default '$$(base64 -w0 $(JS_DIR)/recuo.wasm)';" > $(JS_DIR)/lib/wasm-bytes.js
	@echo "wasm: js/recuo.wasm $$(stat -c %s $(JS_DIR)/recuo.wasm) bytes, $$(gzip -9 -c $(JS_DIR)/recuo.wasm | wc -c) gzipped"

test-js: wasm deps-js build-cli ## the npm package's tests in Node (node --test): vectors, recuo serve, Redis, npm pack
	@cd $(JS_DIR) && RECUO_BIN=$(ROOT)/target/debug/recuo node --test $(JS_TESTS)

# Deno and Bun come as the npm packages that hold their binaries (js/package.json's
# devDependencies, installed by npm ci): the same test files.
DENO := $(JS_DIR)/node_modules/@deno/linux-x64-glibc/deno
BUN  := $(JS_DIR)/node_modules/@oven/bun-linux-x64/bin/bun

test-js-deno: wasm deps-js build-cli ## the npm package's tests in Deno (deno test)
	@cd $(JS_DIR) && RECUO_BIN=$(ROOT)/target/debug/recuo NO_COLOR=1 $(DENO) test --no-check --allow-all $(JS_TESTS)

test-js-bun: wasm deps-js build-cli ## the npm package's tests in Bun (bun test)
	@cd $(JS_DIR) && RECUO_BIN=$(ROOT)/target/debug/recuo $(BUN) test $(addprefix ./,$(JS_TESTS))

# The hosts that cannot run node:test (test/hosts, driven from Node): headless Chromium (the
# package through an esbuild and a Vite bundle) and Cloudflare's workerd (a Worker bundled as
# wrangler bundles one), each running test/portable against `recuo serve --cors`.
test-js-hosts: wasm deps-js build-cli ## the package in headless Chromium (esbuild and Vite bundles) and in workerd
	@cd $(JS_DIR) && RECUO_BIN=$(ROOT)/target/debug/recuo node --test test/hosts/*.test.js

test-js-runtimes: ## the package's tests in Node, Deno, Bun, Chromium and workerd at once (each mostly waits on timers and servers)
	@$(MAKE) --no-print-directory -j4 --output-sync=target test-js test-js-deno test-js-bun test-js-hosts

# The npm tarball as a release uploads it (platform-free: no native file, no install script).
dist-js: wasm ## the npm tarball (npm pack), into target/dist
	@v=$$(node -p 'require("$(JS_DIR)/package.json").version') && [ "$$v" = "$(RECUO_VERSION)" ] || \
		{ echo "make dist-js: js/package.json says version $$v, Cargo.toml $(RECUO_VERSION): set both" >&2; exit 1; }
	@mkdir -p $(DIST_DIR)
	@cd $(JS_DIR) && npm pack --silent --pack-destination $(DIST_DIR) >/dev/null
	@ls $(DIST_DIR)/recuo-$(RECUO_VERSION).tgz >/dev/null

# test/pack.test.js on make dist's tarball: into an empty project with no Rust on PATH, the
# README's example run in Node, Deno and Bun.
test-dist-js: deps-js ## install make dist's npm tarball into an empty project (no Rust on PATH) and run the README's example in Node, Deno and Bun
	@cd $(JS_DIR) && RECUO_NPM_TARBALL=$(DIST_DIR)/recuo-$(RECUO_VERSION).tgz node --test test/pack.test.js
