#!/usr/bin/env bash
# php/pie/dist.sh ROOT DIST_DIR VERSION BINARY_ZIP — the PHP artifacts of `make dist` (run by
# mk/php.mk's dist-php, after the release build target/release/librecuo_php.so):
#
#   recuo-ext-VERSION.zip   the PIE package (type php-ext): composer.json, config.m4 and
#                           Makefile.frag, and the Rust workspace the extension needs
#                           (rust/), so that `phpize && ./configure && make && make
#                           install` builds it. A zip,
#                           with one top-level directory, because that is what Composer's
#                           default download (`composer-default`, the one PIE builds from) is:
#                           a dist zip such as GitHub's, which Composer unpacks without its
#                           top directory; by hand it unzips to recuo-ext-VERSION/.
#   BINARY_ZIP              the pre-packaged binary PIE looks for (named by mk/php.mk from
#                           php-config: php_recuo-VERSION_phpX.Y-ARCH-linux-glibc-nts.zip):
#                           recuo.so at the top, where PIE takes it, and the licenses.
#   recuo-recuo-VERSION.zip the Composer archive of php/lib (`recuo/recuo`, as `composer
#                           archive` names it), with a "version" so that an `artifact`
#                           repository can serve it, and the licenses.
set -euo pipefail

root=$1 dist=$2 version=$3 binary_zip=$4
CARGO=${CARGO:-cargo}
so="$root/target/release/librecuo_php.so"
[ -f "$so" ] || { echo "dist-php: $so is missing (the release build)" >&2; exit 1; }

mkdir -p "$dist" && dist=$(cd "$dist" && pwd)
stage=$(mktemp -d "${TMPDIR:-/tmp}/recuo-dist-php.XXXXXX")
trap 'rm -rf "$stage"' EXIT

# composer.json with "version" after "description": an `artifact` or `path` repository takes
# the version from there (Packagist takes it from the tag, so the sources carry none).
with_version() {
    php -n -r '
        $in = json_decode(file_get_contents($argv[1]), true, 512, JSON_THROW_ON_ERROR);
        $out = [];
        foreach ($in as $key => $value) {
            $out[$key] = $value;
            if ($key === "description") {
                $out["version"] = $argv[2];
            }
        }
        echo json_encode($out, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE), "\n";
    ' "$1" "$version"
}

# A section-wise copy of a Cargo.toml: the sections named in KEEP (or all but those in DROP),
# each with the comment lines just above its header or keys.
toml_sections() {
    awk -v keep="$1" -v drop="$2" '
        function wanted(h) { return (keep == "" || index(" " keep " ", " " h " ")) && !index(" " drop " ", " " h " ") }
        /^\[/ { on = wanted($0); if (on) printf "%s", buf; buf = ""; if (on) print; next }
        /^#/ { buf = buf $0 "\n"; next }
        { if (on) { printf "%s", buf; print } buf = "" }
    ' "$3"
}

# Deterministic zip: sorted names, no extra attributes (uid/gid, extended times).
zip_dir() { (cd "$1" && find . -type f -printf '%P\n' | LC_ALL=C sort | zip -q -X "$2" -@); }

# ---- 1. the PIE package ----------------------------------------------------------------
pkg="$stage/src/recuo-ext-$version"
mkdir -p "$pkg"
with_version "$root/php/pie/composer.json" > "$pkg/composer.json"
cp "$root/php/pie/config.m4" "$root/php/pie/Makefile.frag" "$root/php/pie/README.md" \
   "$root/LICENSE-MIT" "$root/LICENSE-APACHE" "$root/php/recuo.stub.php" "$root/php/recuo.ini" "$pkg/"
# The Rust workspace, in rust/ (configure removes any file named `core`): the extension's
# crate and the two it depends on, at the paths they have in the repository (so cargo, given
# the repository's target/, finds its own build of them: tests/dist/php.sh). Their tests,
# examples and dev-dependencies stay out: they read files outside these crates
# (tests/vectors), and building the extension needs none of them.
ws="$pkg/rust"
for crate in core redis-store php; do
    mkdir -p "$ws/$crate"
    cp -r "$root/$crate/src" "$ws/$crate/"
    [ ! -f "$root/$crate/build.rs" ] || cp "$root/$crate/build.rs" "$ws/$crate/"
    toml_sections "" "[dev-dependencies] [[test]] [[bench]] [[example]]" "$root/$crate/Cargo.toml" > "$ws/$crate/Cargo.toml"
done
{
    echo "# The Rust workspace of recuo's PHP extension (the PIE package recuo/recuo-ext): the"
    echo "# repository's Cargo.toml limited to the crates the extension needs."
    echo "[workspace]"
    echo 'resolver = "2"'
    echo 'members = ["core", "redis-store", "php"]'
    echo
    toml_sections "[workspace.package] [workspace.dependencies] [profile.release]" "" "$root/Cargo.toml"
} > "$ws/Cargo.toml"
# The repository's Cargo.lock, pruned by cargo to this workspace (the versions stay as locked).
cp "$root/Cargo.lock" "$ws/Cargo.lock"
"$CARGO" metadata --quiet --offline --format-version 1 --manifest-path "$ws/Cargo.toml" >/dev/null
# No path outside the package: every path dependency stays inside it.
if grep -rn --include=Cargo.toml -E 'path *= *"(\.\./|/)' "$pkg" >&2; then
    echo "dist-php: the PIE package's manifests name a path outside it" >&2; exit 1
fi
rm -f "$dist/recuo-ext-$version.zip"
zip_dir "$stage/src" "$dist/recuo-ext-$version.zip"

# ---- 2. the pre-packaged binary ----------------------------------------------------------
bin="$stage/bin"
mkdir -p "$bin"
install -m 0755 "$so" "$bin/recuo.so"
cp "$root/LICENSE-MIT" "$root/LICENSE-APACHE" "$bin/"
rm -f "$dist/$binary_zip"
zip_dir "$bin" "$dist/$binary_zip"

# ---- 3. the Composer archive of php/lib -------------------------------------------------
lib="$stage/lib"
mkdir -p "$lib"
(cd "$root/php/lib" && find . -type f \( -name '*.php' -o -name composer.json \) -printf '%P\n') |
    while read -r f; do install -D -m 0644 "$root/php/lib/$f" "$lib/$f"; done
with_version "$root/php/lib/composer.json" > "$lib/composer.json"
cp "$root/LICENSE-MIT" "$root/LICENSE-APACHE" "$lib/"
rm -f "$dist/recuo-recuo-$version.zip"
zip_dir "$lib" "$dist/recuo-recuo-$version.zip"
