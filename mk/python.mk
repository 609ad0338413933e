# mk/python.mk — the recuo Python package (python/, tests/python/, examples/python/).
# Included by the top-level Makefile, which defines ROOT, VENV and CARGO.
#
# build-python installs the package into .venv as editable (maturin develop, dev profile):
# python/recuo/ is imported from the source tree, the native module is copied beside it as
# python/recuo/_recuo.abi3.so. Each step prints only when it fails.

.PHONY: build-python lint-python test-python demo-python wheel test-wheel python-build-tools sdist dist-python test-dist-python

# maturin finds the virtualenv through VIRTUAL_ENV; the tools come from .venv/bin.
PY_ENV := VIRTUAL_ENV=$(VENV) PATH="$(VENV)/bin:$$PATH"
PY := $(VENV)/bin/python
MATURIN := $(VENV)/bin/maturin
# mypy's cache goes under target/, not into the source tree.
PY_MYPY := $(PY_ENV) MYPY_CACHE_DIR=$(ROOT)/target/mypy $(PY) -m mypy

# Installing (the .pth file and the metadata, which carries the version) is redone when the
# venv or the version changes; rebuilding the module in place is left to cargo, which makes
# it a no-op when nothing changed.
PY_INSTALLED := $(VENV)/.recuo-python-installed

# Runs a command, printing its output only when it fails.
py_quiet = out=$$($(1) 2>&1) || { printf '%s\n' "$$out"; exit 1; }

# The same pyo3 build environment maturin uses, so `cargo clippy` of the crate does not make
# cargo rerun pyo3's build script and rebuild pyo3 for the next `maturin develop` (and back).
PY_PYO3_ENV = PYO3_BUILD_EXTENSION_MODULE=1 PYO3_PYTHON=$(PY) \
	PYO3_ENVIRONMENT_SIGNATURE=$$($(PY) -c 'import sys; v = sys.version_info; \
	print(f"{sys.implementation.name}-{v[0]}.{v[1]}-{64 if sys.maxsize > 2**32 else 32}bit")') \
	$(addprefix PYO3_CONFIG_FILE=,$(firstword $(wildcard $(ROOT)/target/maturin/pyo3-config-*-abi3.txt)))

$(PY_INSTALLED): python/pyproject.toml python/Cargo.toml Cargo.toml
	@cd python && $(call py_quiet,$(PY_ENV) $(MATURIN) develop)
	@touch $@

build-python: $(PY_INSTALLED) ## build the Python package into .venv (maturin develop)
	@cd python && $(call py_quiet,$(PY_ENV) $(MATURIN) develop --skip-install)

lint-python: build-python ## clippy and rustfmt for recuo-python; mypy --strict and stubtest
	@$(CARGO) fmt -p recuo-python -- --check
	@$(PY_PYO3_ENV) $(CARGO) clippy --quiet -p recuo-python --all-targets -- -D warnings
	@# The package's own Python (recuo/_retry.py, the glue of recuo.retry) is typed inline and
	@# checked with the tests and examples that use it.
	@$(call py_quiet,$(PY_MYPY) --config-file $(ROOT)/python/pyproject.toml tests/python examples/python python/recuo)
	@# Guide B's job (its own conftest, with tests/python's servers on the path).
	@$(call py_quiet,MYPYPATH=$(ROOT)/tests/python $(PY_MYPY) --config-file $(ROOT)/python/pyproject.toml tests/guide_b)
	@# stubtest leaves a .mypy_cache in its working directory: run it under target/.
	@cd $(ROOT)/target && $(call py_quiet,$(PY_ENV) MYPY_CACHE_DIR=$(ROOT)/target/mypy \
		$(PY) -m mypy.stubtest recuo --mypy-config-file $(ROOT)/python/pyproject.toml)

# tests/python/test_serve.py, test_http.py and test_docs.py run against `recuo serve`
# (target/debug/recuo, built here by build-cli; RECUO_BIN=path names another), test_http.py
# also against nginx (scripts/install-deps.sh installs nginx-light); test_wheel.py runs in
# make test-wheel (in make test), which builds the wheel first.
test-python: build-python lint-python build-cli ## build, lint, then pytest tests/python (docs/python.md's examples included)
	@$(PY_ENV) $(PY) -m pytest -q tests/python

# The wheel: release profile, abi3 (CPython >= 3.10), manylinux2014 — linked against glibc 2.17
# by zig (the pinned `ziglang` package in .venv), so it installs on any x86-64 Linux with
# glibc 2.17 or newer. Maturin checks the tag against the symbols the module uses.
WHEEL_DIR := $(ROOT)/target/wheels

# What the wheel and the sdist are built with, and nothing else: Rust, and maturin and zig in
# .venv (scripts/install-deps.sh python-build: no apt, no test tools).
python-build-tools:
	@$(NEED_CARGO)
	@$(call need,python3,apt-get install python3 python3-venv)
	@scripts/install-deps.sh python-build

wheel: python-build-tools ## build the release wheel into target/wheels (abi3, manylinux2014, maturin --zig); needs Rust and Python
	@rm -f $(WHEEL_DIR)/recuo-*.whl
	@cd python && $(call py_quiet,$(PY_ENV) $(MATURIN) build --release --zig --compatibility manylinux2014 \
		--interpreter $(PY) --out $(WHEEL_DIR))
	@ls $(WHEEL_DIR)/recuo-*.whl

test-wheel: wheel ## install the wheel into a fresh venv with no Rust on PATH, run the README's example
	@$(PY_ENV) RECUO_WHEEL=$$(ls $(WHEEL_DIR)/recuo-*.whl) $(PY) -m pytest -q tests/python/test_wheel.py

demo-python: build-python ## guide B's delays, guide A's loop and the policy engine, from Python
	@$(PY_ENV) $(PY) examples/python/demo.py

# The sdist: the Python package with the Rust crates it builds from (maturin keeps the
# workspace's layout), for the platforms no wheel fits; pip builds it with Rust and maturin.
sdist: python-build-tools ## build the sdist into target/wheels (builds with Rust and maturin where no wheel fits)
	@rm -f $(WHEEL_DIR)/recuo-*.tar.gz
	@cd python && $(call py_quiet,$(PY_ENV) $(MATURIN) sdist --out $(WHEEL_DIR))
	@ls $(WHEEL_DIR)/recuo-*.tar.gz

dist-python: wheel sdist ## the wheel and the sdist, into target/dist
	@mkdir -p $(DIST_DIR)
	@cp $(WHEEL_DIR)/recuo-$(RECUO_VERSION)-*.whl $(WHEEL_DIR)/recuo-$(RECUO_VERSION).tar.gz $(DIST_DIR)/

# The wheel into a fresh venv with no Rust (test_wheel.py, as test-wheel runs it), and the
# sdist into another with Rust, as pip builds it where no wheel fits (test_sdist.py).
test-dist-python: ## install make dist's wheel with no Rust and its sdist with Rust, each into a fresh venv, and run the README's example
	@$(PY_ENV) RECUO_WHEEL=$$(ls $(DIST_DIR)/recuo-$(RECUO_VERSION)-*.whl) RECUO_SDIST=$(DIST_DIR)/recuo-$(RECUO_VERSION).tar.gz \
		RECUO_SDIST_TARGET=$(ROOT)/target $(PY) -m pytest -q -p no:cacheprovider tests/python/test_wheel.py tests/python/test_sdist.py
