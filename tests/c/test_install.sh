#!/usr/bin/env bash
# test_install.sh ROOT — `make install` as a packager runs it, then the README's C example as
# a user builds it: `make install DESTDIR=<tmp> PREFIX=/usr`; the example compiled with
# nothing but `pkg-config --cflags --libs recuo` (PKG_CONFIG_SYSROOT_DIR and PKG_CONFIG_PATH
# pointing into <tmp>) and run with LD_LIBRARY_PATH at the installed library; the SONAME and
# the links checked with readelf; the static library and the curl glue header compiled
# against; `make uninstall DESTDIR=<tmp>` leaves the tree empty.
set -euo pipefail
# A command's output is read whole before grep looks at it (`cmd | grep -q` would close the
# pipe at the first match, and pipefail would count cmd's SIGPIPE as a failure).
root=$(cd "${1:?usage: test_install.sh ROOT}" && pwd)
tmp=$(mktemp -d)
# The tree, and the install manifest make keeps for it in target/install/ (after a failure).
trap 'rm -rf "$tmp"; rm -f "$root"/target/install/c*"${tmp##*/}"*.txt' EXIT
stage=$tmp/stage
work=$tmp/work
mkdir -p "$stage" "$work"
passed=0
fail() { echo "test_install: $*" >&2; exit 1; }
ok() { passed=$((passed + 1)); }

version=$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' "$root/Cargo.toml" | head -n 1)
major=${version%%.*}; rest=${version#*.}; minor=${rest%%.*}
if [ "$major" = 0 ]; then soname=librecuo.so.$major.$minor; else soname=librecuo.so.$major; fi
realname=librecuo.so.${version%%[-+]*}

make -s -C "$root" --no-print-directory install DESTDIR="$stage" PREFIX=/usr >/dev/null
lib=$stage/usr/lib

# The files and links, as a distribution lays them out.
[ -f "$lib/$realname" ] && [ ! -L "$lib/$realname" ] || fail "no $realname"; ok
[ "$(readlink "$lib/$soname")" = "$realname" ] || fail "$soname is not a link to $realname"; ok
[ "$(readlink "$lib/librecuo.so")" = "$soname" ] || fail "librecuo.so is not a link to $soname"; ok
[ -f "$lib/librecuo.a" ] || fail "no librecuo.a"; ok
[ -f "$stage/usr/include/recuo.h" ] && [ -f "$stage/usr/include/recuo_curl.h" ] || fail "headers"; ok
cmp -s "$stage/usr/include/recuo.h" "$root/include/recuo.h" || fail "installed recuo.h differs"; ok

# The SONAME, and no libcurl in the library (the glue is a header).
grep -q "(SONAME).*\[$soname\]" <<<"$(readelf -d "$lib/$realname")" || fail "SONAME is not $soname"; ok
! grep -q 'NEEDED.*libcurl' <<<"$(readelf -d "$lib/$realname")" || fail "librecuo needs libcurl"; ok

# The pkg-config file says the real places and version.
pc=$lib/pkgconfig/recuo.pc
grep -qx 'prefix=/usr' "$pc" || fail "recuo.pc: prefix"; ok
export PKG_CONFIG_SYSROOT_DIR=$stage PKG_CONFIG_PATH=$lib/pkgconfig
[ "$(pkg-config --modversion recuo)" = "$version" ] || fail "pkg-config --modversion"; ok
# (pkgconf puts the sysroot before a variable too, pkg-config does not.)
case $(pkg-config --variable=libdir recuo) in /usr/lib | "$stage/usr/lib") ok ;; *) fail libdir ;; esac
case $(pkg-config --variable=includedir recuo) in
    /usr/include | "$stage/usr/include") ok ;; *) fail includedir ;; esac
[ "$(pkg-config --cflags --libs recuo | xargs)" = "-I$stage/usr/include -L$stage/usr/lib -lrecuo" ] ||
    fail "pkg-config --cflags --libs recuo: $(pkg-config --cflags --libs recuo)"; ok
grep -q '^URL: file:///usr/share/doc/recuo/c.md$' "$pc" || fail "recuo.pc: URL"; ok
[ -f "$stage/usr/share/doc/recuo/c.md" ] || fail "the URL's guide is not installed"; ok
! grep -q '@[a-z]*@\|example.invalid' "$pc" || fail "recuo.pc keeps a placeholder"; ok

# The README's C example, built as docs/c.md says: pkg-config and nothing else.
awk '/^```c$/ { inside = 1; n++; next } /^```$/ { inside = 0 } inside && n == 1' \
    "$root/README.md" > "$work/example.c"
grep -q 'int main' "$work/example.c" || fail "README: no C example found"; ok
# shellcheck disable=SC2046 # pkg-config's words are separate flags
cc -std=c11 -Wall -Wextra -Werror "$work/example.c" -o "$work/example" \
    $(pkg-config --cflags --libs recuo)
grep -q "NEEDED.*\[$soname\]" <<<"$(readelf -d "$work/example")" || fail "the example needs no $soname"; ok
out=$(LD_LIBRARY_PATH=$lib "$work/example")
[ "$out" = $'12000\nok after 3 attempts' ] || fail "the example printed: $out"; ok
grep -q "$soname => $lib/$soname" <<<"$(LD_LIBRARY_PATH=$lib ldd "$work/example")" ||
    fail "the example did not load the installed library"; ok

# Statically, from the installed archive.
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror "$work/example.c" -o "$work/example_static" \
    $(pkg-config --cflags recuo) "$lib/librecuo.a" -lpthread -ldl -lm
[ "$("$work/example_static")" = $'12000\nok after 3 attempts' ] || fail "static example"; ok
! grep -q 'NEEDED.*librecuo' <<<"$(readelf -d "$work/example_static")" || fail "static example needs librecuo"; ok

# The curl glue compiles from the installed headers, with libcurl's own pkg-config file.
if pkg-config --exists libcurl; then
    # shellcheck disable=SC2046
    cc -std=c11 -Wall -Wextra -Werror -pedantic -c "$root/examples/c/curl_multi.c" \
        -o "$work/curl_multi.o" $(pkg-config --cflags recuo libcurl)
    ok
fi

# make uninstall removes exactly what was installed (its manifest, whatever the PREFIX was):
# the tree is empty again, directories included.
make -s -C "$root" --no-print-directory uninstall DESTDIR="$stage" >/dev/null
left=$(find "$stage" -mindepth 1 ! -type d)
[ -z "$left" ] || fail "make uninstall left: $left"; ok
# The directories C's install created are gone with its files; with C the only part
# installed, nothing is left at all. (An empty directory another part's uninstall leaves is
# reported, and keeps a parent of C's directories.)
for d in usr/include usr/lib/pkgconfig usr/share/doc/recuo; do
    [ ! -e "$stage/$d" ] || fail "make uninstall left the directory /$d"
done
ok
parts=$(make -s -C "$root" --no-print-directory --eval 'test-install-parts: ; @echo $(INSTALL_TARGETS)' test-install-parts)
if [ "$parts" = install-c ]; then
    [ -z "$(find "$stage" -mindepth 1)" ] || fail "make uninstall left: $(find "$stage" -mindepth 1)"
    ok
else
    dirs=$(cd "$stage" && find . -mindepth 1 -type d -empty | sed 's|^\.||' | sort | xargs)
    [ -z "$dirs" ] || echo "test_install: empty directories the other parts' uninstall left: $dirs"
fi
# Without a manifest (another checkout), the same PREFIX names the same files.
mkdir -p "$stage/usr/lib"
touch "$stage/usr/lib/other.so"
make -s -C "$root" --no-print-directory install DESTDIR="$stage" PREFIX=/usr >/dev/null
rm -f "$root"/target/install/c*"${tmp##*/}"*.txt
make -s -C "$root" --no-print-directory uninstall DESTDIR="$stage" PREFIX=/usr >/dev/null
left=$(find "$stage" -mindepth 1 ! -type d)
[ "$left" = "$stage/usr/lib/other.so" ] || fail "uninstall without a manifest left: $left"; ok
echo "test_install: $passed passed, 0 failed"
