#!/usr/bin/env bash
# shellcheck disable=SC2034 # the machine tables are read through ${!name}
# Proves numapin's placement on a real multi-node kernel: boots Debian's
# kernel under QEMU (software emulation) on emulated NUMA machines, runs the
# scenarios of scenarios.sh in the guest under the real agent, and judges
# the results the guest prints on its serial console. See docs/qemu.md.
#
#   bash tests/qemu/run.sh                       the scenarios
#   bash tests/qemu/run.sh --capture-topologies  instead, boots each machine
#       once and writes what hwloc sees there (lstopo-no-graphics --no-io
#       --of xml, in the guest) to tests/golden/topologies/qemu-MACHINE.xml;
#       `make test-unit REGEN=1` then writes the machine's transcripts, which
#       the scenarios compare the guest's own plans with
#
# Environment:
#   NUMAPIN_QEMU_ONLY=a,b   run only these scenarios (names as printed)
#   NUMAPIN_QEMU_JOBS=N     machines booted at once (default: 2 if the host has
#                           2 or more CPUs, else 1)
#   NUMAPIN_AGENT, NUMAPIN_CLI  the agent and tool (default build/libnumapin.so,
#                           build/numapin)
#   NUMAPIN_QEMU_TIMEOUT=S  seconds one machine may run (default 900 for n2, 720 for n3, 1500 for h3,
#                           1200 for a3, 600 for c3)
#   JAVA17_HOME             JDK 17 whose jlink builds the guest's runtime
#   JAVA25_HOME             JDK 25 whose jlink builds a second runtime, for the
#                           machines that run scenarios on it too (n2); default
#                           /usr/lib/jvm/temurin-25-jdk-amd64, skipped when absent
#   NUMAPIN_QEMU_BUILD=DIR  where the caches, the initramfs and the consoles go
#                           (default build/qemu)
#   NUMAPIN_QEMU_EXTEND=FILE  a bash file sourced after the machine tables: it
#                           may change them (MACHINES, NAME_scenarios, ...), add
#                           QEMU arguments to the QEMU_EXTRA array, and define
#                           extend_root DIR, called with the guest's root before
#                           its libraries are gathered (tests/qemu/access.sh,
#                           tierbench/demo-numa.sh)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
B=${NUMAPIN_QEMU_BUILD:-$ROOT/build/qemu}
JDK=${JAVA17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
JDK25=${JAVA25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
AGENT=${NUMAPIN_AGENT:-$ROOT/build/libnumapin.so}
CLI=${NUMAPIN_CLI:-$ROOT/build/numapin}
ONLY=${NUMAPIN_QEMU_ONLY:-}
if [ -z "${NUMAPIN_QEMU_JOBS:-}" ]; then
    if [ "$(nproc)" -ge 2 ]; then NUMAPIN_QEMU_JOBS=2; else NUMAPIN_QEMU_JOBS=1; fi
fi
# modules of the guest's JDK runtime (jdk.unsupported: sun.misc.Unsafe for
# the probe's off-heap buffers; jdk.jcmd and jdk.attach: jcmd, for the late
# attach; jdk.jfr: recordings of numapin's events, and the jfr tool)
JDK_MODULES=java.base,jdk.unsupported,jdk.jcmd,jdk.attach,jdk.jfr

# Machines: name, QEMU topology, memory per node, distances, scenarios, timeout (s).
# a3 and h3, the longest, boot first.
MACHINES="a3 h3 n2 n3 c3"
n2_smp="4,sockets=2,cores=2,threads=1"
n2_nodes="0-1 2-3"
n2_mem_mb=1024
n2_dist="0,1,21"
n2_scenarios="n2-basics n2-preferred n2-bind n2-none n2-interleave n2-two-jvms n2-spawned n2-jvm-scope n2-usenuma n2-cpuset n2-two-pods n2-heap n2-heap-usenuma"
n2_timeout=900
n2_jdk25=1 # its initrd also holds /jdk25: the UseNUMA and heap scenarios run on JDK 25 too
n3_smp="6,sockets=1,cores=6,threads=1"
n3_nodes="0-1 2-3 4-5"
n3_mem_mb=1024
n3_dist="0,1,21 1,2,21 0,2,31"
n3_scenarios="n3-basics n3-default n3-bind n3-groups2 n3-groups6 n3-balancing n3-access-sampled n3-cpu-offline n3-multijvm n3-heap n3-heap-attach n3-java-flags n3-runc n3-runc-auto"
n3_timeout=720
# c3: n3's machine for the JVM in containers made by runc: Docker's default
# seccomp profile, numapin check from the guest's namespaces, TierBench
# pods one per node
c3_smp=$n3_smp
c3_nodes=$n3_nodes
c3_mem_mb=$n3_mem_mb
c3_dist=$n3_dist
c3_scenarios="c3-runc-seccomp c3-runc-statefulset c3-runc-pods-auto"
c3_timeout=600
c3_plans=none
# h3: n3 with 2 GiB a node and a 1 GiB huge page reserved at boot on node 1,
# for the heaps benchmark engineers tune (huge pages, THP, ZGC, Shenandoah)
h3_smp=$n3_smp
h3_nodes=$n3_nodes
h3_mem_mb=2048
h3_dist=$n3_dist
h3_scenarios="h3-large-pages h3-thp h3-collectors"
h3_timeout=1500
h3_jdk25=1
h3_append="hugepagesz=1G hugepages=1:1"
h3_plans=none # its scenarios compare no plan: no captured topology, no transcripts
# a3: n3 under the access-counting plugin (tests/qemu/plugin/access.c):
# every user-space memory access counted by the vCPU's node and the
# memory's, TierBench run as the MultiJVM experiment runs it; the plugin's
# record is judged on the host (tests/qemu/access-table.sh)
a3_smp=$n3_smp
a3_nodes=$n3_nodes
a3_mem_mb=$n3_mem_mb
a3_dist=$n3_dist
a3_scenarios="a3-access-tierbench"
a3_timeout=1200
a3_plans=none
a3_plugin=1   # boots with the plugin
a3_top=0      # the remote pages it lists for each node (0: none)
a3_judge=a3-access-tierbench # the scenario whose record access-table.sh judges
QEMU_EXTRA=()
# shellcheck disable=SC1090 # a file of the caller's
[ -z "${NUMAPIN_QEMU_EXTEND:-}" ] || . "$NUMAPIN_QEMU_EXTEND"

CAPTURE=
case ${1:-} in
    "") ;;
    --capture-topologies) CAPTURE=1 ;;
    *) echo "usage: bash tests/qemu/run.sh [--capture-topologies]" >&2; exit 2 ;;
esac
# What each machine's scenarios compare the guest's plans with: the
# transcripts of the machine's captured topology (tests/unit/test_expected.c).
TOPOLOGIES=$ROOT/tests/golden/topologies
TRANSCRIPTS=$ROOT/tests/golden/expected/machines

START=$(date +%s)
log() { echo "qemu-numa: $*"; }
die() {
    echo "qemu-numa: error: $*" >&2
    echo "qemu-numa: 0 passed, 1 failed"
    exit 1
}

mkdir -p "$B"

# ---- host packages ----------------------------------------------------------

APT_UPDATED=
apt_update() {
    if [ -z "$APT_UPDATED" ]; then
        log "apt-get update"
        apt-get update -q >"$B/apt-update.log" 2>&1 || { cat "$B/apt-update.log"; die "apt-get update failed"; }
        APT_UPDATED=1
    fi
}

need_pkgs() { # need_pkgs SET|PACKAGE... : installs those not installed
    bash "$ROOT/scripts/install-deps.sh" "$@" || die "cannot install $*"
}

# a package's candidate version, updating the lists once if apt knows none
candidate() {
    local v
    v=$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}')
    if [ -z "$v" ] || [ "$v" = "(none)" ]; then
        apt_update
        v=$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}')
    fi
    echo "$v"
}

# unpack a package without installing it: fetch_deb PACKAGE DIR
fetch_deb() {
    local tmp
    tmp=$(mktemp -d "$B/deb.XXXXXX")
    chmod 755 "$tmp"
    (cd "$tmp" && apt-get download "$1" >"$tmp/download.log" 2>&1) || {
        apt_update
        (cd "$tmp" && apt-get download "$1" >"$tmp/download.log" 2>&1) || {
            cat "$tmp/download.log"
            rm -rf "$tmp"
            die "apt-get download $1 failed"
        }
    }
    rm -rf "$2"
    mkdir -p "$2"
    dpkg -x "$tmp"/*.deb "$2"
    rm -rf "$tmp"
}

need_pkgs qemu
# runc, for the guest's containers (Debian's runc package, in the qemu set)
RUNC=$(command -v runc) || die "no runc after installing the qemu set"
# Docker's default seccomp profile (golang-github-docker-docker-dev, in the
# qemu set), made into config.json's linux.seccomp here with jq
DOCKER_PROFILE=/usr/share/gocode/src/github.com/docker/docker/profiles/seccomp/default.json
[ -f "$DOCKER_PROFILE" ] || die "no $DOCKER_PROFILE after installing the qemu set"

# ---- kernel: Debian's current one, unpacked to an uncompressed vmlinux ------

# the package linux-image-amd64 depends on, e.g. linux-image-6.1.0-57-amd64
kernel_pkg() {
    apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/ {print $2; exit}'
}
KPKG=$(kernel_pkg)
if [ -z "$KPKG" ]; then
    apt_update
    KPKG=$(kernel_pkg)
fi
[ -n "$KPKG" ] || die "apt-cache does not know linux-image-amd64"
KVER=$(candidate "$KPKG")
KDIR=$B/kernel/$KPKG-$KVER
if [ ! -s "$KDIR/vmlinux" ]; then
    log "fetching $KPKG $KVER"
    fetch_deb "$KPKG" "$KDIR/pkg"
    vmlinuz=$(ls "$KDIR"/pkg/boot/vmlinuz-*)
    # The bzImage holds the kernel as a compressed ELF: find the stream by its
    # magic and decompress it (QEMU boots the ELF through PVH, skipping the
    # decompressor, which is slow under emulation).
    for fmt in xz zstd gzip; do
        case $fmt in
            xz) magic='\xfd\x37\x7a\x58\x5a\x00' ; dec="xz -dc --single-stream" ;;
            zstd) magic='\x28\xb5\x2f\xfd' ; dec="zstd -dc" ;;
            gzip) magic='\x1f\x8b\x08' ; dec="gzip -dc" ;;
        esac
        for off in $(LC_ALL=C grep -obUaP "$magic" "$vmlinuz" | cut -d: -f1); do
            tail -c +$((off + 1)) "$vmlinuz" | $dec >"$KDIR/vmlinux.tmp" 2>/dev/null || true
            if [ "$(head -c 4 "$KDIR/vmlinux.tmp" | od -An -tx1 | tr -d ' ')" = "7f454c46" ]; then
                break 2
            fi
        done
    done
    [ "$(head -c 4 "$KDIR/vmlinux.tmp" | od -An -tx1 | tr -d ' ')" = "7f454c46" ] ||
        die "could not unpack vmlinux from $vmlinuz"
    mv "$KDIR/vmlinux.tmp" "$KDIR/vmlinux"
    cp "$KDIR"/pkg/boot/config-* "$KDIR/config"
    rm -rf "$KDIR/pkg"
fi
VMLINUX=$KDIR/vmlinux

# ---- busybox-static, unpacked (installing it would replace a busybox) -------

BBVER=$(candidate busybox-static)
BBDIR=$B/busybox/$BBVER
if [ ! -x "$BBDIR/busybox" ]; then
    log "fetching busybox-static $BBVER"
    fetch_deb busybox-static "$BBDIR/pkg"
    cp "$BBDIR/pkg/bin/busybox" "$BBDIR/busybox"
    rm -rf "$BBDIR/pkg"
fi

# ---- the guest's JDK 17 runtime (jlink, with its CDS archive) ---------------

[ -x "$JDK/bin/jlink" ] || need_pkgs jdk
[ -x "$JDK/bin/jlink" ] || die "no jlink in $JDK (set JAVA17_HOME)"
JSTAMP="$(md5sum <"$JDK/release" | cut -c1-12) $JDK_MODULES"
if [ "$(cat "$B/jdk.stamp" 2>/dev/null)" != "$JSTAMP" ] || [ ! -x "$B/jdk/bin/java" ]; then
    log "jlink $JDK_MODULES"
    rm -rf "$B/jdk" "$B/jdk.stamp"
    "$JDK/bin/jlink" --add-modules "$JDK_MODULES" --output "$B/jdk" --strip-debug \
        --no-header-files --no-man-pages --generate-cds-archive >"$B/jlink.log" 2>&1 ||
        { cat "$B/jlink.log"; die "jlink failed"; }
    # the guest runs with compressed oops only
    rm -f "$B/jdk/lib/server/classes_nocoops.jsa"
    [ -f "$B/jdk/lib/server/classes.jsa" ] || die "jlink made no CDS archive"
    echo "$JSTAMP" >"$B/jdk.stamp"
fi

# ---- the JDK 25 runtime, java.base only, in an archive of its own ------------

# (appended to the initrd of the machines with ${m}_jdk25=1: the kernel
# unpacks concatenated cpio archives one after another)
J25STAMP=
if [ -x "$JDK25/bin/jlink" ]; then
    J25STAMP="$(md5sum <"$JDK25/release" | cut -c1-12) java.base"
    if [ "$(cat "$B/jdk25.stamp" 2>/dev/null)" != "$J25STAMP" ] || [ ! -x "$B/jdk25/bin/java" ]; then
        log "jlink java.base of $JDK25"
        rm -rf "$B/jdk25" "$B/jdk25.stamp"
        "$JDK25/bin/jlink" --add-modules java.base --output "$B/jdk25" --strip-debug \
            --no-header-files --no-man-pages --generate-cds-archive >"$B/jlink25.log" 2>&1 ||
            { cat "$B/jlink25.log"; die "jlink of JDK 25 failed"; }
        rm -f "$B/jdk25/lib/server/classes_nocoops.jsa" "$B/jdk25/lib/server/classes_nocoops_coh.jsa"
        echo "$J25STAMP" >"$B/jdk25.stamp"
    fi
else
    log "no JDK 25 at $JDK25: the JDK 25 scenarios are skipped"
fi

selected() { # scenarios of machine $1, filtered by NUMAPIN_QEMU_ONLY
    local v="${1}_scenarios" s out=
    if [ -n "$CAPTURE" ]; then
        local p=${1}_plans
        [ "${!p:-}" = none ] || echo capture-topology
        return
    fi
    for s in ${!v}; do
        if [ -z "$ONLY" ] || [[ ",$ONLY," == *",$s,"* ]]; then out="$out${out:+,}$s"; fi
    done
    echo "$out"
}

# ---- test programs ----------------------------------------------------------

# The probes, and TierBench (the workload of n3-multijvm): NumaProbe counts
# pages per node with TierBench's numapin.tierbench.PageNodes.
HDR=/usr/share/java/hdrhistogram.jar
[ -f "$HDR" ] || die "$HDR is missing (libhdrhistogram-java)"
rm -rf "$B/classes"
mkdir -p "$B/classes"
"$JDK/bin/javac" --release 17 -cp "$HDR" -d "$B/classes" "$HERE"/*.java \
    "$ROOT"/tierbench/src/numapin/tierbench/*.java >"$B/javac.log" 2>&1 ||
    { cat "$B/javac.log"; die "javac failed"; }

# ---- the access-counting plugin and its guest helper --------------------------

# accmark (the guest's side: windows, calibration) goes into every guest; the
# plugin, whose header comes from Debian's qemu source package, is built when
# a machine that boots with it runs
cc -O2 -g -std=gnu11 -Wall -Wextra -Wshadow -Werror -I"$HERE/plugin" "$HERE/plugin/accmark.c" -lnuma \
    -o "$B/accmark" >"$B/accmark.log" 2>&1 || { cat "$B/accmark.log"; die "cannot build accmark"; }
PLUGIN_SO=
for m in $MACHINES; do
    p=${m}_plugin
    [ -n "${!p:-}" ] && [ -n "$(selected "$m")" ] || continue
    hdr=$(bash "$HERE/plugin/fetch-header.sh" "$B/qemu-plugin") ||
        die "no qemu-plugin.h for the access-counting plugin (tests/qemu/plugin/fetch-header.sh)"
    cc -O2 -g -std=gnu11 -Wall -Wextra -Wshadow -Werror -fPIC -shared -I"$(dirname "$hdr")" -I"$HERE/plugin" \
        "$HERE/plugin/access.c" -o "$B/access.so" >"$B/plugin.log" 2>&1 ||
        { cat "$B/plugin.log"; die "cannot build the access-counting plugin"; }
    PLUGIN_SO=$B/access.so
    break
done

# ---- the agent and the tool -------------------------------------------------

[ -f "$AGENT" ] || die "$AGENT is missing: run make first"
[ -x "$CLI" ] || die "$CLI is missing: run make first"

# ---- initramfs ---------------------------------------------------------------

R=$B/root
rm -rf "$R"
mkdir -p "$R"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,numapin,tests}
cp "$BBDIR/busybox" "$R/bin/busybox"
cp "$HERE/init" "$R/init"
cat "$HERE/scenarios.sh" "$HERE/access-guest.sh" >"$R/scenarios.sh"
mkdir -p "$R/access"
cp "$B/accmark" "$R/access/accmark"
mkdir -p "$R/expected"
if [ -z "$CAPTURE" ]; then
    for m in $MACHINES; do
        p=${m}_plans
        [ "${!p:-}" != none ] || continue
        ls "$TRANSCRIPTS/qemu-$m".* >/dev/null 2>&1 ||
            die "no transcripts of qemu-$m in ${TRANSCRIPTS#"$ROOT"/}: capture the machine (bash tests/qemu/run.sh --capture-topologies), then make test-unit REGEN=1"
        cp "$TRANSCRIPTS/qemu-$m".* "$R/expected/"
    done
fi
chmod 755 "$R/init"
cp -a "$B/jdk" "$R/jdk"
cp "$AGENT" "$R/numapin/libnumapin.so"
cp "$CLI" "$R/numapin/numapin"
cp -r "$B"/classes/. "$R/tests/"
cp "$HDR" "$R/tests/hdrhistogram.jar"
cp /usr/bin/lstopo-no-graphics /usr/bin/numactl "$R/usr/bin/"
# runc (with libseccomp, gathered below): n3-runc runs a JVM in a container
# it makes, as containerd has it do
cp "$RUNC" "$R/usr/sbin/runc"
# Docker's default seccomp profile as dockerd gives it to runc, for the
# capabilities of the guest's containers (CAPS in scenarios.sh), without and
# with CAP_SYS_NICE; kubernetes.md's JAVA_TOOL_OPTIONS values, as written
CT_CAPS=$(sed -n "s/^CAPS='\(.*\)'\$/[\1]/p" "$HERE/scenarios.sh")
[ -n "$CT_CAPS" ] || die "no CAPS='...' line in scenarios.sh"
mkdir -p "$R/tests/seccomp" "$R/tests/k8s"
jq -c --argjson caps "$CT_CAPS" --arg arch amd64 -f "$ROOT/tests/containers/seccomp-oci.jq" \
    "$DOCKER_PROFILE" >"$R/tests/seccomp/docker.json" || die "cannot convert $DOCKER_PROFILE"
jq -c --argjson caps "$(jq -c '. + ["CAP_SYS_NICE"]' <<<"$CT_CAPS")" --arg arch amd64 -f "$ROOT/tests/containers/seccomp-oci.jq" \
    "$DOCKER_PROFILE" >"$R/tests/seccomp/docker-sys-nice.json" || die "cannot convert $DOCKER_PROFILE"
for v in statefulset-env auto-env; do
    awk -v name="$v" -f "$ROOT/tests/containers/k8s-value.awk" "$ROOT/docs/harness/kubernetes.md" >"$R/tests/k8s/$v"
    [ -s "$R/tests/k8s/$v" ] || die "no JAVA_TOOL_OPTIONS value in docs/harness/kubernetes.md's block $v"
done
if declare -F extend_root >/dev/null; then extend_root "$R"; fi

# Shared libraries of every ELF file in the guest, at the paths the host's
# loader found them (the guest has no ld.so.cache; its loader searches the
# same multiarch directories).
: >"$B/libs.txt"
while IFS= read -r f; do
    head -c 4 "$f" | od -An -tx1 | tr -d ' ' | grep -q '^7f454c46$' || continue
    ldd "$f" 2>/dev/null >"$B/ldd.txt" || continue
    if grep -q 'not found' "$B/ldd.txt"; then
        # the JDK's own libraries find each other through $ORIGIN at run time
        while read -r name _; do
            [ -n "$(find "$R/jdk" -name "$name" | head -1)" ] || die "$f needs $name, which ldd cannot find"
        done < <(grep 'not found' "$B/ldd.txt")
    fi
    awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' "$B/ldd.txt" >>"$B/libs.txt"
done < <(find "$R" -type f \( -perm -u+x -o -name '*.so*' \))
for lib in $(sort -u "$B/libs.txt"); do
    case $lib in "$R"/*) continue ;; esac
    mkdir -p "$R$(dirname "$lib")"
    cp -L "$lib" "$R$lib"
done

(cd "$R" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$B/initramfs.cpio"
log "initramfs $(($(stat -c %s "$B/initramfs.cpio") / 1048576)) MiB, kernel $KPKG $KVER"

# The JDK 25 archive: the runtime, and the libraries it needs that the first
# archive lacks.
rm -f "$B/initramfs-jdk25.cpio"
if [ -n "$J25STAMP" ]; then
    R25=$B/root25
    rm -rf "$R25"
    mkdir -p "$R25"
    cp -a "$B/jdk25" "$R25/jdk25"
    : >"$B/libs25.txt"
    while IFS= read -r f; do
        head -c 4 "$f" | od -An -tx1 | tr -d ' ' | grep -q '^7f454c46$' || continue
        ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' >>"$B/libs25.txt" || true
    done < <(find "$R25" -type f \( -perm -u+x -o -name '*.so*' \))
    for lib in $(sort -u "$B/libs25.txt"); do
        case $lib in "$R25"/*) continue ;; esac
        [ -e "$R$lib" ] && continue
        mkdir -p "$R25$(dirname "$lib")"
        cp -L "$lib" "$R25$lib"
    done
    (cd "$R25" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$B/jdk25.cpio"
    cat "$B/initramfs.cpio" "$B/jdk25.cpio" >"$B/initramfs-jdk25.cpio"
    log "initramfs with JDK 25: $(($(stat -c %s "$B/initramfs-jdk25.cpio") / 1048576)) MiB"
fi

# ---- boot the machines ----------------------------------------------------------

boot() { # boot MACHINE: runs its scenarios, console to $B/logs/MACHINE.console
    local m=$1 smp nodes mem dist scen tmo args=() i=0 cpus d s t v rc=0 j25 app initrd=$B/initramfs.cpio
    local plugin top acc_cpus= acc_mem=
    smp=${m}_smp nodes=${m}_nodes mem=${m}_mem_mb dist=${m}_dist tmo=${m}_timeout j25=${m}_jdk25 app=${m}_append
    plugin=${m}_plugin top=${m}_top
    if [ -n "${!j25:-}" ] && [ -f "$B/initramfs-jdk25.cpio" ]; then initrd=$B/initramfs-jdk25.cpio; fi
    scen=$(selected "$m")
    for cpus in ${!nodes}; do
        args+=(-object "memory-backend-ram,id=m$i,size=${!mem}M"
            -numa "node,nodeid=$i,cpus=$cpus,memdev=m$i")
        acc_cpus=$acc_cpus${acc_cpus:+:}$cpus acc_mem=$acc_mem${acc_mem:+:}${!mem}
        i=$((i + 1))
    done
    # the plugin's record: $B/logs/MACHINE.access.txt
    if [ -n "${!plugin:-}" ]; then
        [ -n "$PLUGIN_SO" ] || die "$m boots with the access-counting plugin, which was not built"
        args+=(-plugin "$PLUGIN_SO,cpus=${acc_cpus//,/+},mem=$acc_mem,out=$B/logs/$m.access.txt,top=${!top:-100}")
    fi
    for d in ${!dist}; do
        IFS=, read -r s t v <<<"$d"
        args+=(-numa "dist,src=$s,dst=$t,val=$v")
    done
    # single-threaded TCG: multi-threaded TCG occasionally crashes JIT-compiled code
    timeout -k 10 "${NUMAPIN_QEMU_TIMEOUT:-${!tmo}}" qemu-system-x86_64 \
        -accel tcg,thread=single -machine q35 -cpu max -smp "${!smp}" -m $((i * ${!mem}))M \
        "${args[@]}" "${QEMU_EXTRA[@]}" \
        -kernel "$VMLINUX" -initrd "$initrd" \
        -append "console=ttyS0 panic=-1 transparent_hugepage=never quiet loglevel=3 ${!app:-} numapin.machine=$m numapin.scenarios=$scen" \
        -display none -nodefaults -no-reboot -serial "file:$B/logs/$m.console" \
        >"$B/logs/$m.qemu" 2>&1 || rc=$?
    echo "$rc" >"$B/logs/$m.rc"
}

rm -rf "$B/logs"
mkdir -p "$B/logs"
log "booting $MACHINES ($NUMAPIN_QEMU_JOBS at a time)"
running=0
for m in $MACHINES; do
    [ -n "$(selected "$m")" ] || continue
    boot "$m" &
    running=$((running + 1))
    if [ "$running" -ge "$NUMAPIN_QEMU_JOBS" ]; then
        wait -n || true
        running=$((running - 1))
    fi
done
wait || true

# ---- capture: the guests' topologies as hwloc XML ------------------------------

if [ -n "$CAPTURE" ]; then
    rc=0
    for m in $MACHINES; do
        p=${m}_plans
        [ "${!p:-}" != none ] || continue
        tr -d '\r' <"$B/logs/$m.console" >"$B/logs/$m.console.txt" 2>/dev/null || true
        xml=$TOPOLOGIES/qemu-$m.xml
        sed -n '/^@@@ XML BEGIN$/,/^@@@ XML END$/p' "$B/logs/$m.console.txt" | sed '1d;$d' >"$xml.tmp"
        if grep -aq '^@@@ END capture-topology PASS ' "$B/logs/$m.console.txt" && [ -s "$xml.tmp" ] &&
            "$CLI" topo --topology "$xml.tmp" >/dev/null; then
            mv "$xml.tmp" "$xml"
            log "captured ${xml#"$ROOT"/}"
        else
            rm -f "$xml.tmp"
            log "error: no topology captured from $m (console: ${B#"$ROOT"/}/logs/$m.console)"
            tail -20 "$B/logs/$m.console.txt" 2>/dev/null || true
            rc=1
        fi
    done
    [ "$rc" -eq 0 ] && log "now: make test-unit REGEN=1, and review git diff tests/golden"
    exit "$rc"
fi

# ---- judge ------------------------------------------------------------------------

passed=0
failed=0
for m in $MACHINES; do
    scen=$(selected "$m")
    [ -n "$scen" ] || continue
    console=$B/logs/$m.console
    touch "$console"
    tr -d '\r' <"$console" >"$console.txt"
    rc=$(cat "$B/logs/$m.rc" 2>/dev/null || echo "?")
    header_shown=
    for s in ${scen//,/ }; do
        line=$(grep -a "^@@@ END $s " "$console.txt" | head -1 || true)
        result=$(echo "$line" | awk '{print $4}')
        secs=$(echo "$line" | awk '{print $5}')
        if [ "$result" = PASS ]; then
            echo "PASS $s ($secs)"
            passed=$((passed + 1))
            continue
        fi
        failed=$((failed + 1))
        if [ -z "$line" ]; then
            echo "FAIL $s (no result: the guest crashed, hung or was stopped; qemu exit $rc)"
        else
            echo "FAIL $s ($secs)"
        fi
        if [ -z "$header_shown" ]; then
            echo "----- $m: guest console up to the first scenario -----"
            sed -n '/^@@@ BEGIN /q; p' "$console.txt"
            header_shown=1
        fi
        echo "----- $m: guest console of $s -----"
        if grep -aq "^@@@ BEGIN $s\$" "$console.txt"; then
            awk -v s="$s" '$0 == "@@@ BEGIN " s {on = 1} on {print} on && index($0, "@@@ END " s " ") == 1 {exit}' "$console.txt"
        else
            echo "(scenario never began; last console lines:)"
            tail -40 "$console.txt"
        fi
        if [ -s "$B/logs/$m.qemu" ]; then
            echo "----- $m: qemu's own output -----"
            cat "$B/logs/$m.qemu"
        fi
        echo "----- end of $s -----"
    done
    # the plugin's record, judged on the host: one result more
    judge=${m}_judge dist=${m}_dist
    if [ -n "${!judge:-}" ] && [[ ",$scen," == *",${!judge},"* ]]; then
        if bash "$HERE/access-table.sh" "$B/logs/$m.access.txt" "$console.txt" "${!dist}" \
            "$B/access-table.md" >"$B/logs/$m.judged.txt" 2>&1; then
            echo "PASS $m-access-targets"
            passed=$((passed + 1))
        else
            echo "FAIL $m-access-targets"
            failed=$((failed + 1))
        fi
        grep '^check' "$B/logs/$m.judged.txt" || cat "$B/logs/$m.judged.txt"
        log "access table in ${B#"$ROOT"/}/access-table.md (tests/qemu/doc-table.sh puts it in docs/access.md)"
    fi
done

# The heap scenarios' rows, as docs/heap.md shows them (tests/qemu/doc-table.sh
# puts them there).
heap_rows=$(for m in n2 n3 h3; do
    [ -f "$B/logs/$m.console.txt" ] && grep -a '^heaptable: ' "$B/logs/$m.console.txt" | sed 's/^heaptable: //'
done || true)
attach_rows=$(grep -ah '^heaptable-attach: ' "$B"/logs/*.console.txt 2>/dev/null | sed 's/^heaptable-attach: //' || true)
if [ -n "$heap_rows" ]; then
    {
        echo "| machine | JDK | collector | AlwaysPreTouch | flags | group | no agent | numapin, default options | numactl --cpunodebind=N --membind=N |"
        echo "|---|---:|---|---|---|---:|---:|---:|---:|"
        echo "$heap_rows"
        if [ -n "$attach_rows" ]; then
            echo
            echo "| late attach (group 1 of 3) | JDK | collector | before | after | pages moved | ms |"
            echo "|---|---:|---|---:|---:|---:|---:|"
            echo "$attach_rows" | sed 's/^/| jcmd JVMTI.agent_load /'
        fi
        echo
        echo "Measured by \`make test-numa\` ($KPKG $KVER under QEMU), $(date -u +%Y-%m-%d)."
    } >"$B/heap-table.md"
    log "heap table in ${B#"$ROOT"/}/heap-table.md (tests/qemu/doc-table.sh puts it in docs/heap.md)"
fi

log "consoles in ${B#"$ROOT"/}/logs/, $(($(date +%s) - START)) s in all"
echo "qemu-numa: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
