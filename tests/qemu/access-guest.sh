# The access-counting scenario, appended to the guest's /scenarios.sh by
# tests/qemu/access.sh, which boots n3 with the plugin
# (tests/qemu/plugin/access.c) and reads what is printed here.
# shellcheck disable=SC2154 # heap_pid, agent, share, byn: set by heap_run and heap_counted (scenarios.sh)
ACCMARK=/access/accmark

# the pid of the one running /jdk/bin/java
java_pid() {
    for p in /proc/[0-9]*; do
        [ "$(readlink "$p/exe" 2>/dev/null)" = "$HEAP_JDK/bin/java" ] && { echo "${p#/proc/}"; return; }
    done
}

# access_run TAG HOW: HeapProbe (heap_run's G1, no pre-touch, heap on node 1)
# run HOW inside one measured window, from before the JVM starts to the end
# of its work (HeapProbe's first count); then, outside the window, the JVM's
# resident pages by frame ("@@@ pages TAG accmark run ..."), and the probe's
# own count of where the heap is.
access_run() {
    tag=$1 how=$2
    rm -f "/tmp/$tag.ready" "/tmp/$tag.go"
    echo "@@@ access window $tag"
    $ACCMARK start || fail "$tag: accmark start"
    HEAP_BG=1 heap_run "$tag" G1 off "$how" 1 ready="/tmp/$tag.ready" go="/tmp/$tag.go"
    i=0
    while [ ! -f "/tmp/$tag.ready" ] && [ $i -lt 1200 ] && kill -0 "$heap_pid" 2>/dev/null; do
        sleep 0.1
        i=$((i + 1))
    done
    $ACCMARK end || fail "$tag: accmark end"
    [ -f "/tmp/$tag.ready" ] || fail "$tag: HeapProbe never finished its work"
    jp=$(java_pid)
    if [ -n "$jp" ]; then
        $ACCMARK pages "$jp" >"/tmp/$tag.pages" || fail "$tag: accmark pages"
        sed "s/^/@@@ pages $tag /" "/tmp/$tag.pages"
        rm -f "/tmp/$tag.pages"
    fi
    touch "/tmp/$tag.go"
    wait "$heap_pid"
    heap_counted "$tag" $? "$agent"
    echo "@@@ access heap $tag share=$share by_node=$byn"
}

scenario_n3_access() {
    $ACCMARK calibrate 3 | sed 's/^/@@@ /' || fail "accmark calibrate"
    access_run access-none none
    access_run access-numactl numactl:1
    access_run access-numapin numapin:group=1,groups=3
    read -r me _ </proc/self/stat # this shell, the scenario's subshell
    # the same, the launcher started on node 0's CPUs, then on node 1's:
    # what the JVM touched before Agent_OnLoad is then on node 0, or local
    taskset -p -c 0-1 "$me" >/dev/null
    access_run access-numapin-from0 numapin:group=1,groups=3
    taskset -p -c 2-3 "$me" >/dev/null
    access_run access-numapin-from1 numapin:group=1,groups=3
    taskset -p -c 0-5 "$me" >/dev/null
    verdict
}
