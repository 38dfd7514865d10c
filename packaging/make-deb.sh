#!/usr/bin/env bash
# Builds numapin's Debian package from a build directory.
#
#   packaging/make-deb.sh --build DIR --version V --out FILE.deb
#
# DIR holds numapin and libnumapin.so (make all).  The package installs
#   /usr/bin/numapin
#   /usr/lib/MULTIARCH/numapin/libnumapin.so   (java -agentpath:...)
#   /usr/share/man/man1/numapin.1.gz, /usr/share/man/man7/numapin-agent.7.gz
#   /usr/share/doc/numapin/                    (README, docs, copyright)
# Binaries are stripped of debugging symbols; Depends comes from
# dpkg-shlibdeps (the libraries the binaries really link).  Called by
# `make deb` (mk/package.mk).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root_dir=$(cd "$here/.." && pwd)
build= version= out=
while [ $# -gt 0 ]; do
    case "$1" in
        --build) build=$2; shift 2 ;;
        --version) version=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        *) echo "make-deb: unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -n "$build" ] && [ -n "$version" ] && [ -n "$out" ] || {
    echo "usage: make-deb.sh --build DIR --version V --out FILE.deb" >&2; exit 2; }
for f in "$build/numapin" "$build/libnumapin.so"; do
    [ -f "$f" ] || { echo "make-deb: no $f (run make first)" >&2; exit 2; }
done

arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
stage=$(mktemp -d "${TMPDIR:-/tmp}/numapin-deb.XXXXXX")
trap 'rm -rf "$stage"' EXIT
pkg=$stage/root
doc=$pkg/usr/share/doc/numapin

install -D -m 0755 "$build/numapin" "$pkg/usr/bin/numapin"
install -D -m 0644 "$build/libnumapin.so" "$pkg/usr/lib/$multiarch/numapin/libnumapin.so"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$pkg/usr/bin/numapin" \
    "$pkg/usr/lib/$multiarch/numapin/libnumapin.so"
install -D -m 0644 "$root_dir/man/numapin.1" "$pkg/usr/share/man/man1/numapin.1"
install -D -m 0644 "$root_dir/man/numapin-agent.7" "$pkg/usr/share/man/man7/numapin-agent.7"
gzip -9n "$pkg/usr/share/man/man1/numapin.1" "$pkg/usr/share/man/man7/numapin-agent.7"
install -D -m 0644 "$root_dir/README.md" "$doc/README.md"
for d in options logging report check placement lifecycle security view jfr; do
    install -D -m 0644 "$root_dir/docs/$d.md" "$doc/docs/$d.md"
done
install -D -m 0644 "$root_dir/docs/pictures/xeon-6972p-snc3-3groups.svg" \
    "$doc/docs/pictures/xeon-6972p-snc3-3groups.svg"
install -m 0644 "$here/copyright" "$doc/copyright"
date=$(date -u -R -d "@$(git -C "$root_dir" log -1 --format=%ct 2>/dev/null || date +%s)")
printf 'numapin (%s) unstable; urgency=medium\n\n  * Built from %s.\n\n -- numapin developers <numapin@localhost>  %s\n' \
    "$version" "$(git -C "$root_dir" rev-parse --short HEAD 2>/dev/null || echo 'a source tree')" "$date" \
    | gzip -9n > "$doc/changelog.Debian.gz"

# Depends: what the binaries link, as dpkg-shlibdeps names it (it wants
# a debian/control to read).
mkdir -p "$stage/src/debian"
printf 'Source: numapin\n\nPackage: numapin\nArchitecture: any\n' > "$stage/src/debian/control"
depends=$(cd "$stage/src" && dpkg-shlibdeps -O "$pkg/usr/bin/numapin" \
    "$pkg/usr/lib/$multiarch/numapin/libnumapin.so" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "make-deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

mkdir -p "$pkg/DEBIAN"
cat > "$pkg/DEBIAN/control" <<CONTROL
Package: numapin
Version: $version
Architecture: $arch
Maintainer: numapin developers <numapin@localhost>
Installed-Size: $(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
Depends: $depends
Recommends: hwloc-nox
Suggests: default-jdk-headless
Section: utils
Priority: optional
Description: place JVM threads on NUMA nodes, by name
 numapin is a JVMTI agent (java -agentpath:/usr/lib/$multiarch/numapin/libnumapin.so)
 that maps a JVM's group to a NUMA node and pins the threads whose names
 match its patterns (by default the fork-join pool workers) to CPUs of that
 node, with a memory policy there, from the thread itself at its start.
 Every placement is read back and logged in the JVM's unified-logging
 format; a JSON report can be written at exit.
 .
 The numapin command plans groups for a machine (plan, topo), runs a
 command as several JVM groups (groups), and shows where the threads of a
 running JVM may run and last ran (check; Java names need jcmd, from a JDK).
 It draws the machine and a running JVM with lstopo (--svg; hwloc-nox),
 shows a JVM live (check --watch) and writes a page for a run (report).
CONTROL
mkdir -p "$(dirname "$out")"
dpkg-deb -Zxz --root-owner-group --build "$pkg" "$out" >/dev/null
echo "make-deb: $out"
