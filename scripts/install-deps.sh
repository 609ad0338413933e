#!/usr/bin/env bash
# Installs what recuo's build and tests need on Debian 12, and nothing that is already there.
# Safe to run again: it prints only when it installs something.
#
#   scripts/install-deps.sh              everything the tests need (make deps, make test)
#   scripts/install-deps.sh python-build .venv with maturin and zig only (make wheel, sdist)
#   scripts/install-deps.sh js           js/node_modules, and Node from apt when there is none
#
# A build target installs only its own part; apt runs only for the whole test environment, or
# for Node when there is none at all.
set -euo pipefail
cd "$(dirname "$0")/.."
PART=${1:-all}
case $PART in all | python-build | js) ;; *) echo "install-deps: no part '$PART' (all, python-build, js)" >&2; exit 2 ;; esac

APT_PACKAGES=(
  build-essential pkg-config       # cc, make
  clang libclang-dev               # bindgen for ext-php-rs
  php-dev php-cli phpunit          # the PHP extension and its tests
  php-curl php-guzzlehttp-guzzle php-symfony-http-client php-psr-log php-monolog  # the PHP adapters and their tests (Debian's autoloaders; Monolog: a real PSR-3 logger)
  php-laravel-framework            # docs/recipes.md's Laravel recipe (Laravel 8's framework, with its autoloader)
  valgrind libcjson-dev            # the C tests (cJSON reads the shared vectors)
  libcurl4-openssl-dev             # the libcurl glue's tests (recuo_curl.h); librecuo never links it
  redis-server                     # the distributed regulator's tests
  python3 python3-venv             # the .venv for maturin, pytest and mypy
  nginx-light                      # the HTTP adapters' tests: a real limit_req (started by the tests)
  chromium                         # the npm package's browser tests (headless, driven by puppeteer-core)
  lintian composer zip unzip php-zip  # make dist and test-dist: the .debs checked, the Composer archive required (its artifact repository reads zips with php-zip), the PIE zip
)
# Pinned: the Python build tools, then the test tools.
PY_BUILD_PACKAGES=(maturin==1.16.0
  ziglang==0.17.0)                                 # make wheel: maturin --zig, manylinux2014
PY_PACKAGES=("${PY_BUILD_PACKAGES[@]}" pytest==9.2.0 pytest-timeout==2.4.0 mypy==2.4.1
  httpx==0.28.1 requests==2.34.2 aiohttp==3.14.5   # the HTTP adapters' clients (typed inline)
  opentelemetry-api==1.45.1 opentelemetry-sdk==1.45.1  # recuo.otel, and its in-memory exporters
  opentelemetry-instrumentation-httpx==0.66b1 opentelemetry-instrumentation-requests==0.66b1
  opentelemetry-instrumentation-aiohttp-client==0.66b1
  opentelemetry-exporter-prometheus==0.66b1 prometheus_client==0.26.0)

# .venv with the given pinned packages (created when missing).
python_venv() {
  if [ ! -x .venv/bin/python ]; then
    command -v python3 >/dev/null || { echo "install-deps: python3 is missing: apt-get install python3 python3-venv" >&2; exit 1; }
    echo "install-deps: creating .venv"
    python3 -m venv .venv || { echo "install-deps: python3 cannot make a venv: apt-get install python3-venv" >&2; exit 1; }
  fi
  local have
  have=$(.venv/bin/python -m pip freeze 2>/dev/null | grep -cxF -f <(printf '%s\n' "$@") || true)
  if [ "$have" -ne $# ]; then
    echo "install-deps: pip install $*"
    .venv/bin/python -m pip install -q --disable-pip-version-check "$@"
  fi
}

if [ "$PART" = python-build ]; then
  python_venv "${PY_BUILD_PACKAGES[@]}"
  exit 0
fi

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "$PART" = all ] && [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ "$PART" = all ]; then
  command -v cargo >/dev/null || { echo "install-deps: cargo is missing: install Rust stable (https://rustup.rs)" >&2; exit 1; }
  python_venv "${PY_PACKAGES[@]}"
fi

# Node and npm for the npm package (js/, Node >= 20): from apt only when there is no `node` at
# all, so a Node installed otherwise (newer, from nvm or NodeSource) is never replaced.
if ! command -v node >/dev/null; then
  echo "install-deps: apt-get install nodejs npm"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 20 ]; then
  echo "install-deps: js/ needs Node 20 or newer; this node is $(node --version)" >&2
  exit 1
fi
command -v npm >/dev/null || { echo "install-deps: node is here but npm is not: install npm for this node" >&2; exit 1; }
# js/node_modules exactly as js/package-lock.json pins it (npm ci), again when the lock changes.
if ! cmp -s js/package-lock.json js/node_modules/.recuo-package-lock.json; then
  echo "install-deps: npm ci (js/)"
  (cd js && npm ci --no-audit --no-fund --loglevel=error)
  cp js/package-lock.json js/node_modules/.recuo-package-lock.json
fi
