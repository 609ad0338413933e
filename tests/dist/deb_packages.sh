#!/usr/bin/env bash
# deb_packages.sh ROOT DEB... — the .debs of `make dist-deb`, checked without installing
# anything into this machine and with no Rust on PATH: every package through lintian (one
# call: no error, no warning that is not overridden in the package); each unpacked into one
# scratch root with `dpkg-deb -x`; from there, the README's C example built against librecuo-dev
# with pkg-config alone (PKG_CONFIG_SYSROOT_DIR, PKG_CONFIG_PATH) and run with LD_LIBRARY_PATH,
# `recuo --version`, and the PHP extension loaded by `php -n` with the library of
# /usr/share/php on the include_path. The PHP package's maintainer scripts are run against the
# scratch root (DPKG_ROOT) with a phpenmod and a phpdismod of the test's own on PATH that only
# record their arguments: the machine's PHP is never touched.
# Environment: PHP_VERSION_MM (8.2), DEB_MULTIARCH (x86_64-linux-gnu), from mk/deb.mk.
set -euo pipefail
root=$(cd "${1:?usage: deb_packages.sh ROOT DEB...}" && pwd)
shift
[ $# -gt 0 ] || { echo "usage: deb_packages.sh ROOT DEB..." >&2; exit 1; }
for deb in "$@"; do
    [ -f "$deb" ] || { echo "deb_packages: no $deb: run make dist-deb first" >&2; exit 1; }
done
php_mm=${PHP_VERSION_MM:?}
multiarch=${DEB_MULTIARCH:?}
passed=0
fail() { echo "deb_packages: $*" >&2; exit 1; }
ok() { passed=$((passed + 1)); }

# No Rust: the PATH a machine without rustup has.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
! command -v cargo >/dev/null && ! command -v rustc >/dev/null || fail "cargo or rustc is on PATH"
ok
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_PATH PKG_CONFIG_LIBDIR LD_LIBRARY_PATH

version=$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' "$root/Cargo.toml" | head -n 1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
scratch=$tmp/root
work=$tmp/work
mkdir -p "$scratch" "$work"

# lintian, once for every package: errors fail, and so do warnings (each accepted one is an
# override, with its reason, in the package itself); what remains (info) is shown. (Not with
# --show-overrides: lintian 2.116 then counts the overridden warnings towards --fail-on.)
lint_status=0
lint=$(lintian --fail-on error,warning --display-info --tag-display-limit 0 "$@" 2>&1) ||
    lint_status=$?
lint=$(grep -v 'running with root privileges is not recommended' <<<"$lint" || true)
[ -z "$lint" ] || printf '%s\n' "$lint" | sed 's/^/  lintian: /'
[ "$lint_status" -eq 0 ] || fail "lintian found errors or warnings (status $lint_status)"
ok

# Each package: the fields a package needs, Installed-Size as counted from its files, and its
# contents unpacked into the one scratch root (dpkg-deb -x never runs a maintainer script).
for deb in "$@"; do
    pkg=$(dpkg-deb -f "$deb" Package)
    for field in Version Architecture Maintainer Installed-Size Section Priority Description; do
        [ -n "$(dpkg-deb -f "$deb" "$field")" ] || fail "$pkg: no $field"
    done
    [ "$(dpkg-deb -f "$deb" Version)" = "$version-1" ] || fail "$pkg: Version $(dpkg-deb -f "$deb" Version)"
    [ "$(dpkg-deb -f "$deb" Priority)" = optional ] || fail "$pkg: Priority"
    one=$work/$pkg
    dpkg-deb -x "$deb" "$one"
    size=$(cd "$one" && find . -mindepth 1 -printf '%y %s\n' |
        awk '$1 == "d" { n += 1; next } { n += int(($2 + 1023) / 1024) } END { print n }')
    [ "$(dpkg-deb -f "$deb" Installed-Size)" = "$size" ] ||
        fail "$pkg: Installed-Size $(dpkg-deb -f "$deb" Installed-Size), its files take $size"
    grep -q '^License: MIT or Apache-2.0$' "$one/usr/share/doc/$pkg/copyright" || fail "$pkg: copyright"
    grep -q 'Permission is hereby granted' "$one/usr/share/doc/$pkg/copyright" || fail "$pkg: no MIT text"
    zcat "$one/usr/share/doc/$pkg/changelog.Debian.gz" | head -n 1 | grep -q "^recuo ($version-1)" ||
        fail "$pkg: changelog.Debian.gz"
    dpkg-deb -x "$deb" "$scratch"
    ok
done
debs=("$@")
deb_of() { printf '%s\n' "${debs[@]}" | grep -E "/$1_[^/]*\.deb$" | head -n 1; }

# The library package: the SONAME's file and link, ldconfig triggered, an shlibs file.
libdir=$scratch/usr/lib/$multiarch
lib=$(deb_of 'librecuo[0-9.]+')
ctl=$work/control-lib
dpkg-deb -e "$lib" "$ctl"
grep -qx 'activate-noawait ldconfig' "$ctl/triggers" || fail "library package: no ldconfig trigger"; ok
grep -q '^librecuo ' "$ctl/shlibs" || fail "library package: no shlibs"; ok
grep -q '^Depends: .*libc6 (>= ' "$ctl/control" || fail "library package: Depends $(grep Depends "$ctl/control")"; ok
grep -qx "Depends: $(dpkg-deb -f "$lib" Package) (= $version-1)" <<<"$(dpkg-deb -f "$(deb_of librecuo-dev)" Depends | sed 's/^/Depends: /')" ||
    fail "librecuo-dev does not depend on the library at its version"; ok

# The README's C example against the unpacked librecuo-dev, as test_install.sh builds it.
export PKG_CONFIG_SYSROOT_DIR=$scratch PKG_CONFIG_PATH=$libdir/pkgconfig
grep -qx 'prefix=/usr' "$libdir/pkgconfig/recuo.pc" || fail "recuo.pc: prefix"; ok
grep -qx "libdir=\${prefix}/lib/$multiarch" "$libdir/pkgconfig/recuo.pc" || fail "recuo.pc: libdir"; ok
[ "$(pkg-config --modversion recuo)" = "$version" ] || fail "pkg-config --modversion"; ok
awk '/^```c$/ { inside = 1; n++; next } /^```$/ { inside = 0 } inside && n == 1' \
    "$root/README.md" > "$work/example.c"
# shellcheck disable=SC2046 # pkg-config's words are separate flags
cc -std=c11 -Wall -Wextra -Werror "$work/example.c" -o "$work/example" $(pkg-config --cflags --libs recuo)
out=$(LD_LIBRARY_PATH=$libdir "$work/example")
[ "$out" = $'12000\nok after 3 attempts' ] || fail "the C example printed: $out"; ok
grep -q "=> $libdir/librecuo.so" <<<"$(LD_LIBRARY_PATH=$libdir ldd "$work/example")" ||
    fail "the C example did not load the unpacked library"; ok
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror "$work/example.c" -o "$work/example_static" \
    $(pkg-config --cflags recuo) "$libdir/librecuo.a" -lpthread -ldl -lm
[ "$("$work/example_static")" = $'12000\nok after 3 attempts' ] || fail "the static C example"; ok
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_PATH

# The command.
[ "$("$scratch/usr/bin/recuo" --version)" = "recuo $version" ] || fail "recuo --version"; ok
grep -q 'start interval  667 ms' <<<"$("$scratch/usr/bin/recuo" plan --requests 600 \
    --allowance 120/min --target 90/min --latency 2s)" || fail "recuo plan"; ok
[ -f "$scratch/usr/share/man/man1/recuo.1.gz" ] || fail "no recuo(1)"; ok

# The PHP package: the module in the extension directory of its phpapi, loaded by php -n
# (no ini of the machine's), the library required from the include_path as on Debian.
php_deb=$(deb_of "php$php_mm-recuo")
api=$(dpkg-deb -f "$php_deb" Depends | grep -o 'phpapi-[0-9]*' | cut -d- -f2)
[ -n "$api" ] && [ "$api" = "$(php-config --phpapi)" ] || fail "php package: phpapi-$api"; ok
extdir=$scratch/usr/lib/php/$api
[ -f "$extdir/recuo.so" ] || fail "no $extdir/recuo.so"; ok
ini=$scratch/etc/php/$php_mm/mods-available/recuo.ini
grep -qx 'extension=recuo' "$ini" || fail "recuo.ini"; ok
php_run() { php -n -d "extension_dir=$extdir" -d extension=recuo \
    -d "include_path=.:$scratch/usr/share/php" "$@"; }
out=$(php_run -r '
    require "Recuo/autoload.php";
    echo Recuo\retryDelayMs("12", 0), "\n";
    echo function_exists("Recuo\\buscarComRetry") ? "buscarComRetry" : "-", "\n";
    echo class_exists("Recuo\\Guzzle\\RetryMiddleware") ? "Guzzle" : "-", "\n";
    echo (new ReflectionFunction("Recuo\\buscarComRetry"))->getFileName(), "\n";')
[ "$out" = $'12000\nbuscarComRetry\nGuzzle\n'"$scratch/usr/share/php/Recuo/src/functions.php" ] ||
    fail "php: $out"; ok
# The README's PHP example, against the unpacked module.
awk '/^```php$/ { inside = 1; n++; next } /^```$/ { inside = 0 } inside && n == 1' \
    "$root/README.md" > "$work/example.php"
[ "$(php_run "$work/example.php")" = $'12000\nok' ] || fail "the PHP example printed: $(php_run "$work/example.php")"; ok

# The maintainer scripts, against the scratch root: a phpenmod and a phpdismod that record
# their arguments come first on PATH; DPKG_ROOT (set by dpkg for a --root install) makes the
# scripts look for php-common's helper in the scratch root. Once without the helper (plain
# phpenmod), once with a helper of the test's own recording php_invoke's arguments.
ctl=$work/control-php
dpkg-deb -e "$php_deb" "$ctl"
grep -qx "/etc/php/$php_mm/mods-available/recuo.ini" "$ctl/conffiles" || fail "the ini is no conffile"; ok
fake=$work/fake-bin
mkdir -p "$fake"
for tool in phpenmod phpdismod; do
    printf '#!/bin/sh\necho "%s $*" >> "%s"\n' "$tool" "$work/calls" > "$fake/$tool"
    chmod 755 "$fake/$tool"
done
maint() { DPKG_ROOT=$scratch PATH=$fake:$PATH DPKG_MAINTSCRIPT_NAME=$1 \
    DPKG_MAINTSCRIPT_PACKAGE=$(dpkg-deb -f "$php_deb" Package) sh "$ctl/$1" "${@:2}"; }
: > "$work/calls"
maint postinst configure
maint prerm upgrade "$version-1"
maint prerm remove
maint postrm remove
maint postrm purge
[ "$(cat "$work/calls")" = "phpenmod -v $php_mm -s ALL recuo
phpdismod -v $php_mm -s ALL recuo
phpdismod -p -f -v $php_mm -s ALL recuo" ] || fail "maintainer scripts called: $(cat "$work/calls")"; ok
mkdir -p "$scratch/usr/lib/php"
cat > "$scratch/usr/lib/php/php-maintscript-helper" <<EOF
php_invoke() { echo "php_invoke \$* (\$DPKG_MAINTSCRIPT_NAME \$1)" >> "$work/calls"; }
EOF
: > "$work/calls"
maint postinst configure
maint prerm remove
maint postrm purge
[ "$(cut -d' ' -f1-5 "$work/calls")" = "php_invoke enmod $php_mm ALL recuo
php_invoke dismod $php_mm ALL recuo
php_invoke dismod $php_mm ALL recuo" ] || fail "maintainer scripts called: $(cat "$work/calls")"; ok
echo "test-dist-deb: $passed passed, 0 failed ($# packages; lintian clean; maintainer scripts run against a scratch root with a fake phpenmod)"
