#!/usr/bin/env bash
# Fetches include/qemu/qemu-plugin.h of Debian's qemu source package, the
# version of the installed qemu-system-x86 (its binNMU suffix dropped), into
# DIR (default build/qemu-plugin), and prints the header's path. Debian ships
# no qemu-plugin.h in a binary package: the source package has it. Needs
# root the first time (a deb-src line for bookworm, apt-get update); later
# runs reuse the cached header.
#
#   bash tests/qemu/plugin/fetch-header.sh [DIR]
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
DIR=${1:-$ROOT/build/qemu-plugin}
die() { echo "fetch-header: error: $*" >&2; exit 1; }

ver=$(dpkg-query -W -f='${Version}' qemu-system-x86 2>/dev/null) || true
if [ -z "$ver" ]; then
    bash "$ROOT/scripts/install-deps.sh" qemu || die "cannot install qemu"
    ver=$(dpkg-query -W -f='${Version}' qemu-system-x86) || die "qemu-system-x86 is not installed"
fi
srcver=$(dpkg-query -W -f='${source:Version}' qemu-system-x86)
HDR=$DIR/${srcver//:/_}/qemu-plugin.h
if [ -s "$HDR" ]; then
    echo "$HDR"
    exit 0
fi

mkdir -p "$(dirname "$HDR")"
SRC=/etc/apt/sources.list.d/numapin-deb-src.sources
if ! apt-get source --download-only --print-uris "qemu=$srcver" >/dev/null 2>&1; then
    [ "$(id -u)" -eq 0 ] || die "no deb-src line knows qemu $srcver, and adding one needs root"
    cat >"$SRC.tmp" <<'SOURCES'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
    mv "$SRC.tmp" "$SRC"
    apt-get update -q >"$DIR/apt-update.log" 2>&1 || { cat "$DIR/apt-update.log" >&2; die "apt-get update failed"; }
fi
command -v xz >/dev/null || bash "$ROOT/scripts/install-deps.sh" xz-utils || die "cannot install xz-utils"

work=$(mktemp -d "$DIR/src.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get source --download-only "qemu=$srcver" >"$work/download.log" 2>&1) ||
    { cat "$work/download.log" >&2; die "apt-get source --download-only qemu=$srcver failed"; }
orig=$(find "$work" -maxdepth 1 -name "qemu_*.orig.tar.*" | head -1)
[ -n "$orig" ] || die "no upstream tarball in the source package"
# the upstream header, then Debian's patches of it if it has any
tar -xf "$orig" -C "$work" --wildcards '*/include/qemu/qemu-plugin.h' ||
    die "no include/qemu/qemu-plugin.h in $(basename "$orig")"
h=$(find "$work" -path '*/include/qemu/qemu-plugin.h' | head -1)
deb=$(find "$work" -maxdepth 1 -name "qemu_*.debian.tar.*" | head -1)
if [ -n "$deb" ] && tar -tf "$deb" | grep -q '^debian/patches/'; then
    mkdir -p "$work/debian"
    tar -xf "$deb" -C "$work"
    for p in $(grep -v '^#' "$work/debian/patches/series" 2>/dev/null || true); do
        if grep -q 'qemu-plugin\.h' "$work/debian/patches/$p"; then
            die "Debian's patch $p changes qemu-plugin.h: apply it by hand"
        fi
    done
fi
cp "$h" "$HDR.tmp"
mv "$HDR.tmp" "$HDR"
echo "$HDR"
