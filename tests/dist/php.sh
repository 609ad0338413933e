#!/usr/bin/env bash
# tests/dist/php.sh ROOT DIST_DIR VERSION BINARY_ZIP — make dist's PHP artifacts installed as
# their users install them (mk/php.mk's test-dist-php, after dist-php):
#
#   with no Rust (a PATH of the system's directories only, without cargo and rustc):
#     - the pre-packaged binary: its recuo.so alone in a fresh extension directory, loaded by
#       `php -n -d extension_dir=... -d extension=recuo`, runs the README's PHP example;
#     - the Composer archive of php/lib: required by Debian's composer in an empty project from
#       an `artifact` repository with Packagist off; the README's example through
#       vendor/autoload.php, and the Guzzle and Symfony adapters with Debian's Guzzle and
#       Symfony (tests/dist/php_library_check.php);
#     - the PIE package: composer.json validated; its configure, with no cargo, says so;
#   with Rust, as the user of a platform without a binary:
#     - the PIE package built by `phpize && ./configure && make`, `make install` into a
#       scratch root, loaded from there, and the README's example run.
#
# One line per step; the output of a failing step, then FAILED and why.
set -euo pipefail

root=$1 dist=$2 version=$3 binary_zip=$4
PHP_CONFIG=${PHP_CONFIG:-php-config}
CARGO=${CARGO:-cargo}
pie_zip="$dist/recuo-ext-$version.zip"
lib_zip="$dist/recuo-recuo-$version.zip"
bin_zip="$dist/$binary_zip"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/recuo-test-dist-php.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
step() { echo "test-dist-php: $*"; }
fail() { echo "test-dist-php: FAILED: $*" >&2; exit 1; }
# Runs a command quietly; on failure shows its output and fails with the message given.
quiet() {
    local what=$1; shift
    "$@" >"$tmp/out" 2>&1 || { cat "$tmp/out" >&2; fail "$what"; }
}

for f in "$pie_zip" "$bin_zip" "$lib_zip"; do
    [ -f "$f" ] || fail "$f is missing: run make dist-php (or make dist) first"
    # Made from the sources as they are: testing older artifacts would say nothing, and the
    # PIE source build below shares cargo's units with the repository's own build.
    newer=$(find "$root/Cargo.toml" "$root/Cargo.lock" "$root/core" "$root/redis-store" "$root/php" \
        -newer "$f" -type f \( -name '*.rs' -o -name '*.toml' -o -name '*.lock' -o -name '*.lua' -o -name '*.php' \
        -o -name '*.json' -o -name '*.m4' -o -name '*.frag' \) -print -quit)
    [ -z "$newer" ] || fail "$(basename "$f") is older than $newer: run make dist-php (or make dist) first"
done

# The README's PHP example (one ```php block) and what its comments say it prints (as
# tests/readme/check_examples.py holds it to).
awk '/^```php$/ { on = 1; next } /^```/ { on = 0 } on' "$root/README.md" > "$tmp/readme.php"
[ "$(grep -c '^```php$' "$root/README.md")" = 1 ] || fail "README.md: expected one PHP example"
readme_says=$'12000\nok'
# Runs the README's example with the PHP arguments given (first: the prefix put before it).
readme_example() {
    local prefix=$1; shift
    { echo '<?php'; echo "$prefix"; sed '1{/^<?php$/d}' "$tmp/readme.php"; } > "$tmp/example.php"
    php "$@" "$tmp/example.php"
}

# ---- with no Rust ------------------------------------------------------------------------
# The system's directories only: where Debian puts php, composer and unzip, and no cargo
# (~/.cargo/bin) nor rustc. A user's machine, as far as PATH can make one.
ORIG_PATH=$PATH
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
! command -v cargo >/dev/null || fail "cargo is still on PATH ($(command -v cargo))"
! command -v rustc >/dev/null || fail "rustc is still on PATH ($(command -v rustc))"
step "no Rust on PATH (no cargo, no rustc)"

# The pre-packaged binary: recuo.so at the top, where PIE takes it from, with the licenses.
listing=$(unzip -Z1 "$bin_zip" | LC_ALL=C sort | tr '\n' ' ')
[ "$listing" = "LICENSE-APACHE LICENSE-MIT recuo.so " ] || fail "$binary_zip holds: $listing"
mkdir -p "$tmp/ext"
unzip -q "$bin_zip" recuo.so -d "$tmp/ext"
# -n: no php.ini, so nothing but recuo is loaded (and no other module of Debian's is looked
# for in this extension_dir); what the examples use besides (json, spl, pcre) is compiled
# into Debian's php.
ext=(-n -d "extension_dir=$tmp/ext" -d extension=recuo)
printed=$(readme_example "" "${ext[@]}") || fail "the README's example with $binary_zip's recuo.so: $printed"
[ "$printed" = "$readme_says" ] || fail "the README's example printed '$printed', the README says '$readme_says'"
got=$(php "${ext[@]}" -r 'echo phpversion("recuo");')
[ "$got" = "$version" ] || fail "$binary_zip's recuo.so is version '$got', not $version"
step "$binary_zip: recuo.so $version from a fresh extension_dir runs the README's example"

# The Composer archive: a valid package (errors and warnings both count), recuo/recuo at this
# version, requiring ext-recuo, with the licenses.
mkdir -p "$tmp/lib-json"
unzip -q -p "$lib_zip" composer.json > "$tmp/lib-json/composer.json"
export COMPOSER_HOME="$tmp/composer-home" COMPOSER_CACHE_DIR="$tmp/composer-home/cache"
export COMPOSER_ALLOW_SUPERUSER=1 COMPOSER_NO_INTERACTION=1 COMPOSER_DISABLE_NETWORK=1
quiet "composer validate: $(basename "$lib_zip")'s composer.json" \
    composer validate --strict --no-check-lock --no-check-version --working-dir="$tmp/lib-json"
php -n -r '
    $j = json_decode(file_get_contents($argv[1]), true, 512, JSON_THROW_ON_ERROR);
    exit(($j["name"] ?? "") === "recuo/recuo" && ($j["version"] ?? "") === $argv[2]
        && ($j["require"]["ext-recuo"] ?? null) === "*" ? 0 : 1);
' "$tmp/lib-json/composer.json" "$version" || fail "$(basename "$lib_zip"): composer.json is not recuo/recuo $version requiring ext-recuo"
listing=$(unzip -Z1 "$lib_zip")
for f in LICENSE-MIT LICENSE-APACHE src/functions.php src/Guzzle/RetryMiddleware.php src/Symfony/RetryStrategy.php; do
    grep -qxF "$f" <<<"$listing" || fail "$(basename "$lib_zip") has no $f"
done
step "$(basename "$lib_zip"): composer validate, recuo/recuo $version requiring ext-recuo, licenses"

# Required through Debian's composer from an artifact repository (a directory of archives:
# this one alone) with Packagist off. Composer checks the platform, so it runs with the
# extension loaded, as it would be once installed; the rest of Debian's php.ini as a user has it.
php -r 'exit(extension_loaded("zip") ? 0 : 1);' ||
    fail "Composer's artifact repository needs PHP's zip extension: apt-get install php-zip"
mkdir -p "$tmp/artifacts" "$tmp/project"
cp "$lib_zip" "$tmp/artifacts/"
cat > "$tmp/project/composer.json" <<EOF
{
    "repositories": [{"type": "artifact", "url": "$tmp/artifacts"}, {"packagist.org": false}],
    "require": {"recuo/recuo": "$version"}
}
EOF
quiet "composer install of recuo/recuo $version from the artifact repository" \
    php -d "extension=$tmp/ext/recuo.so" "$(command -v composer)" install --no-interaction --no-progress --working-dir="$tmp/project"
[ -f "$tmp/project/vendor/recuo/recuo/src/functions.php" ] || fail "composer install put no recuo/recuo in vendor/"
printed=$(readme_example "require '$tmp/project/vendor/autoload.php';" "${ext[@]}") ||
    fail "the README's example through vendor/autoload.php: $printed"
[ "$printed" = "$readme_says" ] || fail "the README's example through vendor/autoload.php printed '$printed', the README says '$readme_says'"
printed=$(php "${ext[@]}" "$root/tests/dist/php_library_check.php" "$tmp/project") ||
    fail "the adapters through vendor/autoload.php: $printed"
[ "$printed" = $'guzzle: 200 after 2 attempts\nsymfony: 200 after 2 attempts' ] ||
    fail "the adapters through vendor/autoload.php printed: $printed"
step "composer install from an artifact repository (Packagist off): the README's example and the Guzzle and Symfony adapters run"

# The PIE package: composer.json as PIE reads it. Composer validates it with errors and
# warnings both failing; publishing checks too, where the one complaint allowed is Composer <
# 2.7's, whose schema predates the php-ext section PIE defines.
mkdir -p "$tmp/pie"
unzip -q "$pie_zip" -d "$tmp/pie"
pkg="$tmp/pie/recuo-ext-$version"
[ -f "$pkg/composer.json" ] || fail "$(basename "$pie_zip") has no recuo-ext-$version/composer.json"
quiet "composer validate: the PIE package's composer.json" \
    composer validate --strict --no-check-publish --no-check-lock --no-check-version --working-dir="$pkg"
composer validate --no-check-lock --no-check-version --working-dir="$pkg" >"$tmp/out" 2>&1 || true
others=$(grep -E '^- ' "$tmp/out" | grep -vxF -- '- The property php-ext is not defined and the definition does not allow additional properties' || true)
[ -z "$others" ] || { cat "$tmp/out" >&2; fail "composer validate (publishing): $others"; }
php -n -r '
    $j = json_decode(file_get_contents($argv[1]), true, 512, JSON_THROW_ON_ERROR);
    $ext = $j["php-ext"] ?? [];
    $ok = ($j["name"] ?? "") === "recuo/recuo-ext" && ($j["type"] ?? "") === "php-ext"
        && ($j["version"] ?? "") === $argv[2] && ($j["require"]["php"] ?? "") === ">=8.2"
        && ($ext["extension-name"] ?? "") === "recuo"
        && ($ext["download-url-method"] ?? []) === ["pre-packaged-binary", "composer-default"]
        && !isset($j["extra"]["php-ext"]) && ($j["license"] ?? "") !== "";
    exit($ok ? 0 : 1);
' "$pkg/composer.json" "$version" || fail "the PIE package's composer.json: not recuo/recuo-ext $version with PIE's php-ext section"
for f in config.m4 Makefile.frag LICENSE-MIT LICENSE-APACHE README.md rust/Cargo.toml rust/Cargo.lock rust/php/Cargo.toml rust/core/Cargo.toml rust/redis-store/Cargo.toml; do
    [ -f "$pkg/$f" ] || fail "$(basename "$pie_zip") has no $f"
done
step "$(basename "$pie_zip"): composer validate, recuo/recuo-ext $version of type php-ext, extension recuo, pre-packaged-binary then composer-default"

# Its configure, with no cargo to be found, says what is missing and where to get it.
cp -r "$pkg" "$tmp/pie-no-rust"
(cd "$tmp/pie-no-rust" && phpize >/dev/null 2>&1) || fail "phpize in the PIE package"
if (cd "$tmp/pie-no-rust" && ./configure >"$tmp/out" 2>&1); then
    fail "configure succeeded with no cargo on PATH"
fi
grep -qF 'recuo: building the extension needs Rust (cargo); see https://rustup.rs, or use the pre-packaged binary' "$tmp/out" ||
    { cat "$tmp/out" >&2; fail "configure with no cargo did not say that Rust is needed"; }
step "$(basename "$pie_zip"): with no cargo, configure says Rust is needed"

# ---- with Rust -------------------------------------------------------------------------
# As the user of a platform with no pre-packaged binary: phpize && ./configure && make.
export PATH="$ORIG_PATH"
command -v "$CARGO" >/dev/null || fail "$CARGO is missing: the PIE source build needs Rust"
# A user builds from scratch. Here cargo builds in the repository's target/ (CARGO_TARGET_DIR)
# to reuse dist-php's release build of the dependencies and keep `make test` short. The
# package's workspace has the repository's crate paths, so cargo takes its crates for the
# repository's own: they are compiled again from the package's sources (touched, so that
# cargo cannot find them up to date) into the same place, and must come out as the very
# file dist-php zipped. (Outside target/: cargo records the sources it finds under target/
# by their place there, and the repository's next build would then look for them.)
mkdir -p "$tmp/pie-build"
unzip -q "$pie_zip" -d "$tmp/pie-build"
src="$tmp/pie-build/recuo-ext-$version"
find "$src/rust" -type f -exec touch {} +
(
    cd "$src"
    export CARGO CARGO_TARGET_DIR="$root/target"
    quiet "phpize" phpize
    # The php-config dist-php built for: ext-php-rs is then given the same PHP and PHP_CONFIG,
    # and cargo reuses its build.
    quiet "./configure" ./configure --with-php-config="$PHP_CONFIG"
    quiet "make (cargo build --release -p recuo-php)" make
    quiet "make install INSTALL_ROOT=$tmp/root" make install INSTALL_ROOT="$tmp/root"
)
[ -f "$src/modules/recuo.so" ] || fail "make left no modules/recuo.so (where PIE takes the build from)"
unzip -q -p "$bin_zip" recuo.so | cmp -s - "$src/modules/recuo.so" ||
    fail "the PIE source build's recuo.so is not the pre-packaged binary's: the same sources, in a workspace with the same crate paths, built by the same cargo, should give the same file"
ext_dir="$tmp/root$("$PHP_CONFIG" --extension-dir)"
[ -f "$ext_dir/recuo.so" ] || fail "make install put no recuo.so in INSTALL_ROOT's $("$PHP_CONFIG" --extension-dir)"
built=(-n -d "extension_dir=$ext_dir" -d extension=recuo)
got=$(php "${built[@]}" -r 'var_dump(extension_loaded("recuo")); echo phpversion("recuo"), "\n";')
[ "$got" = $'bool(true)\n'"$version" ] || fail "the PIE source build's recuo.so: $got"
printed=$(readme_example "" "${built[@]}") || fail "the README's example with the PIE source build: $printed"
[ "$printed" = "$readme_says" ] || fail "the README's example with the PIE source build printed '$printed', the README says '$readme_says'"
step "$(basename "$pie_zip"): phpize, configure, make (the pre-packaged binary, bit for bit), make install INSTALL_ROOT: recuo.so $version loads and runs the README's example"
