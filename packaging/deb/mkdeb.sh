#!/usr/bin/env bash
# mkdeb.sh TEMPLATE PACKAGE TREE OUTDIR — one Debian binary package from a staged tree, with
# dpkg-deb alone (no debhelper): the files of TREE (as make install-* staged them) get the doc
# directory every package needs (copyright in DEP-5 form, changelog.Debian.gz), their ELF
# files stripped as dh_strip strips them, and DEBIAN/ built from packaging/deb/TEMPLATE.*:
# control (TEMPLATE.control.in; Depends from dpkg-shlibdeps, Installed-Size counted as
# dpkg-gencontrol counts), md5sums, conffiles (whatever is under /etc), and the optional
# TEMPLATE.{shlibs.in,triggers,postinst.in,prerm.in,postrm.in,lintian-overrides}
# (lintian-overrides.in holds the overrides of every package). Writes
# OUTDIR/PACKAGE_VERSION_ARCH.deb. mk/deb.mk calls it, and exports what the templates' @NAME@s
# stand for: VERSION DEB_VERSION ARCH MAINTAINER LIBPKG SONAME_VERSION PHP_VERSION PHP_API,
# and SOURCE_DATE_EPOCH (every date and mtime).
set -euo pipefail
template=${1:?usage: mkdeb.sh TEMPLATE PACKAGE TREE OUTDIR}
package=${2:?}
tree=${3:?}
outdir=${4:?}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
: "${VERSION:?}" "${DEB_VERSION:?}" "${ARCH:?}" "${MAINTAINER:?}" "${SOURCE_DATE_EPOCH:?}"

# @NAME@ → the value of $NAME, for every name the templates use.
subst() {
    sed -e "s|@VERSION@|$VERSION|g" -e "s|@DEB_VERSION@|$DEB_VERSION|g" -e "s|@ARCH@|$ARCH|g" \
        -e "s|@MAINTAINER@|$MAINTAINER|g" -e "s|@LIBPKG@|${LIBPKG:-}|g" \
        -e "s|@SONAME_VERSION@|${SONAME_VERSION:-}|g" -e "s|@PHP_VERSION@|${PHP_VERSION:-}|g" \
        -e "s|@PHP_API@|${PHP_API:-}|g" -e "s|@DATE@|${DATE:-}|g" \
        -e "s|@DEPENDS@|${DEPENDS:-}|g" -e "s|@INSTALLED_SIZE@|${INSTALLED_SIZE:-}|g" "$@"
}

# The doc directory: the copyright file (the MIT text in full, as DEP-5's stand-alone License
# paragraph; Apache-2.0 is in /usr/share/common-licenses) and the Debian changelog.
doc=$tree/usr/share/doc/$package
install -d "$doc"
{
    subst "$here/copyright.in"
    printf '\nLicense: MIT\n'
    sed -e 's/^$/./' -e 's/^/ /' "$root/LICENSE-MIT"
} > "$doc/copyright"
DATE=$(LC_ALL=C date -u -R -d "@$SOURCE_DATE_EPOCH")
subst "$here/changelog.in" | gzip -9n > "$doc/changelog.Debian.gz"
# lintian's overrides: those of every package (lintian-overrides.in), then the template's own.
install -d "$tree/usr/share/lintian/overrides"
{
    cat "$here/lintian-overrides.in"
    [ ! -f "$here/$template.lintian-overrides" ] || cat "$here/$template.lintian-overrides"
} | sed -e "s|@PACKAGE@|$package|g" > "$tree/usr/share/lintian/overrides/$package"

# Stripped as dh_strip strips: shared objects to their dynamic symbols, programs of their
# symbol tables, static archives of their debug sections. The ELF files are listed for
# dpkg-shlibdeps too.
elves=()
while IFS= read -r -d '' f; do
    case $f in
        *.a) strip --strip-debug --remove-section=.comment --remove-section=.note \
                 --enable-deterministic-archives "$f" ;;
        *)
            [ "$(od -An -tx1 -N4 "$f" | tr -d ' \n')" = 7f454c46 ] || continue   # \177ELF
            # (By name: a program is an ELF shared object too, when it is position-independent.)
            case ${f##*/} in
                *.so | *.so.[0-9]*)
                    strip --remove-section=.comment --remove-section=.note --strip-unneeded "$f"
                    chmod 644 "$f"   # a library is not run: policy 10.9
                    ;;
                *) strip --remove-section=.comment --remove-section=.note "$f" ;;
            esac
            elves+=("$f")
            ;;
    esac
done < <(find "$tree" -type f ! -path "$tree/DEBIAN/*" -print0 | sort -z)

# Depends: what the ELF files need, as dpkg-shlibdeps says it (it wants a debian/control to
# run from: a throw-away one), else the C library at the version this machine has.
DEPENDS=
if [ ${#elves[@]} -gt 0 ]; then
    if command -v dpkg-shlibdeps >/dev/null; then
        scratch=$(mktemp -d)
        mkdir -p "$scratch/debian"
        printf 'Source: recuo\n\nPackage: %s\nArchitecture: any\n' "$package" > "$scratch/debian/control"
        DEPENDS=$(cd "$scratch" && dpkg-shlibdeps -O -S"$tree" "${elves[@]}" 2>/dev/null |
            sed -n 's/^shlibs:Depends=//p')
        rm -rf "$scratch"
    fi
    if [ -z "$DEPENDS" ]; then
        glibc=$(ldd --version | sed -n '1s/.* \([0-9][0-9.]*\)$/\1/p')
        DEPENDS="libc6 (>= $glibc), libgcc-s1"
    fi
fi

# Reproducible: modes as install(1) gives them, every mtime the release's.
find "$tree" -type d -exec chmod 755 {} +
find "$tree" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

# DEBIAN/: control last, once Installed-Size is known (in KiB, as dpkg-gencontrol counts it:
# each file or link rounded up to 1 KiB, 1 per directory).
rm -rf "$tree/DEBIAN" && install -d "$tree/DEBIAN"
INSTALLED_SIZE=$(cd "$tree" && find . -mindepth 1 ! -path './DEBIAN' ! -path './DEBIAN/*' -printf '%y %s\n' |
    awk '$1 == "d" { n += 1; next } { n += int(($2 + 1023) / 1024) } END { print n + 0 }')
subst "$here/$template.control.in" > "$tree/DEBIAN/control"
if [ -z "$DEPENDS" ]; then sed -i -e '/^Depends: *$/d' -e 's/^\(Depends: .*\), *$/\1/' "$tree/DEBIAN/control"; fi
(cd "$tree" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z | xargs -0r md5sum) > "$tree/DEBIAN/md5sums"
if [ -d "$tree/etc" ]; then
    (cd "$tree" && find etc -type f -printf '/%p\n' | sort) > "$tree/DEBIAN/conffiles"
fi
# A library package: its shlibs, and a symbols file listing what each library exports (every
# symbol at this version: right for the first release of a SONAME, and never too lax after).
if [ -f "$here/$template.shlibs.in" ]; then
    subst "$here/$template.shlibs.in" > "$tree/DEBIAN/shlibs"
    for f in "${elves[@]}"; do
        soname=$(readelf -d "$f" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
        [ -n "$soname" ] || continue
        printf '%s %s #MINVER#\n* Build-Depends-Package: %s-dev\n' "$soname" "$package" "${package%%[0-9]*}"
        nm -D --defined-only "$f" | awk -v v="$VERSION" '{ printf " %s@Base %s\n", $3, v }' | sort
    done > "$tree/DEBIAN/symbols"
fi
[ ! -f "$here/$template.triggers" ] || install -m 644 "$here/$template.triggers" "$tree/DEBIAN/triggers"
for script in postinst prerm postrm; do
    if [ -f "$here/$template.$script.in" ]; then
        subst "$here/$template.$script.in" > "$tree/DEBIAN/$script"
        chmod 755 "$tree/DEBIAN/$script"
    fi
done
chmod 644 "$tree"/DEBIAN/control "$tree"/DEBIAN/md5sums
for f in conffiles shlibs symbols triggers; do [ ! -f "$tree/DEBIAN/$f" ] || chmod 644 "$tree/DEBIAN/$f"; done
find "$tree/DEBIAN" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

deb=$outdir/${package}_${DEB_VERSION}_${ARCH}.deb
dpkg-deb --root-owner-group -Zxz --build "$tree" "$deb" >/dev/null
echo "dist-deb: $deb ($(stat -c %s "$deb") bytes)"
