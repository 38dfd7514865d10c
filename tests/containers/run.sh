#!/usr/bin/env bash
# numapin in containers made by real OCI runtimes (docs/harness/containers.md,
# docs/harness/kubernetes.md): runc driven as containerd drives it (an OCI
# bundle's config.json, `runc run -d`, `runc update`, `runc exec`, `runc
# kill`, `runc delete`), and podman (with runc) where it can run.
#
#   tests/containers/run.sh [--agent LIB] [--jdk JDK_HOME] [--jdk25 JDK_HOME] [--only WORD,...] [--keep]
#
# Every container runs from one read-only rootfs under build/containers/
# with the host's /usr and /etc bind-mounted read-only and the build
# directory at /opt/numapin.  Cases (each prints PASS, FAIL or SKIP and its
# name; --only runs those whose names contain a word given):
#
#   runc-cpuset, podman-cpuset  a JVM in a cpuset of CPU 1: planned there,
#       workers and the whole JVM placed, `numapin check` from the host (host
#       and namespace ids) and from inside, its cgroup seen from inside
#   runc-update, podman-update  the cpuset shrunk, moved, grown while it runs
#   runc-cpuset-jdk25, runc-update-jdk25  the same two on the JDK of
#       --jdk25 (default /usr/lib/jvm/temurin-25-jdk-amd64; a SKIP line
#       when it is absent)
#   runc-host-cgroupns  runc-update without a cgroup namespace (cgroup v1)
#   runc-seccomp-*, podman-seccomp-*  Docker's and podman's default seccomp
#       profiles, with and without CAP_SYS_NICE
#   runc-auto-2, runc-auto-3, podman-auto-2  group=auto in 2 and 3
#       containers sharing a lock directory; a container killed (runc kill,
#       podman kill) frees its group
#   runc-pods-statefulset, runc-pods-auto, podman-pods-*  TierBench as two
#       pods, one per node of the fake 2-node machine, with kubernetes.md's
#       option strings
#   recipe-runc, recipe-podman  docs/harness/containers.md's blocks, as written
#
# Ends with `containers: N passed, M failed`.  A runtime that cannot start
# a container here gets one line saying why and which cases did not run,
# counted neither way.  Needs root, CPUs 0 and 1, and
# scripts/install-deps.sh's "containers" set (make test-containers).
# A failed case's output is kept in build/containers/failed/.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
agent=$root/build/libnumapin.so
jdk=/usr/lib/jvm/java-17-openjdk-amd64
jdk25=/usr/lib/jvm/temurin-25-jdk-amd64
only=
# shellcheck disable=SC2034 # keep: read by lib.sh
keep=
while [ $# -gt 0 ]; do
    case "$1" in
        --agent) agent=$2; shift 2 ;;
        --jdk) jdk=$2; shift 2 ;;
        --jdk25) jdk25=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --keep) keep=1; shift ;;  # read by lib.sh's ct_cleanup
        -h|--help) sed -n '2,33s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "containers: unknown argument $1" >&2; exit 2 ;;
    esac
done
case "$agent" in /*) ;; *) agent=$PWD/$agent ;; esac
build=$(dirname "$agent")
work=$build/containers
rootfs=$work/rootfs
run=$$
numapin=$build/numapin
hdr=/usr/share/java/hdrhistogram.jar
docker_profile=/usr/share/gocode/src/github.com/docker/docker/profiles/seccomp/default.json
podman_profile=/usr/share/containers/seccomp.json
# What podman gives a container by default (podman info: security.capabilities).
PODMAN_CAPS='["CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_FOWNER","CAP_FSETID","CAP_KILL","CAP_NET_BIND_SERVICE",
  "CAP_SETFCAP","CAP_SETGID","CAP_SETPCAP","CAP_SETUID","CAP_SYS_CHROOT"]'
# numapin's rescan period in the tests, and how long after a cpuset change
# its re-plan may come: one period, and scheduling slack on a busy machine.
rescan_ms=500
replan_within_ms=1500

# shellcheck source=lib.sh
. "$here/lib.sh"

unset HWLOC_SYNTHETIC HWLOC_THISSYSTEM HWLOC_XMLFILE JAVA_TOOL_OPTIONS JDK_JAVA_OPTIONS _JAVA_OPTIONS
passed=0
failed=0

# ---- a case ----

problems=()
expect() { # expect MESSAGE COMMAND...: a problem unless COMMAND succeeds
    local msg=$1
    shift
    "$@" || problems+=("$msg")
}
is() { [ "$1" = "$2" ]; }
has() { grep -qE -- "$2" "$1" 2>/dev/null; }
wanted() {
    [ -z "$only" ] && return 0
    local w
    for w in ${only//,/ }; do [[ $1 == *"$w"* ]] && return 0; done
    return 1
}
# one NAME FUNCTION ARGS...: runs a case, then PASS or FAIL.
one() {
    local name=$1 started=$SECONDS
    shift
    wanted "$name" || return 0
    problems=()
    "$@" || problems+=("the case stopped early (status $?)")
    if [ ${#problems[@]} -eq 0 ]; then
        passed=$((passed + 1))
        echo "PASS $name ($((SECONDS - started)) s)"
    else
        failed=$((failed + 1))
        echo "FAIL $name ($((SECONDS - started)) s): ${problems[0]}"
        [ ${#problems[@]} -le 1 ] || printf '  - %s\n' "${problems[@]:1}"
        mkdir -p "$work/failed"
        local f
        for f in "$work"/bundles/"$name"*/*.log "$work"/bundles/"$name"*/check-*.txt; do
            [ -e "$f" ] && cp "$f" "$work/failed/$(basename "$(dirname "$f")")-$(basename "$f")"
        done
        echo "  output: $work/failed/$name*"
    fi
}

# ---- the JVM in a container ----

# on_jdk JDK_HOME FUNCTION ARGS...: FUNCTION with the containers' JVM from
# JDK_HOME (the host's /usr, bind-mounted, holds it)
on_jdk() {
    local saved=$jdk rc=0
    jdk=$1
    shift
    "$@" || rc=$?
    jdk=$saved
    return $rc
}

java_args() { # java_args OPTIONS [WORKERS]: the probe JVM (tests/containers/Pool.java)
    jq -cn --arg java "$jdk/bin/java" --arg o "-agentpath:/opt/numapin/libnumapin.so=$1" --arg n "${2:-2}" \
        '[$java, "-XX:+UseSerialGC", "-Xmx64m", $o, "-cp", "/opt/numapin/containers/classes",
          "Pool", $n, "/probe/stop", "120"]'
}
# ready NAME: the probe started its workers.
ready() {
    await "$(out "$1")" '^ready pid=' 40 || { problems+=("$1: the JVM did not start its workers: $(tail -3 "$(out "$1")" | tr '\n' ' ')"); return 1; }
}

# placed_on NAME PID CPUS [MEM]: every worker numapin placed at its start has
# CPUS in its placed line (and MEM when given), in its own view, and on the
# host; there are two.
placed_on() {
    local name=$1 pid=$2 cpus=$3 mem=${4:-} log w tid h n=0
    log=$(out "$name")
    while read -r w tid; do
        [ -n "$w" ] || continue
        n=$((n + 1))
        expect "$name: \"$w\" placed on other CPUs than $cpus" has "$log" "placed \"$w\" tid=$tid .* cpus=$cpus( |$)"
        [ -z "$mem" ] || expect "$name: \"$w\" has not mem=$mem" has "$log" "placed \"$w\" tid=$tid .* mem=$mem( |$)"
        expect "$name: \"$w\" saw other CPUs than $cpus" has "$log" "^worker name=\"$w\" tid=$tid cpus=$cpus$"
        h=$(host_tid "$pid" "$tid") || { problems+=("$name: no host thread for \"$w\" (tid $tid in the container)"); continue; }
        expect "$name: \"$w\" (host tid $h) has CPUs $(cpus_of "$pid" "$h") on the host, not $cpus" is "$(cpus_of "$pid" "$h")" "$cpus"
    done < <(workers "$log" | grep '^ForkJoinPool-1-worker-')
    expect "$name: $n workers placed, not 2" is "$n" 2
}
# all_on PID CPUS: every thread of the process has CPUS (the whole JVM placed).
all_on() {
    local t bad=
    for t in /proc/"$1"/task/*; do
        [ "$(cpus_of "$1" "${t##*/}")" = "$2" ] || bad+=" ${t##*/}:$(cpus_of "$1" "${t##*/}")"
    done
    expect "threads of the JVM not on CPUs $2:$bad" is "$bad" ""
}

# checked NAME RUNTIME PID CPUS: `numapin check` from the host names each
# worker with its host tid and its namespace tid, the CPUs numapin set,
# no drift; run inside the container it names them with its own tids.
# The agent's marker, which check reads, is written by its rescan thread
# once a period: check is run again until it shows both workers (5 s).
checked() {
    local name=$1 rt=$2 pid=$3 cpus=$4 w tid h host inside t0
    t0=$(date +%s)
    while :; do
        host=$("$numapin" check "$pid" 2>&1) || { problems+=("$name: numapin check $pid failed: $(head -2 <<<"$host")"); break; }
        [ "$(grep -c " planned=$cpus drift=no$" <<<"$host")" -lt 2 ] && [ $(($(date +%s) - t0)) -lt 5 ] || break
        sleep 0.1
    done
    inside=$(ct_exec "$rt" "$name" /opt/numapin/numapin check 1 2>&1) || problems+=("$name: numapin check 1 inside failed: $(head -2 <<<"$inside")")
    printf '%s\n' "$host" > "$work/bundles/$name/check-host.txt"
    printf '%s\n' "$inside" > "$work/bundles/$name/check-inside.txt"
    expect "$name: check from the host has no numapin line" has "$work/bundles/$name/check-host.txt" "^numapin group=0 groups=1 .*cpus=$cpus "
    while read -r w tid; do
        h=$(host_tid "$pid" "$tid") || continue
        expect "$name: check from the host: \"$w\" not with tid=$h nstid=$tid planned=$cpus drift=no" \
            has "$work/bundles/$name/check-host.txt" "^thread \"$w\" tid=$h cpus=$cpus .* nstid=$tid planned=$cpus drift=no$"
        expect "$name: check inside: \"$w\" not with tid=$tid planned=$cpus drift=no" \
            has "$work/bundles/$name/check-inside.txt" "^thread \"$w\" tid=$tid cpus=$cpus .* planned=$cpus drift=no$"
    done < <(workers "$(out "$name")" | grep '^ForkJoinPool-1-worker-')
    expect "$name: check inside shows namespace ids (nstid)" is "$(grep -c nstid= <<<"$inside" || true)" 0
}

# ---- 1: a JVM in a container given a cpuset; 5: its cgroup from inside ----

case_cpuset() { # case_cpuset RUNTIME NAME
    local rt=$1 name=$2 pid log cg want argv
    if [ "$rt" = runc ]; then
        ct_bundle "$name" 1 '[]' "$(java_args "scope=jvm,rescan=$rescan_ms")"
        ct_run "$name" || { problems+=("runc run failed: $(cat "$(out "$name")")"); return 0; }
    else
        mapfile -t argv < <(jq -r '.[]' <<<"$(java_args "scope=jvm,rescan=$rescan_ms")")
        pod_run "$name" --cpuset-cpus 1 -- "${argv[@]}"
    fi
    ready "$name" || return 0
    pid=$(hostpid "$rt" "$name")
    log=$(out "$name")
    expect "no topology line with allowed=1" has "$log" '\[numapin\] topology .* allowed=1 '
    expect "no plan on cpus=1 with scope=jvm" has "$log" '\[numapin\] plan group=0 groups=1 .* cpus=1 .*scope=jvm'
    expect "no jvm line placing the whole JVM on cpus=1" has "$log" '\[numapin\] jvm group=0 node=0 cpus=1 mem=preferred:0'
    placed_on "$name" "$pid" 1 preferred:0
    all_on "$pid" 1
    checked "$name" "$rt" "$pid" 1
    # Its own cgroup, from inside: the namespace's root, the container's CPUs.
    if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
        cg=$(ct_exec "$rt" "$name" sh -c 'grep "^0::" /proc/self/cgroup; cat /sys/fs/cgroup/cpuset.cpus.effective' 2>&1 || true)
        want="0::/ 1"
    else
        cg=$(ct_exec "$rt" "$name" sh -c 'grep -E "^[0-9]+:cpuset:" /proc/self/cgroup; cat /sys/fs/cgroup/cpuset/cpuset.effective_cpus' 2>&1 || true)
        want="$(grep -E '^[0-9]+:cpuset:' /proc/self/cgroup | sed 's/:cpuset:.*/:cpuset:\//') 1"
    fi
    cg=$(printf '%s' "$cg" | tr '\n' ' ')
    expect "inside, /proc/self/cgroup and the cpuset are not the namespace's root and CPU 1: $cg" is "$cg" "$want"
    ct_stop "$rt" "$name"
    expect "no summary at exit" has "$log" '\[numapin\] summary group=0 placed=2 .* failed=0 mem_failed=0 cpus=1 '
}

# ---- 2: the cpuset changed while it runs ----

# step RUNTIME NAME PID CPUS WHAT: the cpuset rewritten to CPUS, the re-plan
# awaited: within replan_within_ms, every worker placed anew (how=replan),
# on CPUS on the host, the whole JVM too.
step() {
    local rt=$1 name=$2 pid=$3 cpus=$4 what=$5 log n t0 ms w tid i h
    log=$(out "$name")
    n=$(count "$log" '\[numapin\] replan ')
    t0=$(date +%s%N)
    ct_update "$rt" "$name" "$cpus" || { problems+=("$what: $rt update --cpuset-cpus $cpus failed"); return 0; }
    while [ "$(count "$log" '\[numapin\] replan ')" -le "$n" ] && [ $(( ($(date +%s%N) - t0) / 1000000 )) -lt 5000 ]; do
        sleep 0.02
    done
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    if [ "$(count "$log" '\[numapin\] replan ')" -le "$n" ]; then
        problems+=("$what (cpus=$cpus): no replan line within 5 s")
        return 0
    fi
    echo "  $name: $what to cpus=$cpus: replan after ${ms} ms (rescan=${rescan_ms})"
    expect "$what: replan after $ms ms, more than $replan_within_ms" test "$ms" -le "$replan_within_ms"
    expect "$what: the replan line has not allowed=$cpus" is "$(grep -E '\[numapin\] replan ' "$log" | tail -1 | grep -oE 'allowed=[^ ]+')" "allowed=$cpus"
    expect "$what: no jvm line how=replan on cpus=$cpus" has "$log" "\\[numapin\\] jvm group=0 node=0 cpus=$cpus mem=unchanged how=replan"
    while read -r w tid; do
        # Its line comes with the replan's, from the same pass (3 s at most).
        for ((i = 0; i < 30; i++)); do
            [ "$(grep -E "placed \"$w\" tid=$tid .*how=replan" "$log" | tail -1 | grep -oE ' cpus=[^ ]+')" = " cpus=$cpus" ] && break
            sleep 0.1
        done
        expect "$what: \"$w\" not re-placed on cpus=$cpus (how=replan)" \
            is "$(grep -E "placed \"$w\" tid=$tid .*how=replan" "$log" | tail -1 | grep -oE ' cpus=[^ ]+')" " cpus=$cpus"
        h=$(host_tid "$pid" "$tid") || continue
        expect "$what: \"$w\" has CPUs $(cpus_of "$pid" "$h") on the host, not $cpus" is "$(cpus_of "$pid" "$h")" "$cpus"
    done < <(workers "$log" | grep '^ForkJoinPool-1-worker-')
    all_on "$pid" "$cpus"
}

case_update() { # case_update RUNTIME NAME
    local rt=$1 name=$2 pid log argv
    if [ "$rt" = runc ]; then
        ct_bundle "$name" 0-1 '[]' "$(java_args "scope=jvm,rescan=$rescan_ms")"
        ct_run "$name" || { problems+=("runc run failed: $(cat "$(out "$name")")"); return 0; }
    else
        mapfile -t argv < <(jq -r '.[]' <<<"$(java_args "scope=jvm,rescan=$rescan_ms")")
        pod_run "$name" --cpuset-cpus 0-1 -- "${argv[@]}"
    fi
    ready "$name" || return 0
    pid=$(hostpid "$rt" "$name")
    log=$(out "$name")
    placed_on "$name" "$pid" 0-1
    step "$rt" "$name" "$pid" 1 shrunk
    step "$rt" "$name" "$pid" 0 moved
    step "$rt" "$name" "$pid" 0-1 grown
    ct_stop "$rt" "$name"
    expect "the summary does not count 3 replans" has "$log" '\[numapin\] summary .* replans=3 '
}

# Without a cgroup namespace on cgroup v1 (Docker's and containerd's default
# there), the container's /proc/self/cgroup names a path its own
# /sys/fs/cgroup/cpuset (the container's directory) does not have, so hwloc
# finds no cpuset; numapin reads it at the mount's root and follows its
# changes all the same.
case_host_cgroupns() {
    # A first rescan period longer than the JVM's start and the first
    # update take: numapin must take the cpuset it planned on as the start,
    # not the one its first check reads.
    local name=runc-host-cgroupns pid log rescan_ms=2000 replan_within_ms=3000
    ct_bundle "$name" 0-1 '[]' "$(java_args "scope=jvm,rescan=$rescan_ms")" '.linux.namespaces -= [{type: "cgroup"}]'
    ct_run "$name" || { problems+=("runc run failed: $(cat "$(out "$name")")"); return 0; }
    ready "$name" || return 0
    pid=$(hostpid runc "$name")
    log=$(out "$name")
    expect "the container has a cgroup namespace of its own" is \
        "$(readlink "/proc/$pid/ns/cgroup")" "$(readlink /proc/self/ns/cgroup)"
    placed_on "$name" "$pid" 0-1
    step runc "$name" "$pid" 1 shrunk
    step runc "$name" "$pid" 0 moved
    step runc "$name" "$pid" 0-1 grown
    expect "a warning that threads cannot be put back" is "$(count "$log" 'warning.*cannot put ')" 0
    expect "threads taken for drifted: a cpuset change missed" is "$(count "$log" 'reads back|how=drift')" 0
    ct_stop runc "$name"
    expect "the summary does not count 3 replans" has "$log" '\[numapin\] summary .* replans=3 '
}

# ---- 3: the default seccomp profiles ----

# mempolicy_allowed PROFILE CAPS_JSON: the profile lets set_mempolicy
# through for a process with these capabilities.
mempolicy_allowed() {
    jq -e --argjson caps "$2" --arg arch amd64 -f "$here/seccomp-oci.jq" "$1" |
        jq -e '[.syscalls[] | select(.action == "SCMP_ACT_ALLOW" and (.names | index("set_mempolicy")) and (.args | length == 0))] | length > 0' >/dev/null
}

# seccomp_outcome NAME PROFILE CAPS_JSON: what numapin did under the
# profile, as the profile says it must: memory placed where set_mempolicy
# is allowed; else one warning, the CPU placement kept.
seccomp_outcome() {
    local name=$1 profile=$2 caps=$3 log pid n
    log=$(out "$name")
    ready "$name" || return 0
    pid=$(hostpid "${name%%-*}" "$name")
    n=$(count "$log" '\[warning\]\[numapin\] .*memory policy')
    expect "the JVM runs under no seccomp filter" is "$(awk '/^Seccomp:/ {print $2}' "/proc/$pid/status")" 2
    if mempolicy_allowed "$profile" "$caps"; then
        echo "  $name: $(basename "$profile") allows set_mempolicy with these capabilities"
        placed_on "$name" "$pid" 1 preferred:0
        expect "$n warnings on the memory policy" is "$n" 0
        ct_stop "${name%%-*}" "$name"
        expect "the summary does not say mem_failed=0" has "$log" '\[numapin\] summary .* mem_failed=0 '
    else
        echo "  $name: $(basename "$profile") refuses set_mempolicy with these capabilities"
        placed_on "$name" "$pid" 1 'unknown mem_error=EPERM'
        expect "$n warnings on the memory policy, not 1" is "$n" 1
        ct_stop "${name%%-*}" "$name"
        expect "the summary does not say mem_failed=2" has "$log" '\[numapin\] summary .* failed=0 mem_failed=2 '
        grep -E '\[warning\]\[numapin\] .*memory policy' "$log" | grep -q 'CAP_SYS_NICE (docker run --cap-add SYS_NICE' ||
            problems+=("the warning does not name the capability to add: $(grep -E '\[warning\]\[numapin\] .*memory policy' "$log" | head -1)")
    fi
}

case_seccomp_runc() { # case_seccomp_runc NAME PROFILE EXTRA_CAPS_JSON
    local name=$1 profile=$2 caps
    caps=$(jq -c --argjson more "$3" '. + $more' <<<"$DEFAULT_CAPS")
    jq --argjson caps "$caps" --arg arch amd64 -f "$here/seccomp-oci.jq" "$profile" > "$work/seccomp-$name.json"
    mkdir -p "$work/bundles/$name"
    ct_bundle "$name" 1 '[]' "$(java_args "rescan=$rescan_ms")"
    jq --argjson caps "$caps" --slurpfile sc "$work/seccomp-$name.json" \
        '.process.capabilities = {bounding: $caps, effective: $caps, permitted: $caps} | .linux.seccomp = $sc[0]' \
        "$work/bundles/$name/config.json" > "$work/bundles/$name/config.tmp" 2>/dev/null ||
        { problems+=("cannot write the seccomp profile into config.json"); return 0; }
    mv "$work/bundles/$name/config.tmp" "$work/bundles/$name/config.json"
    ct_run "$name" || { problems+=("runc run failed: $(cat "$(out "$name")")"); return 0; }
    seccomp_outcome "$name" "$profile" "$caps"
}

case_seccomp_podman() { # case_seccomp_podman NAME PROFILE|default EXTRA_CAPS_JSON
    local name=$1 profile=$2 opts=(--cpuset-cpus 1) caps argv
    caps=$(jq -c --argjson more "$3" '. + $more' <<<"$PODMAN_CAPS")
    if [ "$profile" = default ]; then profile=$podman_profile; else opts+=(--security-opt "seccomp=$profile"); fi
    [ "$3" = '[]' ] || opts+=(--cap-add SYS_NICE)
    mapfile -t argv < <(jq -r '.[]' <<<"$(java_args "rescan=$rescan_ms")")
    pod_run "$name" "${opts[@]}" -- "${argv[@]}"
    seccomp_outcome "$name" "$profile" "$caps"
}

# ---- 4: group=auto across containers sharing a lock directory ----

# auto_start RUNTIME NAME GROUPS MOUNT: a container of RUNTIME (CPUs 0-1)
# with group=auto,groups=GROUPS, the shared lock directory mounted at MOUNT.
auto_start() {
    local rt=$1 name=$2 groups=$3 mnt=$4 args argv
    args=$(java_args "group=auto,groups=$groups,lockdir=$mnt,rescan=$rescan_ms")
    if [ "$rt" = runc ]; then
        ct_bundle "$name" 0-1 '[]' "$args" \
            '.mounts += [{destination: "'"$mnt"'", type: "bind", source: "'"$locks"'", options: ["rbind", "rw"]}]'
        ct_run "$name" || { problems+=("runc run $name failed: $(cat "$(out "$name")")"); return 1; }
    else
        mapfile -t argv < <(jq -r '.[]' <<<"$args")
        pod_run "$name" --cpuset-cpus 0-1 -v "$locks:$mnt" -- "${argv[@]}"
    fi
    ready "$name"
}
group_of() { sed -nE 's/.*\[numapin\] auto group=([0-9]+) groups=.*/\1/p' "$(out "$1")" | head -1; }
# plan_cpus GROUPS G: the CPUs of group G of GROUPS on CPUs 0-1, as numapin plan says.
plan_cpus() { "$numapin" plan --groups "$1" --restrict 0-1 | awk -v g="$2" '$1 == g {print $NF}'; }

auto_placed() { # auto_placed RUNTIME NAME GROUPS: placed on its group's CPUs
    local g
    g=$(group_of "$2")
    [ -n "$g" ] || { problems+=("$2: no auto line"); return 0; }
    placed_on "$2" "$(hostpid "$1" "$2")" "$(plan_cpus "$3" "$g")"
}

# ct_kill RUNTIME NAME: the container killed (SIGKILL, as kubelet's stop
# ends past the grace period), awaited (5 s at most) and deleted.
ct_kill() {
    local rt=$1 id=np-$run-$2 i
    if [ "$rt" = runc ]; then
        runc kill "$id" KILL
        for ((i = 0; i < 50; i++)); do
            [ "$(runc state "$id" 2>/dev/null | jq -r .status)" = stopped ] && break
            sleep 0.1
        done
        runc delete -f "$id" >/dev/null 2>&1 || true
    else
        podman kill --signal KILL "$id" >/dev/null
        # podman run --rm, attached, ends with its container
        wait "$(cat "$work/bundles/$2/podman-run.pid")" 2>/dev/null || true
        podman rm -f -t 0 "$id" >/dev/null 2>&1 || true
    fi
}

# case_auto RUNTIME GROUPS: GROUPS containers take distinct groups; with 2,
# one more finds none, and one killed frees its group for a new one
case_auto() {
    local rt=$1 groups=$2 base=$1-auto-$2 i names=() got=() g
    locks=$work/locks/$base
    rm -rf "$locks"
    mkdir -p "$locks"
    chmod 700 "$locks"
    for ((i = 0; i < groups; i++)); do
        # The directory at another path in every other container.
        if [ $((i % 2)) -eq 0 ]; then auto_start "$rt" "$base-c$i" "$groups" /run/numapin || return 0
        else auto_start "$rt" "$base-c$i" "$groups" /locks || return 0; fi
        names+=("$base-c$i")
    done
    for i in "${names[@]}"; do
        got+=("$(group_of "$i")")
        auto_placed "$rt" "$i" "$groups"
    done
    echo "  $base: containers took groups ${got[*]}"
    expect "groups taken: ${got[*]}, not 0 to $((groups - 1)) once each" \
        is "$(printf '%s\n' "${got[@]}" | sort -n | tr '\n' ' ')" "$(seq 0 $((groups - 1)) | tr '\n' ' ')"
    [ "$groups" -eq 2 ] || { for i in "${names[@]}"; do ct_stop "$rt" "$i"; done; return 0; }

    # One more finds every group held and places nothing.
    auto_start "$rt" "$base-full" "$groups" /run/numapin || return 0
    expect "the extra container does not say all groups are held" has "$(out "$base-full")" "warning.*group=auto: all $groups groups are held by other JVMs"
    expect "the extra container placed threads" is "$(count "$(out "$base-full")" '\[numapin\] placed ')" 0
    ct_stop "$rt" "$base-full"

    # The first one killed (runc kill KILL, podman kill): its group is free
    # for a new container at once.
    g=$(group_of "${names[0]}")
    ct_kill "$rt" "${names[0]}"
    auto_start "$rt" "$base-new" "$groups" /locks || return 0
    expect "the new container took group $(group_of "$base-new"), not the killed one's $g" is "$(group_of "$base-new")" "$g"
    auto_placed "$rt" "$base-new" "$groups"
    for i in "${names[@]:1}" "$base-new"; do ct_stop "$rt" "$i"; done
}

# ---- 6: pods per node: TierBench, one container per node ----

# k8s_value NAME: the JAVA_TOOL_OPTIONS value of kubernetes.md's block
# "<!-- test: NAME -->".
k8s_value() { awk -v name="$1" -f "$here/k8s-value.awk" "$root/docs/harness/kubernetes.md"; }
# kubelet's $(VAR) expansion of an env value, from NAME=VALUE pairs.
expand() {
    local v=$1 kv
    shift
    for kv in "$@"; do v=${v//\$(${kv%%=*})/${kv#*=}}; done
    printf '%s' "$v"
}

# pods RUNTIME NAME KIND: two TierBench pods on the fake 2-node machine,
# run at once by `numapin groups --groups 2` (runc run in the foreground, or
# podman run, as each group's command; the JVMs in the containers take their
# options from the containers' environment, not from the JAVA_TOOL_OPTIONS
# numapin groups gives the runtime), which prints the table of the run.
# KIND statefulset: each sees both nodes (CPUs 0-1), its group from its
# ordinal; auto: each is given one node's CPU, group=auto.
pods() {
    local rt=$1 base=$2 kind=$3 i cpus jto env args log w e argv cmd rc=0 ords
    locks=$work/locks/$base
    mkdir -p "$locks"
    chmod 700 "$locks"
    # runc: a bundle for each ordinal; podman: one command line, {group}
    # where the ordinal goes, which numapin groups fills in for each
    if [ "$rt" = runc ]; then
        ords=(0 1)
    else
        ords=('{group}')
        for i in 0 1; do
            mkdir -p "$work/bundles/$base-$i/probe"
            pods+=("np-$run-$base-$i")
        done
    fi
    for i in "${ords[@]}"; do
        if [ "$kind" = statefulset ]; then
            cpus=0-1
            jto=$(expand "$(k8s_value statefulset-env)" "POD_INDEX=$i")
        else
            cpus=$i
            jto=$(k8s_value auto-env)
        fi
        [ -n "$jto" ] || { problems+=("no JAVA_TOOL_OPTIONS in kubernetes.md's block"); return 0; }
        env=$(jq -cn --arg j "$jto,report=/probe/report.json,rescan=$rescan_ms" --arg i "$i" \
            '["POD_INDEX=" + $i, "JAVA_TOOL_OPTIONS=" + $j, "HWLOC_SYNTHETIC=pack:1 numa:2 core:1 pu:1", "HWLOC_THISSYSTEM=1"]')
        args=$(jq -cn --arg java "$jdk/bin/java" --arg cp "/opt/numapin/tierbench/classes:$hdr" \
            '[$java, "-XX:+UseSerialGC", "-Xmx128m", "-cp", $cp, "numapin.tierbench.TierBench",
              "--duration-s", "3", "--working-set-mb", "16", "--tier-threads", "1,1,1"]')
        if [ "$rt" = runc ]; then
            ct_bundle "$base-$i" "$cpus" "$env" "$args" \
                '.mounts += [{destination: "/run/numapin", type: "bind", source: "'"$locks"'", options: ["rbind", "rw"]}]'
            ids+=("np-$run-$base-$i")
        else
            mapfile -t e < <(jq -r '.[] | "--env=" + .' <<<"$env")
            mapfile -t argv < <(jq -r '.[]' <<<"$args")
            pod_argv "$base-$i" --cpuset-cpus "$cpus" -v "$locks:/run/numapin" "${e[@]}" -- "${argv[@]}"
        fi
    done
    if [ "$rt" = runc ]; then
        cmd=(runc run --bundle "$work/bundles/$base-{group}" "np-$run-$base-{group}")
    else
        cmd=("${pod_cmd[@]}")
    fi
    rm -rf "$work/$base"
    HWLOC_SYNTHETIC="pack:1 numa:2 core:1 pu:1" HWLOC_THISSYSTEM=1 \
        timeout 120 "$numapin" groups --groups 2 --logs "$work/$base" -- "${cmd[@]}" >"$work/$base.table" 2>&1 </dev/null || rc=$?
    sed 's/^/  /' "$work/$base.table"
    expect "numapin groups exited $rc" is "$rc" 0
    expect "the table has not two rows of groups that exited 0" is "$(awk '$1 ~ /^[01]$/ && $2 == 0' "$work/$base.table" | wc -l)" 2
    for i in 0 1; do
        log=$work/$base/group-$i.log
        grep -qE '^result throughput=' "$log" 2>/dev/null || { problems+=("$base-$i: TierBench gave no result: $(tail -3 "$log" | tr '\n' ' ')"); continue; }
        expect "$base-$i: no report line at exit" has "$log" '\[numapin\] report '
        if [ "$kind" = auto ]; then
            expect "$base-$i: no auto group=0 groups=1 lock=none" has "$log" '\[numapin\] auto group=0 groups=1 lock=none'
        fi
        expect "$base-$i: not planned on node $i" has "$log" "\\[numapin\\] plan group=[01] groups=[12] domain=node node=$i .* cpus=$i "
        for w in Tier1-worker-1 Tier2-worker-1 Tier3-worker-1; do
            expect "$base-$i: numapin did not place $w on node $i CPU $i" has "$log" "placed \"$w\" tid=[0-9]+ group=[01] node=$i cpus=$i "
            expect "$base-$i: $w did not run on CPU $i (TierBench's placement table)" has "$log" "^  $w +tid=[0-9]+ cpus=$i$"
        done
    done
    # The page of the run, from the pods' reports, as numapin groups --html writes it.
    if "$numapin" report "$work/bundles/$base-0/probe/report.json" "$work/bundles/$base-1/probe/report.json" \
        --synthetic "pack:1 numa:2 core:1 pu:1" --html "$work/$base.html" >/dev/null 2>"$work/$base.err"; then
        echo "  the page of the run: $work/$base.html"
    else
        problems+=("numapin report --html failed: $(head -2 "$work/$base.err")")
    fi
}

# ---- the recipes of docs/harness/containers.md, as written ----

# recipe_script NAME...: the blocks "<!-- test: NAME -->" of containers.md,
# one after another, with this build's directory for NUMAPIN and container
# names made unique.
recipe_script() {
    local n text
    for n in "$@"; do
        text=$(awk -v name="$n" '
            $0 == "<!-- test: " name " -->" { want = 1; next }
            want == 1 && /^```/ { want = 2; next }
            want == 2 && /^```/ { exit }
            want == 2 { print }' "$root/docs/harness/containers.md")
        [ -n "$text" ] || { echo "echo 'no block $n in containers.md'; exit 1"; return 1; }
        text=${text//NUMAPIN=\/opt\/numapin/NUMAPIN=$build}
        text=${text//tierbench-/np-$run-tierbench-}
        printf '%s\n' "$text"
    done
}

# recipe NAME BLOCK...: the blocks run as one script with sh -eu in a
# directory of their own ($work/bundles/NAME), output in out.log.
recipe() {
    local name=$1 dir=$work/bundles/$1
    shift
    mkdir -p "$dir"
    recipe_script "$@" > "$dir/recipe.sh" || { problems+=("$(tail -1 "$dir/recipe.sh")"); return 1; }
    (cd "$dir" && exec timeout 120 sh -eu ./recipe.sh > out.log 2>&1 < /dev/null) ||
        problems+=("the recipe stopped (status $?) at: $(tail -2 "$dir/out.log" | tr '\n' ' ')")
}

case_recipe_runc() {
    local name=recipe-runc dir=$work/bundles/recipe-runc w
    ids+=("np-$run-tierbench-0")
    recipe "$name" runc-bundle runc-run runc-update runc-delete || return 0
    for w in Tier1-worker-1 Tier2-worker-1 Tier3-worker-1; do
        expect "check from the host: no \"$w\" with nstid= planned=1 drift=no" \
            has "$dir/out.log" "^thread \"$w\" tid=[0-9]+ cpus=1 .* nstid=[0-9]+ planned=1 drift=no$"
        expect "check inside: no \"$w\" with planned=1 drift=no" \
            has "$dir/out.log" "^thread \"$w\" tid=[0-9]+ cpus=1 nodes=0 last_cpu=[0-9]+ last_node=0 planned=1 drift=no$"
        expect "\"$w\" not re-placed on CPU 0" has "$dir/out.log" "placed \"$w\" tid=[0-9]+ .* cpus=0 mem=unchanged how=replan"
    done
    expect "no replan onto CPU 0" has "$dir/out.log" '\[numapin\] replan .* allowed=0 was_node=0 was_cpus=1'
}

case_recipe_podman() {
    local name=recipe-podman dir=$work/bundles/recipe-podman w
    pods+=("np-$run-tierbench-1")
    recipe "$name" runc-bundle podman-run || return 0
    for w in Tier1-worker-1 Tier2-worker-1 Tier3-worker-1; do
        expect "check from the host: no \"$w\" with nstid= planned=1 drift=no" \
            has "$dir/out.log" "^thread \"$w\" tid=[0-9]+ cpus=1 .* nstid=[0-9]+ planned=1 drift=no$"
        expect "\"$w\" not placed with its memory policy (CAP_SYS_NICE)" \
            has "$dir/out.log" "placed \"$w\" tid=[0-9]+ group=0 node=0 cpus=1 mem=preferred:0$"
        expect "\"$w\" not re-placed on CPU 0" has "$dir/out.log" "placed \"$w\" tid=[0-9]+ .* cpus=0 mem=unchanged how=replan"
    done
}

# ---- can the runtimes start a container here? ----

# runtime_probe RUNTIME: empty when a plain container runs, else why not.
runtime_probe() {
    local b=$work/bundles/probe-$1 e
    case "$1" in
        runc)
            ct_bundle "probe-$1" 0 '[]' '["/bin/true"]'
            if e=$(runc run --bundle "$b" "np-$run-probe" 2>&1 </dev/null); then e=; fi
            runc delete -f "np-$run-probe" >/dev/null 2>&1 || true ;;
        podman|crun)
            local rt=runc
            [ "$1" = crun ] && rt=crun
            mkdir -p "$b/probe"
            pod_argv "probe-$1" --runtime "$rt" -- /bin/true
            if e=$(timeout 60 "${pod_cmd[@]}" 2>&1 </dev/null); then e=; fi ;;
    esac
    printf '%s' "$e" | tr '\n' ' '
}

# ---- main ----

if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP containers: runc and podman need root here; no case was run"
    echo "containers: 0 passed, 0 failed"
    exit 0
fi
missing=
for t in runc jq "$agent" "$numapin" "$jdk/bin/java" "$jdk/bin/javac" "$hdr" "$build/tierbench/classes/numapin/tierbench/TierBench.class"; do
    command -v "$t" >/dev/null 2>&1 || [ -e "$t" ] || missing+=" $t"
done
if [ -n "$missing" ]; then
    echo "FAIL containers: missing$missing (make all tierbench; scripts/install-deps.sh containers)"
    echo "containers: 0 passed, 1 failed"
    exit 1
fi
case ",$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)," in
    ,0-1,|,0-*) ;;
    *) echo "SKIP containers: the cases need CPUs 0 and 1; no case was run"
       echo "containers: 0 passed, 0 failed"
       exit 0 ;;
esac

trap ct_cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$work"
rm -rf "$work/failed" "$work/bundles" "$work/locks"
ct_rootfs
mkdir -p "$work/classes"
"$jdk/bin/javac" --release 17 -Xlint:all -Werror -d "$work/classes" "$here/Pool.java"
# podman's --ulimit: the hard limits podman's own process has (it lowers
# RLIMIT_NPROC to 32768 for itself), no higher, or the runtime's setrlimit
# fails without CAP_SYS_RESOURCE.
pod_nofile=$(ulimit -Hn)
pod_nproc=$(( $(ulimit -Hu) < 32768 ? $(ulimit -Hu) : 32768 ))

runc_cases="runc-cpuset runc-update runc-cpuset-jdk25 runc-update-jdk25 runc-host-cgroupns runc-seccomp-docker runc-seccomp-docker-sys-nice runc-auto-2 runc-auto-3 runc-pods-statefulset runc-pods-auto recipe-runc"
podman_cases="podman-cpuset podman-update podman-seccomp-default recipe-podman podman-auto-2 podman-pods-statefulset podman-pods-auto podman-seccomp-docker podman-seccomp-docker-sys-nice"

why=$(runtime_probe runc)
if [ -n "$why" ]; then
    echo "FAIL runc: cannot start a container here: $why; not run: $runc_cases"
    failed=$((failed + 1))
else
    echo "runc: $(runc --version | head -1), cgroup $( [ -e /sys/fs/cgroup/cgroup.controllers ] && echo v2 || echo v1)"
    one runc-cpuset case_cpuset runc runc-cpuset
    one runc-update case_update runc runc-update
    if [ -x "$jdk25/bin/java" ]; then
        one runc-cpuset-jdk25 on_jdk "$jdk25" case_cpuset runc runc-cpuset-jdk25
        one runc-update-jdk25 on_jdk "$jdk25" case_update runc runc-update-jdk25
    else
        wanted jdk25 && echo "SKIP runc-cpuset-jdk25, runc-update-jdk25: no $jdk25/bin/java (--jdk25)"
    fi
    if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
        wanted runc-host-cgroupns && echo "SKIP runc-host-cgroupns: cgroup v2 here, where runc gives a cgroup namespace of its own"
    else
        one runc-host-cgroupns case_host_cgroupns
    fi
    if [ -f "$docker_profile" ]; then
        one runc-seccomp-docker case_seccomp_runc runc-seccomp-docker "$docker_profile" '[]'
        one runc-seccomp-docker-sys-nice case_seccomp_runc runc-seccomp-docker-sys-nice "$docker_profile" '["CAP_SYS_NICE"]'
    else
        wanted runc-seccomp && echo "SKIP runc-seccomp-docker, runc-seccomp-docker-sys-nice: no $docker_profile (golang-github-docker-docker-dev)"
    fi
    one runc-auto-2 case_auto runc 2
    one runc-auto-3 case_auto runc 3
    one runc-pods-statefulset pods runc runc-pods-statefulset statefulset
    one runc-pods-auto pods runc runc-pods-auto auto
    one recipe-runc case_recipe_runc
fi

if ! command -v podman >/dev/null; then
    echo "SKIP podman: not installed; not run: $podman_cases"
elif why=$(runtime_probe podman) && [ -n "$why" ]; then
    echo "SKIP podman: cannot start a container here: $why; not run: $podman_cases"
else
    echo "podman: $(podman --version) with runc, --ulimit nofile=$pod_nofile:$pod_nofile --ulimit nproc=$pod_nproc:$pod_nproc"
    one podman-cpuset case_cpuset podman podman-cpuset
    one podman-update case_update podman podman-update
    one podman-seccomp-default case_seccomp_podman podman-seccomp-default default '[]'
    one recipe-podman case_recipe_podman
    one podman-auto-2 case_auto podman 2
    one podman-pods-statefulset pods podman podman-pods-statefulset statefulset
    one podman-pods-auto pods podman podman-pods-auto auto
    if [ -f "$docker_profile" ]; then
        one podman-seccomp-docker case_seccomp_podman podman-seccomp-docker "$docker_profile" '[]'
        one podman-seccomp-docker-sys-nice case_seccomp_podman podman-seccomp-docker-sys-nice "$docker_profile" '["CAP_SYS_NICE"]'
    fi
    if command -v crun >/dev/null && why=$(runtime_probe crun) && [ -n "$why" ]; then
        echo "SKIP crun: cannot start a container here: $why; podman's cases ran with --runtime runc"
    fi
fi

echo "containers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
