#!/usr/bin/env bash
# Puts the toolchain that builds recuo's core as WebAssembly in target/wasm-toolchain/, and
# prints that folder. rustup's toolchain here has no wasm32 standard library (and none can be
# downloaded), so this takes Debian's: rustc-web 1.96 with its standard library's sources
# (built with -Zbuild-std), lld's wasm-ld, and binaryen's wasm-opt (which makes the module
# smaller). The packages are unpacked into a private folder
# with dpkg-deb -x, never installed: they would put a second rustc and cargo in /usr/bin.
# Safe to run again: it prints only the folder when the toolchain is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=1.96
DIR=$PWD/target/wasm-toolchain
PACKAGES=(rustc-web "libstd-rust-web-$VERSION" libstd-rust-web-dev rust-web-src libllvm22 lld-22 binaryen)
STAMP=$DIR/.unpacked-$VERSION-binaryen

if [ ! -f "$STAMP" ]; then
  echo "wasm-toolchain: fetching ${PACKAGES[*]} (Debian) into $DIR" >&2
  rm -rf "$DIR"
  mkdir -p "$DIR/debs" "$DIR/root"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  # apt-get download runs as _apt where it can: let it write the folder.
  chmod 0777 "$DIR/debs"
  if ! (cd "$DIR/debs" && apt-get download -qq "${PACKAGES[@]}" 2>/dev/null); then
    $SUDO apt-get update -qq
    (cd "$DIR/debs" && apt-get download -qq "${PACKAGES[@]}")
  fi
  for deb in "$DIR"/debs/*.deb; do
    dpkg-deb -x "$deb" "$DIR/root"
  done
  rm -rf "$DIR/debs"
  touch "$STAMP"
fi
echo "$DIR/root/usr"
