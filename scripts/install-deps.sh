#!/usr/bin/env bash
# Installs the Debian packages numapin's build and tests need: the one place
# that knows them and calls apt-get.
#
#   scripts/install-deps.sh SET|PACKAGE...
#
# SET is one of the named sets below; anything else is a package name.
# Packages already installed are skipped.  As root the missing ones are
# installed (apt-get update first, once); otherwise the one apt-get command
# to run is printed and the script exits 1.
set -euo pipefail

declare -A sets=(
    # build.sh: building, the unit and JVM tests, the package checks, `make bench`.
    # libjansson-dev: the CLI reads reports (numapin report); hwloc-nox: its
    # lstopo-no-graphics draws the machine (--svg, the unit tests).
    [build]="gcc make pkg-config libhwloc-dev libnuma-dev libjansson-dev hwloc-nox check junit5
             numactl libhdrhistogram-java jq dpkg-dev file man-db groff-base likwid"
    # The view tests (tests/jvm ViewTest, in make test-java): a real browser
    # loads the page of a run, a real terminal shows the live view; python3
    # (its json, strict UTF-8) and libxml2-utils (xmllint) read every output
    # as its format's strict reader would (HostileNamesTest).
    [view]="chromium tmux hwloc-nox python3 libxml2-utils"
    # The sanitizer and fuzzing builds (mk/hardening.mk).
    [fuzz]="clang libclang-rt-14-dev"
    # The multi-node tests under QEMU (tests/qemu/run.sh).
    [qemu]="qemu-system-x86 cpio xz-utils hwloc-nox libhdrhistogram-java numactl runc jq golang-github-docker-docker-dev"
    # Real servers under numapin, loaded by wrk (mk/servers.mk: make
    # test-servers, and make bench): embedded Jetty 9, Tomcat 10 started by
    # catalina.sh, Netty 4.1; curl, ss and pgrep drive them.
    [servers]="libjetty9-java libservlet-api-java tomcat10-common libtomcat10-java libnetty-java
               wrk curl iproute2 procps"
    # numapin in containers made by real OCI runtimes (mk/containers.mk:
    # make test-containers): runc as containerd drives it, podman (with
    # runc; crun, podman's default, comes with it), the default seccomp
    # profiles of podman (containers-common, podman's dependency) and of
    # Docker (golang-github-docker-docker-dev ships moby's
    # profiles/seccomp/default.json); jq writes the bundles' config.json.
    [containers]="runc podman crun golang-github-docker-docker-dev jq libhdrhistogram-java"
    # A JDK 17 with jvmti.h, where none is installed.
    [jdk]="openjdk-17-jdk-headless"
)

[ $# -gt 0 ] || { sed -n '2,11s/^# \{0,1\}//p' "$0" >&2; exit 2; }

wanted=()
for a in "$@"; do
    if [ -n "${sets[$a]+x}" ]; then
        # shellcheck disable=SC2206
        wanted+=(${sets[$a]})
    else
        wanted+=("$a")
    fi
done

missing=()
for p in "${wanted[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [ "$status" = "install ok installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "numapin: missing Debian packages; run as root:" >&2
    echo "  apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 1
fi
echo "numapin: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! apt-get update -qq >"$log" 2>&1 ||
   ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >>"$log" 2>&1; then
    tail -30 "$log" >&2
    echo "numapin: apt-get install ${missing[*]} failed" >&2
    exit 1
fi
