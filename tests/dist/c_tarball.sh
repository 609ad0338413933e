#!/usr/bin/env bash
# c_tarball.sh ROOT TARBALL — the C tarball of `make dist-c` as its user meets it, on a machine
# with a C compiler and no Rust: untarred in a temporary folder, the README's C example built
# with nothing but `pkg-config --cflags --libs recuo` (PKG_CONFIG_PATH pointing at the folder's
# lib/pkgconfig, whose recuo.pc is relocatable), run with LD_LIBRARY_PATH as a user of an
# untarred library would, and with an rpath from pkg-config's libdir; linked statically from
# lib/librecuo.a; the curl glue compiled; bin/recuo --version and bin/recuo plan run.
set -euo pipefail
root=$(cd "${1:?usage: c_tarball.sh ROOT TARBALL}" && pwd)
tarball=${2:?usage: c_tarball.sh ROOT TARBALL}
[ -f "$tarball" ] || { echo "c_tarball: no $tarball: run make dist-c first" >&2; exit 1; }
passed=0
fail() { echo "c_tarball: $*" >&2; exit 1; }
ok() { passed=$((passed + 1)); }

# No Rust: the PATH a machine without rustup has. cc, pkg-config, tar stay.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
! command -v cargo >/dev/null && ! command -v rustc >/dev/null || fail "cargo or rustc is on PATH"
ok
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR LD_LIBRARY_PATH

version=$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' "$root/Cargo.toml" | head -n 1)
major=${version%%.*}; rest=${version#*.}; minor=${rest%%.*}
if [ "$major" = 0 ]; then soname=librecuo.so.$major.$minor; else soname=librecuo.so.$major; fi
realname=librecuo.so.${version%%[-+]*}
name=$(basename "$tarball" .tar.gz)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Somewhere else than where it was built: the relocatable .pc must not care where it lands.
mkdir -p "$tmp/untarred" "$tmp/work"
work=$tmp/work

# One top folder, owned by root in the archive, named as the file is.
tops=$(tar -tzf "$tarball" | cut -d/ -f1 | sort -u)
[ "$tops" = "$name" ] || fail "top folders: $tops"; ok
owners=$(tar -tzvf "$tarball" | awk '{print $2}' | sort -u)
[ "$owners" = 0/0 ] || fail "owners in the archive: $owners"; ok
tar -xzf "$tarball" -C "$tmp/untarred"
dir="$tmp/untarred/$name"

for f in lib/$realname lib/librecuo.a include/recuo.h include/recuo_curl.h lib/pkgconfig/recuo.pc \
    bin/recuo share/doc/recuo/c.md share/doc/recuo/README.md LICENSE-MIT LICENSE-APACHE; do
    [ -f "$dir/$f" ] || fail "no $f"
done
ok
[ "$(readlink "$dir/lib/$soname")" = "$realname" ] || fail "lib/$soname is not a link to $realname"; ok
[ "$(readlink "$dir/lib/librecuo.so")" = "$soname" ] || fail "lib/librecuo.so is not a link to $soname"; ok
grep -q "(SONAME).*\[$soname\]" <<<"$(readelf -d "$dir/lib/$realname")" || fail "SONAME is not $soname"; ok
# Stripped: no symbol table, no debug sections.
for f in "lib/$realname" bin/recuo; do
    ! grep -qE '\.symtab|\.debug_' <<<"$(readelf -S "$dir/$f")" || fail "$f is not stripped"
done
ok
cmp -s "$dir/include/recuo.h" "$root/include/recuo.h" || fail "include/recuo.h differs from the source's"; ok

# The pkg-config file: relocatable, the version, no trace of the machine that built it.
pc=$dir/lib/pkgconfig/recuo.pc
grep -qx 'prefix=${pcfiledir}/../..' "$pc" || fail "recuo.pc: prefix is $(grep '^prefix=' "$pc")"; ok
! grep -qF "$root" "$pc" || fail "recuo.pc names the build tree"; ok
export PKG_CONFIG_PATH=$dir/lib/pkgconfig
[ "$(pkg-config --modversion recuo)" = "$version" ] || fail "pkg-config --modversion"; ok
libdir=$(pkg-config --variable=libdir recuo)
[ "$(cd "$libdir" && pwd -P)" = "$(cd "$dir/lib" && pwd -P)" ] || fail "libdir is $libdir"; ok

# The README's C example, built with pkg-config alone, run with LD_LIBRARY_PATH at the
# folder's lib/.
awk '/^```c$/ { inside = 1; n++; next } /^```$/ { inside = 0 } inside && n == 1' \
    "$root/README.md" > "$work/example.c"
grep -q 'int main' "$work/example.c" || fail "README: no C example found"; ok
expected=$'12000\nok after 3 attempts'
# shellcheck disable=SC2046 # pkg-config's words are separate flags
cc -std=c11 -Wall -Wextra -Werror "$work/example.c" -o "$work/example" $(pkg-config --cflags --libs recuo)
grep -q "NEEDED.*\[$soname\]" <<<"$(readelf -d "$work/example")" || fail "the example needs no $soname"; ok
out=$(LD_LIBRARY_PATH=$libdir "$work/example")
[ "$out" = "$expected" ] || fail "the example printed: $out"; ok
grep -qF "$soname => $libdir/$soname" <<<"$(LD_LIBRARY_PATH=$libdir ldd "$work/example")" ||
    fail "the example did not load the tarball's library"; ok
# Or with the folder's lib/ recorded in the program (an rpath): no environment at run time.
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror "$work/example.c" -o "$work/example_rpath" \
    $(pkg-config --cflags --libs recuo) -Wl,-rpath,"$libdir"
[ "$("$work/example_rpath")" = "$expected" ] || fail "the example with an rpath"; ok

# Statically, from the tarball's archive: the program needs no librecuo at run time.
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror "$work/example.c" -o "$work/example_static" \
    $(pkg-config --cflags recuo) "$libdir/librecuo.a" -lpthread -ldl -lm
[ "$("$work/example_static")" = "$expected" ] || fail "the static example"; ok
! grep -q 'NEEDED.*librecuo' <<<"$(readelf -d "$work/example_static")" || fail "static example needs librecuo"; ok

# The curl glue compiles from the tarball's headers, with libcurl's own pkg-config file.
if pkg-config --exists libcurl; then
    # shellcheck disable=SC2046
    cc -std=c11 -Wall -Wextra -Werror -pedantic -c "$root/examples/c/curl_multi.c" \
        -o "$work/curl_multi.o" $(pkg-config --cflags recuo libcurl)
    ok
fi

# The command: no library of its own to find, --version and a plan.
! grep -q 'not found' <<<"$(ldd "$dir/bin/recuo")" || fail "bin/recuo misses a library"; ok
[ "$("$dir/bin/recuo" --version)" = "recuo $version" ] || fail "bin/recuo --version: $("$dir/bin/recuo" --version)"; ok
plan=$("$dir/bin/recuo" plan --requests 600 --allowance 120/min --target 90/min --latency 2s)
grep -q 'start interval  667 ms' <<<"$plan" || fail "bin/recuo plan printed: $plan"; ok
echo "test-dist-c: $passed passed, 0 failed ($(basename "$tarball"), $(stat -c %s "$tarball") bytes)"
