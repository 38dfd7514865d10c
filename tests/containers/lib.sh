# shellcheck shell=bash
# Sourced by tests/containers/run.sh: containers made by runc from an OCI
# bundle (config.json + `runc run -d`, `runc update`, `runc exec`, `runc
# kill`, `runc delete`, as containerd drives it) and by podman, the
# JVM's output, and what the host's /proc says of its threads.
#
# Expects: work (build/containers), rootfs, build (the build directory,
# mounted at /opt/numapin), run (a unique word), pod_nofile and pod_nproc
# (podman's --ulimit values); keep (when set, bundles are left).
# shellcheck disable=SC2154 # all of them set by run.sh

ids=()   # runc containers made: deleted at exit
pods=()  # podman containers made: removed at exit

ct_cleanup() {
    local id
    for id in ${ids[@]+"${ids[@]}"}; do
        runc delete -f "$id" >/dev/null 2>&1 || true
    done
    for id in ${pods[@]+"${pods[@]}"}; do
        podman rm -f -t 0 "$id" >/dev/null 2>&1 || true
    done
    wait 2>/dev/null || true
    [ -n "${keep:-}" ] || rm -rf "$work/bundles" "$work/locks"
}

# The rootfs every container shares, read-only: the host's /usr and /etc
# are bind-mounted into it (config.json), /bin, /lib, /lib64, /sbin are
# merged /usr's symbolic links, the rest mount points.
ct_rootfs() {
    rm -rf "$rootfs"
    mkdir -p "$rootfs"/{usr,etc,proc,sys,dev,tmp,run/numapin,locks,opt/numapin,probe}
    local l
    for l in bin lib lib64 sbin; do ln -s "usr/$l" "$rootfs/$l"; done
    (cd "$work" && rm -f config.json && runc spec && mv config.json template.json)
}

# Docker's default capabilities (what containerd and dockerd give a
# container that asks for none).
DEFAULT_CAPS='["CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_FSETID","CAP_FOWNER","CAP_MKNOD","CAP_NET_RAW",
  "CAP_SETGID","CAP_SETUID","CAP_SETFCAP","CAP_SETPCAP","CAP_NET_BIND_SERVICE","CAP_SYS_CHROOT",
  "CAP_KILL","CAP_AUDIT_WRITE"]'

# ct_bundle NAME CPUS ENV_JSON ARGS_JSON [JQ]: the bundle of container NAME
# in $work/bundles/NAME: cpuset CPUS (cpuset.mems 0), a cgroup namespace of
# its own, Docker's default capabilities, no seccomp profile, the process
# ARGS with ENV; JQ (a jq expression, given $caps) is applied last.
ct_bundle() {
    local name=$1 cpus=$2 env=$3 args=$4 extra=${5:-.}
    local b=$work/bundles/$name
    mkdir -p "$b/probe"
    jq --arg rootfs "$rootfs" --arg build "$build" --arg probe "$b/probe" --arg cpus "$cpus" \
       --arg cg "/numapin-ct-$run-$name" --argjson env "$env" --argjson args "$args" \
       --argjson caps "$DEFAULT_CAPS" '
        .root = {path: $rootfs, readonly: true}
        | .hostname = "ct"
        | .process.terminal = false
        | .process.args = $args
        | .process.env = ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"] + $env
        | .process.capabilities = {bounding: $caps, effective: $caps, permitted: $caps}
        | .mounts += [
            {destination: "/usr", type: "bind", source: "/usr", options: ["rbind", "ro"]},
            {destination: "/etc", type: "bind", source: "/etc", options: ["rbind", "ro"]},
            {destination: "/opt/numapin", type: "bind", source: $build, options: ["rbind", "ro"]},
            {destination: "/probe", type: "bind", source: $probe, options: ["rbind", "rw"]},
            {destination: "/tmp", type: "tmpfs", source: "tmpfs", options: ["nosuid", "nodev", "mode=1777"]}]
        | .linux.resources.cpu = {cpus: $cpus, mems: "0"}
        | .linux.cgroupsPath = $cg
        | .linux.namespaces += [{type: "cgroup"}]
        | '"$extra" "$work/template.json" > "$b/config.json"
}

# ct_run NAME: runc run -d of bundle NAME; its output in out.log.
ct_run() {
    local name=$1 b=$work/bundles/$1
    ids+=("np-$run-$name")
    runc run -d --pid-file "$b/pid" --bundle "$b" "np-$run-$name" >"$b/out.log" 2>&1 </dev/null
}

# pod_argv NAME PODMAN_OPTION... -- CMD...: pod_cmd set to the podman run
# of the same rootfs and mounts (/probe: bundles/NAME/probe), with runc
# unless the options give --runtime.  podman raises RLIMIT_NOFILE and
# RLIMIT_NPROC above the hard limits of its own process by default;
# --ulimit gives them at or under those.
pod_argv() {
    local name=$1 b=$work/bundles/$1
    shift
    local opts=() rt=(--runtime runc)
    while [ "$1" != -- ]; do
        [ "$1" = --runtime ] && rt=()
        opts+=("$1")
        shift
    done
    shift
    pod_cmd=(podman run --rm --name "np-$run-$name" --network none ${rt[@]+"${rt[@]}"}
        --ulimit "nofile=$pod_nofile:$pod_nofile" --ulimit "nproc=$pod_nproc:$pod_nproc"
        --cgroupns private -v /usr:/usr:ro -v /etc:/etc:ro -v "$build:/opt/numapin:ro" -v "$b/probe:/probe"
        ${opts[@]+"${opts[@]}"} --rootfs "$rootfs" "$@")
}

# pod_run NAME PODMAN_OPTION... -- CMD...: pod_argv's command, attached, in
# the background, its output in out.log.
pod_run() {
    local b=$work/bundles/$1
    mkdir -p "$b/probe"
    pods+=("np-$run-$1")
    pod_argv "$@"
    "${pod_cmd[@]}" >"$b/out.log" 2>&1 </dev/null &
    echo $! > "$b/podman-run.pid"
}

out() { echo "$work/bundles/$1/out.log"; }

# await FILE REGEX [SECONDS]: until a line of FILE matches (extended regex).
await() {
    local i n=$(( ${3:-30} * 10 ))
    for ((i = 0; i < n; i++)); do
        grep -qE -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# count FILE REGEX: how many lines match.
count() { grep -cE -- "$2" "$1" 2>/dev/null || true; }

# hostpid RUNTIME NAME: the JVM's process id on the host.
hostpid() {
    if [ "$1" = runc ]; then
        cat "$work/bundles/$2/pid"
    else
        podman inspect -f '{{.State.Pid}}' "np-$run-$2"
    fi
}

# ct_exec RUNTIME NAME CMD...: CMD in the container.
ct_exec() {
    local rt=$1 name=$2
    shift 2
    if [ "$rt" = runc ]; then runc exec "np-$run-$name" "$@"; else podman exec "np-$run-$name" "$@"; fi
}

# ct_update RUNTIME NAME CPUS: the container's cpuset, rewritten while it runs.
ct_update() {
    if [ "$1" = runc ]; then
        runc update --cpuset-cpus "$3" "np-$run-$2"
    else
        podman update --cpuset-cpus "$3" "np-$run-$2" >/dev/null
    fi
}

# ct_stop RUNTIME NAME: the JVM told to exit (its stop file), its
# container awaited (20 s at most), then deleted.
ct_stop() {
    local rt=$1 name=$2 i
    touch "$work/bundles/$name/probe/stop"
    for ((i = 0; i < 200; i++)); do
        if [ "$rt" = runc ]; then
            [ "$(runc state "np-$run-$name" 2>/dev/null | jq -r .status)" = running ] || break
        else
            [ "$(podman inspect -f '{{.State.Running}}' "np-$run-$name" 2>/dev/null)" = true ] || break
        fi
        sleep 0.1
    done
    if [ "$rt" = runc ]; then
        runc delete -f "np-$run-$name" >/dev/null 2>&1 || true
    else
        podman rm -f -t 0 "np-$run-$name" >/dev/null 2>&1 || true
        # podman run, attached, has copied the whole output when it ends.
        wait "$(cat "$work/bundles/$name/podman-run.pid")" 2>/dev/null || true
    fi
}

# host_tid PID NSTID: the host's id of the thread whose id in the
# process's own PID namespace is NSTID (the last of NSpid).
host_tid() {
    local t
    for t in /proc/"$1"/task/*; do
        if [ "$(awk '/^NSpid:/ {print $NF}' "$t/status" 2>/dev/null)" = "$2" ]; then
            basename "$t"
            return 0
        fi
    done
    return 1
}

# cpus_of PID TID: the thread's CPUs, as the host's /proc has them.
cpus_of() { awk '/^Cpus_allowed_list:/ {print $2}' "/proc/$1/task/$2/status" 2>/dev/null; }

# workers LOG: "NAME NSTID" of each thread numapin placed at its start.
workers() {
    sed -nE '/how=/d; s/.*\[numapin\] placed "([^"]+)" tid=([0-9]+) .*/\1 \2/p' "$1" | sort -u
}
