# Scenarios run inside the QEMU guest (busybox sh), sourced by /init.
# Each scenario_NAME runs in a subshell and succeeds when every check passed.
# Machines (set up by run.sh):
#   n2: 2 nodes x 2 CPUs      node0 = CPUs 0-1, node1 = CPUs 2-3
#   n3: 3 nodes x 2 CPUs      node0 = 0-1, node1 = 2-3, node2 = 4-5,
#       distances 10/21/31, one package (the shape of a sub-NUMA-clustered Xeon)
#   c3: as n3, for the JVM in containers made by runc

AGENT=/numapin/libnumapin.so
CLI=/numapin/numapin
# -Xint: multi-threaded TCG occasionally crashes JIT-compiled code, and the
# probe does little work. No perf data: /tmp is small and nobody reads it.
JAVA="/jdk/bin/java -Xint -XX:+UseSerialGC -Xms16m -Xmx64m -XX:-UsePerfData -cp /tests"
JAVA_TIMEOUT=90

FAILS=0
ok() { echo "check ok   $*"; }
fail() { echo "check FAIL $*"; FAILS=$((FAILS + 1)); }
verdict() { [ "$FAILS" -eq 0 ]; }

# scope_of AGENT_OPTIONS: the scope numapin runs with: scope= when given,
# else jvm, except with groups=1 (every machine here has several nodes, so
# groups defaults to more than one)
scope_of() {
    case ",$1," in
        *,scope=threads,*) echo threads ;;
        *,scope=jvm,*) echo jvm ;;
        *,groups=1,*) echo threads ;;
        *) echo jvm ;;
    esac
}

# probe TAG AGENT_OPTIONS PROBE_ARGS...
# Runs NumaProbe under the agent (log at info into /tmp/TAG.log), prints its
# output and the agent's log; the probe's own verdict counts as one check.
probe() {
    tag=$1 opts=$2
    shift 2
    echo "--- $tag: java -agentpath:libnumapin.so=$opts NumaProbe $*"
    rm -f "/tmp/$tag.log"
    timeout $JAVA_TIMEOUT $JAVA "-agentpath:$AGENT=$opts,log=info:/tmp/$tag.log" \
        NumaProbe "$@" scope="$(scope_of "$opts")" >"/tmp/$tag.out" 2>&1
    rc=$?
    cat "/tmp/$tag.out"
    echo "--- $tag: agent log"
    cat "/tmp/$tag.log" 2>/dev/null || echo "(no agent log)"
    echo "--- $tag: exit $rc"
    if [ $rc -eq 0 ] && grep -q '^probe: PASS$' "/tmp/$tag.out"; then
        ok "$tag: probe passed"
    else
        fail "$tag: probe failed (exit $rc)"
    fi
    # hwloc found the emulated machine itself: no fake topology
    nodes=$(expand "$(cat /sys/devices/system/node/has_cpu)" | wc -w)
    topo=$(grep '\]\[info\]\[numapin\] topology ' "/tmp/$tag.log" 2>/dev/null | head -1)
    if echo "$topo" | grep -q " nodes=$nodes " && ! echo "$topo" | grep -q 'source="\(synthetic\|xml\) '; then
        ok "$tag: agent read the machine: ${topo#*numapin\] }"
    else
        fail "$tag: agent topology line is not this $nodes-node machine: ${topo:-none}"
    fi
}

# placed_as TAG GROUP NODE CPUS MEM
# Every "placed" line of the agent's log reads this group, node, CPUs and
# memory policy (as the agent read them back from the kernel), there is one
# for at least every worker the probe measured, and the summary at exit
# counts no failure.
placed_as() {
    tag=$1 g=$2 n=$3 c=$4 m=$5
    log=/tmp/$tag.log
    placed=$(grep -c '\]\[info\]\[numapin\] placed "' "$log" 2>/dev/null)
    measured=$(grep -c '^probe: worker name=' "/tmp/$tag.out" 2>/dev/null)
    if [ "${placed:-0}" -ge "${measured:-0}" ] && [ "${measured:-0}" -gt 0 ]; then
        ok "$tag: agent logged $placed placements for $measured measured workers"
    else
        fail "$tag: agent logged ${placed:-0} placements for ${measured:-0} measured workers"
    fi
    other=$(grep '\]\[numapin\] placed "' "$log" 2>/dev/null |
        grep -v " group=$g node=$n cpus=$c mem=$m\( \|\$\)" | head -3)
    if [ -z "$other" ]; then
        ok "$tag: every placement reads group=$g node=$n cpus=$c mem=$m"
    else
        fail "$tag: placements not as group=$g node=$n cpus=$c mem=$m: $other"
    fi
    summary=$(grep '\]\[info\]\[numapin\] summary ' "$log" 2>/dev/null | tail -1)
    if [ -z "$summary" ]; then
        fail "$tag: no summary line at exit"
    elif echo "$summary" | grep -q ' \(mem_\)\{0,1\}failed=[1-9]'; then
        fail "$tag: summary counts failures: $summary"
    else
        ok "$tag: summary at exit without failures"
    fi
    if grep -q '\]\[error\]\[numapin\]' "$log" 2>/dev/null; then
        fail "$tag: agent logged an error"
    fi
}

# no_warning TAG: no placement warning. Start-up advice ("advice: ...", such
# as kernel.numa_balancing being on, as it is by default on this kernel) is
# shown but not counted.
no_warning() {
    w=$(grep '\]\[warning\]\[numapin\]' "/tmp/$1.log" 2>/dev/null |
        grep -v '\]\[warning\]\[numapin\] advice: ' | head -1)
    if [ -n "$w" ]; then
        fail "$1: unexpected warning: $w"
    else
        ok "$1: no warning (advice aside)"
    fi
}

has_warning() {
    w=$(grep '\]\[warning\]\[numapin\]' "/tmp/$1.log" 2>/dev/null | grep -i "$2" | head -1)
    if [ -n "$w" ]; then
        ok "$1: warning logged: $w"
    else
        fail "$1: no warning matching '$2' logged"
    fi
}

# cmd_ok DESC COMMAND...: runs a command (with a timeout), prints its output
cmd_ok() {
    desc=$1
    shift
    echo "--- $desc: $*"
    timeout 120 "$@" >/tmp/cmd.out 2>&1
    rc=$?
    cat /tmp/cmd.out
    if [ $rc -eq 0 ]; then ok "$desc (exit 0)"; else fail "$desc (exit $rc)"; fi
    return $rc
}

same() { # same DESC GOT WANT
    if [ "$2" = "$3" ]; then ok "$1: $2"; else fail "$1: got '$2', want '$3'"; fi
}

# one placement run with groups equal to nodes
# place TAG GROUP CPUS MEM: MEM is preferred, bind, none, or "default" for
# no mem= option (which must act as preferred)
place() {
    tag=$1 g=$2 c=$3 m=$4
    opts="group=$g"
    [ "$m" = default ] || opts="$opts,mem=$m"
    want=$m
    [ "$m" = default ] && want=preferred
    probe "$tag" "$opts" cpus="$c" nodes="$g" mem="$want"
    case $want in
        # the kernel reads back the default policy; the docs also name "none"
        none) readback='\(default\|none\)' ;;
        *) readback=$want:$g ;;
    esac
    placed_as "$tag" "$g" "$g" "$c" "$readback"
    no_warning "$tag"
}

# ---- plans against the golden transcripts ----------------------------------
# /expected holds this machine's transcripts of tests/golden/expected/machines
# (qemu-MACHINE.*: tests/unit/test_expected.c ran numapin on
# tests/golden/topologies/qemu-MACHINE.xml, captured in this guest by
# `run.sh --capture-topologies`). Each run "$ numapin plan --topology
# qemu-MACHINE.xml ARGS" of them runs here as "numapin plan ARGS", where hwloc
# reads the emulated machine, and must print the same; only the source="..."
# of the topology line differs, and the nodes' memory sizes of `numapin topo`,
# which move with the kernel.

# live_args LINE: the arguments of a transcript's "$ numapin ..." LINE, for this machine
live_args() {
    echo "$1" | sed 's/^\$ numapin //; s/ --topology [^ ]*//'
}

# live_run LINE: the command of a transcript's "$ numapin ..." LINE run on
# this machine, written as test_expected.c writes a run (the LINE, stdout,
# then "[exit N]" and "[stderr]" with stderr when not 0 and empty); its
# stdout is also kept as /tmp/live/ARGS (spaces as '_')
live_run() {
    args=$(live_args "$1")
    mkdir -p /tmp/live
    out=/tmp/live/$(echo "$args" | tr ' ' _)
    timeout 120 $CLI $args </dev/null >"$out" 2>/tmp/live.err
    rc=$?
    echo "$1"
    cat "$out"
    if [ $rc -ne 0 ] || [ -s /tmp/live.err ]; then
        echo "[exit $rc]"
        if [ -s /tmp/live.err ]; then
            echo "[stderr]"
            cat /tmp/live.err
        fi
    fi
}

# comparable FILE: a transcript without what may differ from the machine
comparable() {
    sed -e 's/^\(topology .*\) source="[^"]*"$/\1/' -e 's/^\(machine .*\) source="[^"]*"$/\1/' \
        -e 's/ memory=[0-9]*MiB/ memory=N/' "$1"
}

# transcript_is FILE [PATTERN]: every run of /expected/FILE (or those whose
# command line matches the grep PATTERN) prints on this machine what FILE says
transcript_is() {
    f=/expected/$1
    if [ ! -s "$f" ]; then
        fail "no transcript $f"
        return
    fi
    grep '^\$ numapin ' "$f" | grep -e "${2:-.}" >/tmp/runs.txt
    if [ ! -s /tmp/runs.txt ]; then
        fail "$1 has no run matching '${2:-.}'"
        return
    fi
    while IFS= read -r line; do
        awk -v l="$line" '$0 == l {on = 1; print; next} on && /^\$ numapin / {exit} on {print}' "$f" >/tmp/want.txt
        live_run "$line" >/tmp/got.txt
        comparable /tmp/want.txt >/tmp/want.cmp
        comparable /tmp/got.txt >/tmp/got.cmp
        if cmp -s /tmp/want.cmp /tmp/got.cmp; then
            ok "numapin $(live_args "$line"): as in $1"
        else
            fail "numapin $(live_args "$line"): differs from $1 (- transcript, + this machine):"
            diff /tmp/want.cmp /tmp/got.cmp
            echo "(if the emulated machine changed on purpose: bash tests/qemu/run.sh --capture-topologies, then make test-unit REGEN=1)"
        fi
    done </tmp/runs.txt
}

# plans_are MACHINE: `numapin topo` and every plan of the machine's transcripts
plans_are() {
    for k in topo.txt plan-node.txt plan-node.json plan-package.txt plan-l3.txt; do
        transcript_is "qemu-$1.$k"
    done
}

# plan_is MACHINE GROUPS: the node-domain plan for GROUPS, table and JSON
plan_is() {
    for k in txt json; do
        transcript_is "qemu-$1.plan-node.$k" " --domain node --groups $2\( --json\)\{0,1\}\$"
    done
}

# plan_warns GROUPS TEXT: the table of the last node-domain plan for GROUPS warned TEXT
plan_warns() {
    out=/tmp/live/plan_--domain_node_--groups_$1
    if grep -q "^warning: $2" "$out" 2>/dev/null; then
        ok "plan --groups $1 warns: $(grep "^warning: $2" "$out")"
    else
        fail "plan --groups $1 does not warn '$2'"
    fi
}

plan_quiet() {
    out=/tmp/live/plan_--domain_node_--groups_$1
    if [ ! -s "$out" ]; then
        fail "plan --groups $1 was not run"
    elif grep -q '^warning' "$out"; then
        fail "plan --groups $1 warns: $(grep '^warning' "$out")"
    else
        ok "plan --groups $1 has no warning"
    fi
}

# Not a test: this machine's topology as hwloc XML between markers, which
# `run.sh --capture-topologies` writes to tests/golden/topologies/qemu-MACHINE.xml
scenario_capture_topology() {
    echo "@@@ XML BEGIN"
    /usr/bin/lstopo-no-graphics --no-io --of xml -
    rc=$?
    echo "@@@ XML END"
    return $rc
}

topology() { # topology NODE CPULIST DISTANCES...
    same "node$1 CPUs" "$(cat /sys/devices/system/node/node$1/cpulist)" "$2"
    same "node$1 distances" "$(cat /sys/devices/system/node/node$1/distance)" "$3"
}

# ---- 2 nodes x 2 CPUs ------------------------------------------------------

scenario_n2_basics() {
    same "nodes" "$(cat /sys/devices/system/node/online)" "0-1"
    topology 0 0-1 "10 21"
    topology 1 2-3 "21 10"
    same "transparent huge pages" "$(cat /sys/kernel/mm/transparent_hugepage/enabled)" "always madvise [never]"
    cmd_ok "java -version" timeout 60 /jdk/bin/java -Xshare:on -version
    cmd_ok "java -version under the agent" timeout 60 $JAVA "-agentpath:$AGENT=log=info" -version
    plans_are n2
    plan_quiet 2
    plan_warns 1 "group 0 spans nodes 0-1"
    verdict
}

scenario_n2_preferred() {
    place n2-pref-g0 0 0-1 default
    place n2-pref-g1 1 2-3 preferred
    verdict
}

scenario_n2_bind() {
    place n2-bind-g0 0 0-1 bind
    place n2-bind-g1 1 2-3 bind
    verdict
}

scenario_n2_none() {
    place n2-none-g0 0 0-1 none
    place n2-none-g1 1 2-3 none
    verdict
}

# A thread that a placed worker starts does not match the globs: it must not
# keep the CPUs and memory policy that Linux copies from the thread creating it.
scenario_n2_spawned() {
    probe n2-spawned "group=1,mem=bind" cpus=2-3 nodes=1 mem=bind workers=1 common=0 spawned=judge
    verdict
}

# one group over both nodes: CPUs 0-3, pages interleaved over nodes 0 and 1
scenario_n2_interleave() {
    probe n2-il "groups=1,group=0,mem=interleave" cpus=0-3 nodes=0-1 mem=interleave
    placed_as n2-il 0 0-1 0-3 interleave:0-1
    has_warning n2-il "group 0 spans nodes 0-1"
    verdict
}

# two JVMs at once, groups 0 and 1: their workers share no CPU
scenario_n2_two_jvms() {
    rm -rf /tmp/rv
    mkdir -p /tmp/rv
    probe n2-two-g0 "group=0" cpus=0-1 nodes=0 rendezvous=/tmp/rv:2 out=/tmp/two-g0 >/tmp/two-g0.console 2>&1 &
    p0=$!
    probe n2-two-g1 "group=1" cpus=2-3 nodes=1 rendezvous=/tmp/rv:2 out=/tmp/two-g1 >/tmp/two-g1.console 2>&1 &
    p1=$!
    wait $p0
    wait $p1
    cat /tmp/two-g0.console /tmp/two-g1.console
    placed_as n2-two-g0 0 0 0-1 preferred:0
    placed_as n2-two-g1 1 1 2-3 preferred:1
    for g in 0 1; do
        grep -q "check ok   n2-two-g$g: probe passed" /tmp/two-g$g.console ||
            fail "JVM of group $g failed"
    done
    if grep -q 'rendezvous: 2 of 2' /tmp/n2-two-g0.out && grep -q 'rendezvous: 2 of 2' /tmp/n2-two-g1.out; then
        ok "both JVMs had their workers running at the same time"
    else
        fail "the two JVMs did not meet"
    fi
    a0=$(sed -n 's/^allowed=\([^ ]*\) ran=.*/\1/p' /tmp/two-g0 2>/dev/null)
    a1=$(sed -n 's/^allowed=\([^ ]*\) ran=.*/\1/p' /tmp/two-g1 2>/dev/null)
    r0=$(sed -n 's/.* ran=\(.*\)/\1/p' /tmp/two-g0 2>/dev/null)
    r1=$(sed -n 's/.* ran=\(.*\)/\1/p' /tmp/two-g1 2>/dev/null)
    disjoint "allowed CPUs" "$a0" "$a1"
    disjoint "CPUs run on" "$r0" "$r1"
    verdict
}

expand() { # 0-2,5 -> "0 1 2 5"
    echo "$1" | tr , '\n' | awk -F- 'NF { hi = (NF > 1) ? $2 : $1; for (i = $1; i <= hi; i++) printf "%d ", i }'
}

disjoint() { # disjoint DESC LIST0 LIST1
    if [ -z "$2" ] || [ -z "$3" ]; then
        fail "$1: missing ($2 / $3)"
        return
    fi
    for c in $(expand "$2"); do
        for d in $(expand "$3"); do
            if [ "$c" = "$d" ]; then
                fail "$1: group 0 ($2) and group 1 ($3) share CPU $c"
                return
            fi
        done
    done
    ok "$1: group 0 ($2) and group 1 ($3) share none"
}

# ---- 3 nodes x 2 CPUs, distances 10/21/31 ----------------------------------

scenario_n3_basics() {
    same "nodes" "$(cat /sys/devices/system/node/online)" "0-2"
    topology 0 0-1 "10 21 31"
    topology 1 2-3 "21 10 21"
    topology 2 4-5 "31 21 10"
    same "transparent huge pages" "$(cat /sys/kernel/mm/transparent_hugepage/enabled)" "always madvise [never]"
    plans_are n3
    plan_quiet 3
    verdict
}

# no groups= given: one group per node; no mem= given: preferred
scenario_n3_default() {
    place n3-def-g0 0 0-1 default
    place n3-def-g1 1 2-3 default
    place n3-def-g2 2 4-5 default
    verdict
}

scenario_n3_bind() {
    place n3-bind-g0 0 0-1 bind
    place n3-bind-g1 1 2-3 bind
    place n3-bind-g2 2 4-5 bind
    verdict
}

# groups=2 on 3 nodes: group 0 = nodes 0-1 (with a warning), group 1 = node 2
scenario_n3_groups2() {
    plan_is n3 2
    plan_warns 2 "group 0 spans nodes 0-1"
    probe n3-g2-0 "groups=2,group=0,mem=interleave" cpus=0-3 nodes=0-1 mem=interleave
    placed_as n3-g2-0 0 0-1 0-3 interleave:0-1
    has_warning n3-g2-0 "group 0 spans nodes 0-1"
    probe n3-g2-1 "groups=2,group=1,mem=bind" cpus=4-5 nodes=2 mem=bind
    placed_as n3-g2-1 1 2 4-5 bind:2
    verdict
}

# groups=6 on 3 nodes: two groups per node, each with one of its two cores
scenario_n3_groups6() {
    plan_is n3 6
    plan_quiet 6
    for g in 0 1 2 3 4 5; do
        n=$((g / 2))
        probe "n3-g6-$g" "groups=6,group=$g" cpus=$g nodes=$n mem=preferred workers=2 common=1
        placed_as "n3-g6-$g" "$g" "$n" "$g" "preferred:$n"
        no_warning "n3-g6-$g"
    done
    verdict
}

# ---- lifecycle and start-up advice ----------------------------------------------

# jvm_run TAG AGENT_OPTIONS JAVA_ARGS...: java (of $JVM_JDK, default /jdk) with the agent (log at info
# into /tmp/TAG.log, output in /tmp/TAG.out); prints the output (of
# -XX:+PrintFlagsFinal only the UseNUMA line) and the log; sets $rc
jvm_run() {
    tag=$1 opts=$2
    shift 2
    echo "--- $tag: java $* under -agentpath:libnumapin.so=$opts"
    rm -f "/tmp/$tag.log"
    timeout $JAVA_TIMEOUT ${JVM_JDK:-/jdk}/bin/java -Xint -Xms16m -Xmx64m -XX:-UsePerfData \
        "-agentpath:$AGENT=$opts,log=info:/tmp/$tag.log" "$@" >"/tmp/$tag.out" 2>&1
    rc=$?
    awk '/[{]/ && !/UseNUMA/ {next} {print}' "/tmp/$tag.out"
    echo "--- $tag: agent log"
    cat "/tmp/$tag.log" 2>/dev/null || echo "(no agent log)"
    echo "--- $tag: exit $rc"
    if grep -q '\]\[error\]\[numapin\]' "/tmp/$tag.log" 2>/dev/null; then
        fail "$tag: agent logged an error"
    fi
}

# has_line TAG LEVEL TEXT / lacks_line TAG TEXT: a numapin line of that level
# containing TEXT (a fixed string) is / no numapin line containing TEXT is in the log
has_line() {
    l=$(grep "\]\[$2\]\[numapin\] " "/tmp/$1.log" 2>/dev/null | grep -F -- "$3" | head -1)
    if [ -n "$l" ]; then ok "$1: $2 line: ${l#*numapin\] }"; else fail "$1: no $2 line containing '$3'"; fi
}

lacks_line() {
    l=$(grep '\]\[numapin\] ' "/tmp/$1.log" 2>/dev/null | grep -F -- "$2" | head -1)
    if [ -z "$l" ]; then ok "$1: no line containing '$2'"; else fail "$1: unexpected line: $l"; fi
}

# scope=jvm,mem=bind: the whole JVM on group 1 (CPUs 2-3) before the heap is
# reserved; every thread stays on CPUs 2-3 and main's Java array on node 1
scenario_n2_jvm_scope() {
    tag=n2-jvm-scope
    jvm_run $tag "group=1,scope=jvm,mem=bind" -XX:+UseSerialGC -cp /tests JvmScopeProbe \
        cpus=2-3 nodes=1 policy=bind:1 mib=24
    if [ $rc -eq 0 ] && grep -q '^probe: PASS$' "/tmp/$tag.out"; then
        ok "$tag: probe passed"
    else
        fail "$tag: probe failed (exit $rc)"
    fi
    has_line $tag info "jvm group=1 node=1 cpus=2-3 mem=bind:1"
    placed=$(grep -c '\]\[info\]\[numapin\] placed "' "/tmp/$tag.log")
    other=$(grep '\]\[info\]\[numapin\] placed "' "/tmp/$tag.log" | grep -v ' group=1 node=1 cpus=2-3 mem=bind:1$')
    if [ "$placed" -ge 1 ] && [ -z "$other" ]; then
        ok "$tag: $placed worker(s) placed as group=1 node=1 cpus=2-3 mem=bind:1"
    else
        fail "$tag: worker placements: $placed, not as expected: $other"
    fi
    no_warning $tag
    verdict
}

# HotSpot's UseNUMA: with the whole JVM placed on node 0 of 2 (the default),
# numapin turns it off before the heap is made; with scope=threads HotSpot
# keeps it on, which numapin reads at VMInit and warns about; off is
# information
scenario_n2_usenuma() {
    jdks=/jdk
    have_jdk25 && jdks="/jdk /jdk25"
    for JVM_JDK in $jdks; do
        t=n2-numa-jvm${JVM_JDK#/jdk}
        jvm_run $t "groups=2,group=0" -XX:+UseParallelGC -XX:+UseNUMA -XX:+PrintFlagsFinal -version
        same "$t: exit" "$rc" 0
        if grep -q 'bool UseNUMA *:\{0,1\}= false' /tmp/$t.out &&
            grep -q 'bool UseNUMAInterleaving *:\{0,1\}= false' /tmp/$t.out; then
            ok "$t: UseNUMA and UseNUMAInterleaving are off in the running JVM"
        else
            fail "$t: UseNUMA or UseNUMAInterleaving still on"
        fi
        has_line $t info "UseNUMA turned off, and UseNUMAInterleaving with it: HotSpot decided it for the whole machine (nodes 0-1) before numapin placed the JVM on node 0"
        lacks_line $t "UseNUMA is on"
    done
    JVM_JDK=/jdk
    jvm_run n2-numa-on "groups=2,group=0,scope=threads" -XX:+UseParallelGC -XX:+UseNUMA -XX:+PrintFlagsFinal -version
    same "n2-numa-on: exit" "$rc" 0
    if grep -q 'bool UseNUMA *:\{0,1\}= true' /tmp/n2-numa-on.out; then
        ok "n2-numa-on: HotSpot kept UseNUMA on"
    else
        fail "n2-numa-on: HotSpot turned UseNUMA off: the check means nothing"
    fi
    has_line n2-numa-on warning "advice: UseNUMA is on in this JVM: HotSpot binds parts of the heap to each of nodes 0-1, not only to this group's node 0"
    jvm_run n2-numa-off "groups=2,group=0" -XX:+UseParallelGC -XX:-UseNUMA -XX:+PrintFlagsFinal -version
    same "n2-numa-off: exit" "$rc" 0
    if grep -q 'bool UseNUMA *:\{0,1\}= false' /tmp/n2-numa-off.out; then
        ok "n2-numa-off: UseNUMA is off"
    else
        fail "n2-numa-off: UseNUMA is not off"
    fi
    has_line n2-numa-off info "advice: UseNUMA is off in this JVM"
    lacks_line n2-numa-off "UseNUMA is on"
    verdict
}

# kernel.numa_balancing: on by default on this kernel (advice), then off
scenario_n3_balancing() {
    same "kernel.numa_balancing (default)" "$(cat /proc/sys/kernel/numa_balancing)" 1
    jvm_run n3-bal-on "groups=3,group=0" -XX:+UseSerialGC -version
    same "n3-bal-on: exit" "$rc" 0
    has_line n3-bal-on info "advice: kernel automatic NUMA balancing is on (kernel.numa_balancing=1): under mem=preferred it neither samples nor migrates this JVM's memory"
    lacks_line n3-bal-on "[warning][numapin] advice: kernel automatic NUMA balancing"
    jvm_run n3-bal-threads "groups=3,group=0,scope=threads" -XX:+UseSerialGC -version
    same "n3-bal-threads: exit" "$rc" 0
    has_line n3-bal-threads warning "advice: kernel automatic NUMA balancing is on (kernel.numa_balancing=1): it cannot move threads numapin binds, but it samples and migrates the memory of the threads without numapin's memory policy (those it does not place"
    sysctl -w kernel.numa_balancing=0
    same "kernel.numa_balancing after sysctl -w" "$(cat /proc/sys/kernel/numa_balancing)" 0
    jvm_run n3-bal-off "groups=3,group=0" -XX:+UseSerialGC -version
    same "n3-bal-off: exit" "$rc" 0
    lacks_line n3-bal-off "NUMA balancing"
    echo 1 >/proc/sys/kernel/numa_balancing
    verdict
}

# the pid of the one running $HEAP_JDK/bin/java
java_pid() {
    for p in /proc/[0-9]*; do
        [ "$(readlink "$p/exe" 2>/dev/null)" = "$HEAP_JDK/bin/java" ] && { echo "${p#/proc/}"; return; }
    done
}

# kernel.numa_balancing's scanner made quick enough for runs of seconds:
# its first scan 100 ms after a process starts, then every 100 ms to 1 s
# (the defaults: 1 s, then 1 s to 60 s); "default" puts the defaults back
quick_scans() {
    mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
    d=/sys/kernel/debug/sched/numa_balancing
    if [ "$1" = default ]; then set -- 1000 1000 60000; else set -- 100 100 1000; fi
    echo "$1" >$d/scan_delay_ms
    echo "$2" >$d/scan_period_min_ms
    echo "$3" >$d/scan_period_max_ms
}

# The kernel's sampled access locality: with kernel.numa_balancing=1, a
# JVM under mem=balancing (MPOL_BIND | MPOL_F_NUMA_BALANCING) is sampled,
# nearly all on its group's node, in the summary and in numapin check, for
# the group and for each worker; under the default mem=preferred the
# kernel samples nothing and both say why; with balancing off, the same.
scenario_n3_access_sampled() {
    quick_scans
    tag=n3-acc-bal
    rm -f /tmp/$tag.ready /tmp/$tag.go /tmp/$tag.json /tmp/$tag.jfr
    # a recording of numapin's access events, each second
    cat >/tmp/$tag.jfc <<'JFC'
<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0" label="numapin access">
  <event name="numapin.AccessLocality"><setting name="enabled">true</setting><setting name="period">1 s</setting></event>
  <event name="numapin.ThreadAccess"><setting name="enabled">true</setting><setting name="period">1 s</setting></event>
</configuration>
JFC
    HEAP_JAVA="$HEAP_JAVA -XX:StartFlightRecording:filename=/tmp/$tag.jfr,settings=/tmp/$tag.jfc" HEAP_BG=1 HEAP_LOG=debug \
        heap_run $tag G1 off numapin:group=1,groups=3,mem=balancing,report=/tmp/$tag.json 1 ready=/tmp/$tag.ready go=/tmp/$tag.go hold=1
    i=0
    while [ ! -f /tmp/$tag.ready ] && [ $i -lt 1200 ] && kill -0 "$heap_pid" 2>/dev/null; do
        sleep 0.1
        i=$((i + 1))
    done
    jp=$(java_pid)
    # the kernel samples a thread only after its scanner has passed over
    # the pages the thread touches: wait (at most 60 s) until it has
    # sampled a reader, as a user of numapin check would
    i=0
    while [ $i -lt 60 ] && kill -0 "$heap_pid" 2>/dev/null; do
        timeout 120 $CLI check "$jp" --kernel-names >/tmp/$tag.check 2>&1
        awk '/^thread "?ForkJoinPool/ { for (i = 1; i <= NF; i++) if ($i ~ /^access_samples=[1-9]/) f = 1 } END { exit !f }' \
            /tmp/$tag.check && break
        sleep 1
        i=$((i + 1))
    done
    echo "$tag: a reader sampled after $i s"
    timeout 120 $CLI check "$jp" --kernel-names --watch 0.5 --count 2 >/tmp/$tag.watch 2>&1
    sleep 2 # a period of numapin.ThreadAccess more while the readers run
    touch /tmp/$tag.go
    wait "$heap_pid"
    heap_counted $tag $? "$agent"
    echo "--- $tag: numapin check $jp"
    cat /tmp/$tag.check
    has_line $tag info "jvm group=1 node=1 cpus=2-3 mem=balancing:1"
    sl=$(grep '\] summary ' /tmp/$tag.log | tail -1)
    samples=$(kv "$sl" access_samples)
    local_=$(kv "$sl" access_local)
    if [ "${samples:-0}" -gt 100 ] && awk -v s="${local_%\%}" 'BEGIN { exit !(s >= 99) }'; then
        ok "$tag: the summary's access_local=$local_ of access_samples=$samples"
    else
        fail "$tag: the summary says access_local=$local_ access_samples=$samples (want >= 99% of > 100)"
    fi
    # the report holds the summary's figures, and its page shows them
    ra=$(grep '^  "access": ' /tmp/$tag.json)
    same "$tag: the report's access" "$ra" \
        "  \"access\": {\"sampled\": true, \"nodes\": \"1\", \"access_local\": ${local_%\%}, \"access_samples\": $samples, \"access_migrated\": $(kv "$sl" access_migrated)},"
    cmd_ok "$tag: numapin report --html" $CLI report /tmp/$tag.json --html /tmp/$tag.html
    same "$tag: the page's access_local" "$(grep -c "^<tr><th>access_local</th><td>${local_%\%}</td></tr>$" /tmp/$tag.html)" 1
    g=$(grep '^access_local nodes=1 ' /tmp/$tag.check)
    if [ "$(kv "$g" access_samples)" -gt 100 ] 2>/dev/null &&
        awk -v s="$(kv "$g" access_local | tr -d %)" 'BEGIN { exit !(s >= 99) }'; then
        ok "$tag: numapin check: $g"
    else
        fail "$tag: numapin check's group line: '$g'"
    fi
    # the live view: the group's line, and the threads' ACC% column
    echo "--- $tag: numapin check $jp --watch"
    cat /tmp/$tag.watch
    wl=$(grep '^access_local nodes=1 ' /tmp/$tag.watch | tail -1)
    wa=$(awk '$NF ~ /^[0-9]+%$/ { v = $NF + 0; if (v > m) m = v } END { print m + 0 }' /tmp/$tag.watch)
    if awk -v s="$(kv "$wl" access_local | tr -d %)" -v t="$wa" 'BEGIN { exit !(s >= 99 && t >= 99) }'; then
        ok "$tag: numapin check --watch: '$wl', a thread at ACC% $wa"
    else
        fail "$tag: numapin check --watch's access line '$wl', ACC% at most $wa"
    fi
    # JFR: the group's events sampled and local, and a worker's
    timeout 300 $HEAP_JDK/bin/jfr print --events numapin.AccessLocality /tmp/$tag.jfr >/tmp/$tag.jfr-access 2>&1
    timeout 300 $HEAP_JDK/bin/jfr print --events numapin.ThreadAccess /tmp/$tag.jfr >/tmp/$tag.jfr-threads 2>&1
    echo "--- $tag: the recording's last numapin.AccessLocality, and its numapin.ThreadAccess of the workers"
    awk '/^numapin.AccessLocality/ { b = "" } { b = b $0 "\n" } END { printf "%s", b }' /tmp/$tag.jfr-access
    jfr_best=$(awk '/^numapin.ThreadAccess/ { s = 0; l = "" } /accessLocal = / { l = $3 } /accessSamples = / { s = $3 }
        /threadName = "ForkJoinPool/ { w = 1 } /^}/ { if (w && s > m) { m = s; best = l " of " s } w = 0 } END { print best }' /tmp/$tag.jfr-threads)
    echo "numapin.ThreadAccess events: $(grep -c '^numapin.ThreadAccess' /tmp/$tag.jfr-threads)"
    ja=$(awk '/^  accessLocal = / { l = $3 } /^  sampled = / { s = $3 } END { print s, l }' /tmp/$tag.jfr-access)
    if [ "${ja%% *}" = true ] && awk -v s="${ja#* }" 'BEGIN { exit !(s + 0 >= 99) }'; then
        ok "$tag: JFR numapin.AccessLocality: sampled, accessLocal ${ja#* }"
    else
        fail "$tag: JFR numapin.AccessLocality: sampled and accessLocal '$ja'"
    fi
    if [ -n "$jfr_best" ] && awk -v s="${jfr_best%% *}" 'BEGIN { exit !(s + 0 >= 99) }'; then
        ok "$tag: JFR numapin.ThreadAccess: the most sampled worker's accessLocal $jfr_best"
    else
        grep '\] JFR: ' /tmp/$tag.log
        head -40 /tmp/$tag.jfr-threads
        fail "$tag: JFR numapin.ThreadAccess: no worker at 99% ('$jfr_best')"
    fi
    # the thread the kernel sampled most, on its own node(s)
    w=$(grep '^thread ' /tmp/$tag.check | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^access_samples=/) { n = substr($i, 16) + 0; if (n > m) { m = n; l = $0 } } } END { print l }')
    if [ -n "$w" ] && awk -v s="$(kv "$w" access_local | tr -d %)" 'BEGIN { exit !(s >= 99) }'; then
        ok "$tag: the most sampled thread: $w"
    else
        fail "$tag: no thread with samples at least 99% on its node in numapin check ('$w')"
    fi

    tag=n3-acc-pref
    heap_run $tag G1 off numapin:group=1,groups=3 1
    has_line $tag info "access: no access locality for this JVM: the kernel samples no access to memory under a preferred policy (mem=preferred); mem=balancing"
    sl=$(grep '\] summary ' /tmp/$tag.log | tail -1)
    same "$tag: the summary's access_local" "$(kv "$sl" access_local)" unsampled

    sysctl -w kernel.numa_balancing=0
    jvm_run n3-acc-off "groups=3,group=1,mem=balancing" -XX:+UseSerialGC -version
    same "n3-acc-off: exit" "$rc" 0
    has_line n3-acc-off info "access: no access locality for this JVM: kernel.numa_balancing=0"
    echo 1 >/proc/sys/kernel/numa_balancing
    quick_scans default
    verdict
}

# A CPU of the group goes offline after the JVM started: the binding reads
# back without it, warned once; workers run on the CPU left.  rescan=0: the
# periodic rescan would see the cpuset shrink and plan again onto the CPU
# left, sometimes before the workers start, and then nothing reads back
# other than planned.
scenario_n3_cpu_offline() {
    tag=n3-offline
    rm -f /tmp/off.ready /tmp/off.go
    jvm_run $tag "groups=3,group=2,rescan=0" -XX:+UseSerialGC -cp /tests OfflineProbe /tmp/off.ready /tmp/off.go 3 \
        >/tmp/off.console 2>&1 &
    pid=$!
    i=0
    while [ ! -e /tmp/off.ready ] && [ $i -lt 1200 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    echo 0 >/sys/devices/system/cpu/cpu5/online
    same "CPUs online with CPU 5 off" "$(cat /sys/devices/system/cpu/online)" 0-4
    touch /tmp/off.go
    wait $pid
    echo 1 >/sys/devices/system/cpu/cpu5/online
    cat /tmp/off.console
    same "CPUs online again" "$(cat /sys/devices/system/cpu/online)" 0-5
    grep -q '\]\[error\]\[numapin\]' /tmp/$tag.log && fail "$tag: agent logged an error"
    has_line $tag info "plan group=2 groups=3 domain=node node=2 slice=1/1 cpus=4-5"
    workers=$(grep -c '^probe: worker name=ForkJoinPool-1-worker-[0-9]* allowed=4$' /tmp/$tag.out)
    same "$tag: workers reading allowed=4" "$workers" 3
    placed=$(grep '\]\[info\]\[numapin\] placed "' /tmp/$tag.log | grep -c ' group=2 node=2 cpus=4 mem=preferred:2$')
    same "$tag: placed lines reading back cpus=4" "$placed" 3
    readback=$(grep '\]\[warning\]\[numapin\] ' /tmp/$tag.log | grep -c 'reads back cpus=4 ')
    same "$tag: read-back warnings (once)" "$readback" 1
    has_line $tag warning "reads back cpus=4 mem=preferred:2, not the planned cpus=4-5 mem=preferred:2"
    verdict
}

# ---- the MultiJVM experiment ---------------------------------------------------

# kv LINE KEY: the value of KEY=... in a "key=value ..." line
kv() {
    echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1
}

# at_least_99 PAGES TOTAL: PAGES is at least 99% of TOTAL (and TOTAL > 0)
at_least_99() {
    [ "${2:-0}" -gt 0 ] && [ $(($1 * 100)) -ge $(($2 * 99)) ]
}

MJ_RATE=4 # requests a second per node's worth of group
# TierBench as `numapin groups --groups N` with threads=Tier* and the default
# mem= (preferred). Same total work for N=3 and N=2: 2,1,1 tier threads and
# MJ_RATE requests/s per node; the group spanning nodes 0-1 gets twice both.
# Each group's output (agent log included) is /tmp/mjN/group-G.log.
multijvm_run() {
    n=$1
    cat >/tmp/mj-tb.sh <<EOT
#!/bin/sh
# group groups
if [ "\$2" = 2 ] && [ "\$1" = 0 ]; then tt=4,2,2 rate=$((2 * MJ_RATE)); else tt=2,1,1 rate=$MJ_RATE; fi
echo "tierbench group=\$1 groups=\$2 tier_threads=\$tt rate=\$rate"
exec /jdk/bin/java -Xint -XX:+UseSerialGC -Xms32m -Xmx64m -XX:-UsePerfData \\
    -cp /tests:/tests/hdrhistogram.jar numapin.tierbench.TierBench --duration-s 8 --steps 4 \\
    --calibrate-ms 500 --max-rate \$rate --working-set-mb 16 --accesses 200 --tier-threads \$tt --locality
EOT
    rm -rf "/tmp/mj$n"
    echo "--- numapin groups --groups $n --options 'threads=Tier*' -- TierBench"
    timeout 300 $CLI groups --groups "$n" --options 'threads=Tier*' --logs "/tmp/mj$n" -- \
        sh /tmp/mj-tb.sh '{group}' "$n" >"/tmp/mj$n.table" 2>&1
    rc=$?
    cat "/tmp/mj$n.table"
    g=0
    while [ $g -lt "$n" ]; do
        echo "--- groups=$n group $g: output and agent log"
        cat "/tmp/mj$n/group-$g.log" 2>/dev/null || echo "(no log)"
        g=$((g + 1))
    done
    same "numapin groups --groups $n: exit" "$rc" 0
}

# mj_row N G: checks group G of run N and prints one row of the table;
# sets share, nodes_share, by_node, total, nodes
mj_row() {
    log=/tmp/mj$1/group-$2.log
    loc=$(grep '^locality ' "$log" 2>/dev/null | tail -1)
    res=$(grep '^result ' "$log" 2>/dev/null | tail -1)
    [ -n "$loc" ] || fail "groups=$1 group $2: no locality line"
    [ -n "$res" ] || fail "groups=$1 group $2: no result line"
    grep -q '\]\[error\]\[numapin\]' "$log" 2>/dev/null && fail "groups=$1 group $2: agent logged an error"
    mem=$(grep '\]\[info\]\[numapin\] placed "Tier' "$log" 2>/dev/null | sed -n 's/.* mem=\([^ ]*\).*/\1/p' | sort -u | tr '\n' ' ')
    nplaced=$(grep -c '\]\[info\]\[numapin\] placed "Tier' "$log" 2>/dev/null)
    nodes=$(kv "$loc" nodes)
    total=$(kv "$loc" total_pages)
    own=$(kv "$loc" own_node_pages)
    share=$(kv "$loc" share)
    onn=$(kv "$loc" nodes_pages)
    nodes_share=$(kv "$loc" nodes_share)
    by_node=$(kv "$loc" by_node)
    printf 'mj: %-6s %-5s %-5s %-7s %-6s %-10s %-11s %-22s %-7s %-10s %-8s %-11s %s\n' "$1" "$2" "$nodes" \
        "$(sed -n 's/^tierbench .*tier_threads=\([^ ]*\).*/\1/p' "$log")" \
        "$(sed -n 's/^tierbench .*rate=\([^ ]*\).*/\1/p' "$log")" "$share" "$nodes_share" "$by_node" \
        "$(kv "$res" throughput)" "$(kv "$res" p99_ms)" "$(kv "$res" sla10)" "$(kv "$res" sla_geomean)" \
        "${nplaced:-0} placed mem=$mem"
}

mj_header() {
    printf 'mj: %-6s %-5s %-5s %-7s %-6s %-10s %-11s %-22s %-7s %-10s %-8s %-11s %s\n' groups group nodes \
        tiers rate own_share nodes_share pages_by_node thruput p99_ms sla10 sla_geomean numapin
}

# 3 groups (one per node) against 2 groups (group 0 over nodes 0-1): where
# the tier threads' first-touched scratch pages land, and the SLA metric.
# Only page locality is asserted: emulation has uniform memory latency, so
# throughput and latency are printed, not judged.
scenario_n3_multijvm() {
    multijvm_run 3
    multijvm_run 2
    echo "--- the experiment (own_share: pages on the group's first node; nodes_share: on any of its nodes)"
    mj_header
    min3=
    for g in 0 1 2; do
        mj_row 3 $g
        same "groups=3 group $g: nodes" "$nodes" "$g"
        if at_least_99 "${own:-0}" "${total:-0}"; then
            ok "groups=3 group $g: $own/$total scratch pages on node $g (>= 99%)"
        else
            fail "groups=3 group $g: ${own:-?}/${total:-?} scratch pages on node $g (< 99%): $by_node"
        fi
        echo "$mem" | grep -q "^preferred:$g \$" || fail "groups=3 group $g: placements not mem=preferred:$g: $mem"
        [ -z "$min3" ] || [ "$(awk -v a="$share" -v b="$min3" 'BEGIN {print (a < b)}')" = 1 ] && min3=$share
    done
    mj_row 2 0
    same "groups=2 group 0: nodes" "$nodes" "0-1"
    echo "$mem" | grep -q '^preferred:0-1 $' && ok "groups=2 group 0: placements read mem=preferred:0-1 (MPOL_PREFERRED_MANY)" ||
        echo "note: groups=2 group 0 placements read mem=$mem"
    if at_least_99 "${onn:-0}" "${total:-0}"; then
        ok "groups=2 group 0: $onn/$total scratch pages on nodes 0-1 (>= 99%)"
    else
        fail "groups=2 group 0: ${onn:-?}/${total:-?} scratch pages on nodes 0-1 (< 99%): $by_node"
    fi
    # not all on one node: the largest single-node count is below the total
    most=$(echo "$by_node" | tr ',' '\n' | sed -n 's/^N[0-9]*=//p' | sort -n | tail -1)
    if [ -n "$most" ] && [ "${total:-0}" -gt 0 ] && [ "$most" -lt "$total" ]; then
        ok "groups=2 group 0: pages on more than one node ($by_node)"
    else
        fail "groups=2 group 0: all pages on one node ($by_node)"
    fi
    if [ -n "$share" ] && [ -n "$min3" ] && [ "$(awk -v a="$share" -v b="$min3" 'BEGIN {print (a < b)}')" = 1 ]; then
        ok "groups=2 group 0: share on its first node $share < lowest own-node share with 3 groups $min3"
    else
        fail "groups=2 group 0: share on its first node ${share:-?} is not below ${min3:-?} (3 groups)"
    fi
    has_warning_in /tmp/mj2/group-0.log "group 0 spans nodes 0-1"
    mj_row 2 1
    same "groups=2 group 1: nodes" "$nodes" "2"
    if at_least_99 "${own:-0}" "${total:-0}"; then
        ok "groups=2 group 1: $own/$total scratch pages on node 2 (>= 99%)"
    else
        fail "groups=2 group 1: ${own:-?}/${total:-?} scratch pages on node 2 (< 99%): $by_node"
    fi
    echo "--- merged tables (numapin groups)"
    cat /tmp/mj3.table /tmp/mj2.table
    verdict
}

has_warning_in() { # has_warning_in LOG TEXT
    w=$(grep '\]\[warning\]\[numapin\]' "$1" 2>/dev/null | grep -i "$2" | head -1)
    if [ -n "$w" ]; then ok "warning logged: ${w#*numapin\] }"; else fail "no warning matching '$2' in $1"; fi
}

# ---- cpusets that change under a running JVM (cgroup v2) ------------------------

# This kernel (Debian's 6.1) sets every task of a cgroup to its new cpuset
# when the cpuset's CPUs change, forgetting each thread's own
# sched_setaffinity (kernels from 6.2 keep it): kubelet and NRI plugins
# rewriting a pod's cpuset unpin its threads.
CG=/sys/fs/cgroup

# cgroup2: cgroup v2 mounted, the cpuset controller given to children
cgroup2() {
    if ! grep -q " $CG cgroup2 " /proc/mounts; then
        mkdir -p $CG && mount -t cgroup2 none $CG || { fail "cannot mount cgroup2 on $CG"; return 1; }
    fi
    grep -qw cpuset $CG/cgroup.subtree_control || echo +cpuset >$CG/cgroup.subtree_control ||
        { fail "cannot enable the cpuset controller"; return 1; }
}

# cpuset_new NAME CPUS MEMS / cpuset_rm NAME (what is left goes back to the root)
cpuset_new() {
    mkdir -p $CG/$1 && echo "$3" >$CG/$1/cpuset.mems && echo "$2" >$CG/$1/cpuset.cpus ||
        { fail "cannot make cpuset $1 (cpus $2, mems $3)"; return 1; }
}
cpuset_rm() {
    for p in $(cat $CG/$1/cgroup.procs 2>/dev/null); do echo "$p" >$CG/cgroup.procs; done
    rmdir $CG/$1 || fail "cannot remove cpuset $1"
}

# in_cpuset NAME TAG AGENT_OPTIONS HOLD N: CpusetProbe with N tier threads
# under the agent, in cpuset NAME, in the background (pid in $jpid);
# waits until it is ready
in_cpuset() {
    rm -f "/tmp/$2.log" "/tmp/$2.out" "$4"
    echo "--- $2: java -agentpath:libnumapin.so=$3 CpusetProbe in cpuset $1 ($(cat $CG/$1/cpuset.cpus))"
    sh -c "echo \$\$ >$CG/$1/cgroup.procs && exec timeout 240 $JAVA -agentpath:$AGENT=$3,log=info:/tmp/$2.log CpusetProbe $4 $5" \
        >"/tmp/$2.out" 2>&1 &
    jpid=$!
    i=0
    while ! grep -q '^probe: ready$' "/tmp/$2.out" 2>/dev/null && [ $i -lt 1200 ] && kill -0 $jpid 2>/dev/null; do
        sleep 0.1
        i=$((i + 1))
    done
    if grep -q '^probe: ready$' "/tmp/$2.out"; then ok "$2: ready, pid $jpid"; else fail "$2: never ready"; cat "/tmp/$2.out"; fi
}

tier_tids() { sed -n 's/^probe: thread name=Tier1-worker-[0-9]* tid=//p' "/tmp/$1.out" | tr '\n' ' '; }
tid_cpus() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$1/task/$2/status" 2>/dev/null; }
# the CPUs of each tier thread of process $1: "TID=CPUS ..."
tier_cpus() {
    out=
    for t in $2; do out="$out $t=$(tid_cpus "$1" "$t")"; done
    echo "${out# }"
}
# the sorted CPU lists of the tier threads: "2 3"
cpu_set() {
    for t in $2; do tid_cpus "$1" "$t"; done | sort | tr '\n' ' ' | sed 's/ $//'
}

# tiers_on DESC PID TIDS WANT: waits (up to 30 s) until the tier threads' sorted
# CPU lists are WANT ("2 3": one on 2, one on 3); says how long it took
tiers_on() {
    t0=$(up)
    i=0
    while [ "$(cpu_set "$2" "$3")" != "$4" ] && [ $i -lt 300 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    took=$(awk -v a="$t0" -v b="$(up)" 'BEGIN {printf "%.1f", b - a}')
    if [ "$(cpu_set "$2" "$3")" = "$4" ]; then
        ok "$1: tier threads on their planned CPUs ($(tier_cpus "$2" "$3")) after ${took} s"
    else
        fail "$1: tier threads on $(tier_cpus "$2" "$3"), not on $4, after ${took} s"
    fi
}

count_lines() { grep -c -- "$2" "$1" 2>/dev/null; }

# A JVM in a cpuset of CPUs 0-3, group 1 of 2 (node 1: CPUs 2-3, one tier
# thread on each, cpus=core). The cpuset is rewritten with the same CPUs;
# then changed to 1-3, which leaves group 1's plan as it was but makes this
# kernel reset every thread: numapin puts the tier threads back (drift);
# narrowed to 0-2 (group 1 is CPU 2 now) and widened to 0-3 again
# (re-plans); and an operator's taskset on one tier thread is undone.
scenario_n2_cpuset() {
    tag=n2-cpuset
    cgroup2 || return 1
    cpuset_new np-a 0-3 0-1 || return 1
    in_cpuset np-a $tag "group=1,groups=2,cpus=core,threads=Tier1-*,rescan=200" /tmp/cs.hold 2
    tids=$(tier_tids $tag)
    tiers_on "$tag: placed" $jpid "$tids" "2 3"
    echo 0-3 >$CG/np-a/cpuset.cpus
    echo "note: right after the same CPUs were written again: $(tier_cpus $jpid "$tids")"
    tiers_on "$tag: cpuset rewritten with the same CPUs" $jpid "$tids" "2 3"
    echo 1-3 >$CG/np-a/cpuset.cpus
    echo "note: right after the cpuset became 1-3: $(tier_cpus $jpid "$tids")"
    tiers_on "$tag: cpuset 1-3 (the plan of group 1 unchanged)" $jpid "$tids" "2 3"
    n=$(count_lines /tmp/$tag.log ' how=drift was=1-3$')
    if [ "${n:-0}" -ge 2 ]; then ok "$tag: the kernel reset both tier threads to 1-3 and numapin put them back ($n how=drift lines)"; else fail "$tag: ${n:-0} tier threads put back with how=drift was=1-3, not 2"; fi
    echo 0-2 >$CG/np-a/cpuset.cpus
    tiers_on "$tag: narrowed to 0-2" $jpid "$tids" "2 2"
    has_line $tag info "replan group=1 groups=2 domain=node node=1 slice=1/1 cpus=2 cpus_mode=core cpukind=performance slots=1 mem=preferred:1 allowed=0-2 was_node=1 was_cpus=2-3"
    echo 0-3 >$CG/np-a/cpuset.cpus
    tiers_on "$tag: widened to 0-3" $jpid "$tids" "2 3"
    has_line $tag info "replan group=1 groups=2 domain=node node=1 slice=1/1 cpus=2-3 cpus_mode=core cpukind=performance slots=2 mem=preferred:1 allowed=0-3 was_node=1 was_cpus=2"
    t=${tids%% *}
    before=$(tid_cpus $jpid $t)
    taskset -p 1 "$t" >/dev/null
    echo "note: tier thread $t after taskset -p 1 (CPU 0): $(tid_cpus $jpid $t)"
    tiers_on "$tag: after taskset on tid $t" $jpid "$tids" "2 3"
    same "$tag: tid $t back on" "$(tid_cpus $jpid $t)" "$before"
    has_line $tag info "tid=$t group=1 node=1 cpus=$before mem=unchanged how=drift was=0"
    cmd_ok "$tag: numapin check" $CLI check $jpid --kernel-names
    n=$(grep -c '^thread "Tier1-worker-[0-9]*" .* planned=[23] drift=no\( \|$\)' /tmp/cmd.out)
    same "$tag: check shows both tier threads on the CPUs numapin set" "$n" 2
    touch /tmp/cs.hold
    wait $jpid
    same "$tag: exit" "$?" 0
    cat /tmp/$tag.out
    echo "--- $tag: agent log"
    cat /tmp/$tag.log
    summary=$(grep '\]\[info\]\[numapin\] summary ' /tmp/$tag.log)
    case $summary in
        *" failed=0 "*" replans=2 "*) ok "$tag: $summary" ;;
        *) fail "$tag: summary: $summary" ;;
    esac
    grep -q '\]\[error\]\[numapin\]' /tmp/$tag.log && fail "$tag: agent logged an error"
    cpuset_rm np-a
    verdict
}

# Two pods on one machine: each JVM in a cpuset of one node's CPUs and
# memory (0-1 and node 0, 2-3 and node 1), both group=auto with a shared
# lock directory: each is group 0 of 1 on its node without a lock, places
# its tier threads within its own cpuset, and `numapin check` shows both.
scenario_n2_two_pods() {
    cgroup2 || return 1
    rm -rf /tmp/np-locks
    mkdir -m 700 /tmp/np-locks
    cpuset_new np-p0 0-1 0 || return 1
    cpuset_new np-p1 2-3 1 || return 1
    in_cpuset np-p0 pod0 "group=auto,lockdir=/tmp/np-locks,threads=Tier1-*,rescan=200" /tmp/pods.hold 2
    p0=$jpid
    in_cpuset np-p1 pod1 "group=auto,lockdir=/tmp/np-locks,threads=Tier1-*,rescan=200" /tmp/pods.hold 2
    p1=$jpid
    tiers_on "pod0" $p0 "$(tier_tids pod0)" "0-1 0-1"
    tiers_on "pod1" $p1 "$(tier_tids pod1)" "2-3 2-3"
    sleep 1 # a rescan pass writes the markers
    cmd_ok "numapin check pod0" $CLI check $p0 --kernel-names
    same "check pod0: tier threads on the CPUs numapin set" \
        "$(grep -c '^thread "Tier1-worker-[0-9]*" tid=[0-9]* cpus=0-1 nodes=0 .* planned=0-1 drift=no\( \|$\)' /tmp/cmd.out)" 2
    grep -q '^numapin group=0 groups=1 replans=0 cpus=0-1 nodes=0 placed=2 drifted=0 ' /tmp/cmd.out &&
        ok "check pod0: numapin group 0 of 1 on node 0" || fail "check pod0: no numapin line for group 0 on node 0"
    cmd_ok "numapin check pod1" $CLI check $p1 --kernel-names
    same "check pod1: tier threads on the CPUs numapin set" \
        "$(grep -c '^thread "Tier1-worker-[0-9]*" tid=[0-9]* cpus=2-3 nodes=1 .* planned=2-3 drift=no\( \|$\)' /tmp/cmd.out)" 2
    grep -q '^numapin group=0 groups=1 replans=0 cpus=2-3 nodes=1 placed=2 drifted=0 ' /tmp/cmd.out &&
        ok "check pod1: numapin group 0 of 1 on node 1" || fail "check pod1: no numapin line for group 0 on node 1"
    touch /tmp/pods.hold
    wait $p0
    same "pod0: exit" "$?" 0
    wait $p1
    same "pod1: exit" "$?" 0
    for g in 0 1; do
        echo "--- pod$g: agent log"
        cat /tmp/pod$g.log
        has_line pod$g info "auto group=0 groups=1 lock=none"
        has_line pod$g info "plan group=0 groups=1 domain=node node=$g slice=1/1 cpus=$((2 * g))-$((2 * g + 1)) "
        n=$(grep -c "\]\[info\]\[numapin\] placed \"Tier1-worker-[0-9]*\" tid=[0-9]* group=0 node=$g cpus=$((2 * g))-$((2 * g + 1)) mem=preferred:$g\$" /tmp/pod$g.log)
        same "pod$g: tier threads placed on node $g with its memory" "$n" 2
        no_warning pod$g
    done
    same "lock files" "$(ls /tmp/np-locks | wc -l)" 0
    cpuset_rm np-p0
    cpuset_rm np-p1
    verdict
}
# ---- a JVM in a container made by runc (cgroup v2, as containerd makes it) ----

# An OCI bundle as containerd would hand runc: the guest's /usr, /lib*,
# /bin, /sbin, the JDK runtime, the agent and the test classes bind-mounted
# read-only into an empty rootfs, its own PID, mount, network, UTS, IPC and
# cgroup namespaces (cgroup v2 mounted inside at /sys/fs/cgroup, its root
# the container's cgroup), Docker's default capabilities, a cpuset.
# The guest's root is the initramfs, where pivot_root(2) fails (EINVAL):
# runc runs with --no-pivot (containerd's no_pivot option), as it must on
# a ramdisk.
CT=/tmp/ct
CAPS='"CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_FSETID","CAP_FOWNER","CAP_MKNOD","CAP_NET_RAW","CAP_SETGID","CAP_SETUID","CAP_SETFCAP","CAP_SETPCAP","CAP_NET_BIND_SERVICE","CAP_SYS_CHROOT","CAP_KILL","CAP_AUDIT_WRITE"'

# ct_rootfs: the rootfs the containers share: mount points only
ct_rootfs() {
    rm -rf $CT
    mkdir -p $CT/rootfs/proc $CT/rootfs/sys $CT/rootfs/dev $CT/rootfs/tmp $CT/rootfs/probe $CT/rootfs/run/numapin $CT/rootfs/etc \
        $CT/rootfs/opt/numapin
    for d in /usr /bin /sbin /lib /lib64 /jdk /numapin /tests; do
        [ -d $d ] && mkdir -p $CT/rootfs$d
    done
    # root's entry, as an image has it: the JVM names its perf data
    # directory (/tmp/hsperfdata_root, which numapin check reads) after it
    echo 'root:x:0:0:root:/root:/bin/sh' >$CT/rootfs/etc/passwd
}

# ct_bundle NAME CPUS MEMS ARGS_JSON [MOUNTS_JSON]: $CT/NAME/config.json
# (rootfs $CT/rootfs, /probe = $CT/NAME/probe, read-write; the agent's
# directory also at /opt/numapin, where kubernetes.md's manifests have it).
# When set: CT_ENV, more "NAME=VALUE" items of process.env (JSON, comma
# separated); CT_CAPS, the capabilities instead of $CAPS; CT_SECCOMP, a
# file holding linux.seccomp.
ct_bundle() {
    b=$CT/$1
    mkdir -p $b/probe
    binds="{\"destination\":\"/opt/numapin\",\"type\":\"bind\",\"source\":\"/numapin\",\"options\":[\"rbind\",\"ro\"]},"
    for d in /usr /bin /sbin /lib /lib64 /jdk /numapin /tests; do
        [ -d $d ] && binds="$binds{\"destination\":\"$d\",\"type\":\"bind\",\"source\":\"$d\",\"options\":[\"rbind\",\"ro\"]},"
    done
    caps=${CT_CAPS:-$CAPS}
    seccomp=
    [ -z "${CT_SECCOMP:-}" ] || seccomp="\"seccomp\": $(cat "$CT_SECCOMP"),"
    cat >$b/config.json <<JSON
{
  "ociVersion": "1.0.2-dev",
  "process": {
    "terminal": false,
    "user": {"uid": 0, "gid": 0},
    "args": $4,
    "env": ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"${CT_ENV:+, $CT_ENV}],
    "cwd": "/",
    "capabilities": {"bounding": [$caps], "effective": [$caps], "permitted": [$caps]},
    "noNewPrivileges": true
  },
  "root": {"path": "$CT/rootfs", "readonly": true},
  "hostname": "ct-$1",
  "mounts": [
    {"destination": "/proc", "type": "proc", "source": "proc"},
    {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
    {"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": ["nosuid", "noexec", "nodev", "ro"]},
    {"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup", "options": ["nosuid", "noexec", "nodev", "relatime", "ro"]},
    {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev", "mode=1777"]},
    $binds
    ${5:+$5,}
    {"destination": "/probe", "type": "bind", "source": "$b/probe", "options": ["rbind", "rw"]}
  ],
  "linux": {
    $seccomp
    "resources": {"cpu": {"cpus": "$2", "mems": "$3"}},
    "cgroupsPath": "/np-ct-$1",
    "namespaces": [{"type": "pid"}, {"type": "network"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"}, {"type": "cgroup"}]
  }
}
JSON
}

# ct_run NAME: runc run -d (in the background, as containerd's shim), its
# output in $CT/NAME/out.log, the JVM's pid (in the guest) in $CT/NAME/pid
ct_run() {
    timeout 60 runc run -d --no-pivot --pid-file $CT/$1/pid --bundle $CT/$1 np-$1 \
        >$CT/$1/out.log 2>&1 </dev/null ||
        { fail "$1: runc run failed: $(cat $CT/$1/out.log)"; return 1; }
    ok "$1: runc run -d: container np-$1, JVM pid $(cat $CT/$1/pid) in the guest"
}

# ct_await NAME REGEX [SECONDS]: until the container's output has a line matching
ct_await() {
    i=0
    while ! grep -q -- "$2" $CT/$1/out.log 2>/dev/null && [ $i -lt $((${3:-90} * 10)) ]; do
        sleep 0.1
        i=$((i + 1))
    done
    grep -q -- "$2" $CT/$1/out.log
}

# ct_delete NAME: the container awaited until it no longer runs (30 s), deleted
ct_delete() {
    i=0
    while [ "$(runc state np-$1 2>/dev/null | grep -o '"status": *"[a-z]*"' | grep -o '[a-z]*"$')" = 'running"' ] && [ $i -lt 300 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    runc delete -f np-$1 >/dev/null 2>&1
}

# ct_stop NAME: the stop file, then ct_delete
ct_stop() {
    touch $CT/$1/probe/stop
    ct_delete $1
}

# guest_tid PID NSTID: the guest's id of the thread whose id in the
# container's PID namespace is NSTID
guest_tid() {
    for t in /proc/$1/task/*; do
        [ "$(awk '/^NSpid:/ {print $NF}' $t/status 2>/dev/null)" = "$2" ] && { echo ${t##*/}; return 0; }
    done
    return 1
}

# all_threads_on PID CPUS: every thread of the process may run on CPUS only
# (its variables: at_*, as every function's here are global)
all_threads_on() {
    at_bad=
    for at_t in /proc/$1/task/*; do
        at_c=$(tid_cpus $1 ${at_t##*/})
        [ "$at_c" = "$2" ] || at_bad="$at_bad ${at_t##*/}:$at_c"
    done
    at_n=$(ls /proc/$1/task | wc -l)
    if [ -z "$at_bad" ]; then ok "$3: all $at_n threads of the JVM on CPUs $2"; else fail "$3: threads of the JVM not on CPUs $2:$at_bad"; fi
}

# ct_tasks_on PID CPUS DESC: waits (30 s) until every thread is on CPUS
ct_tasks_on() {
    ct_i=0
    while [ $ct_i -lt 300 ]; do
        ct_bad=
        for ct_t in /proc/$1/task/*; do [ "$(tid_cpus $1 ${ct_t##*/})" = "$2" ] || ct_bad=1; done
        [ -z "$ct_bad" ] && break
        sleep 0.1
        ct_i=$((ct_i + 1))
    done
    all_threads_on "$1" "$2" "$3"
}

RUNC_JAVA='"/jdk/bin/java", "-Xint", "-XX:+UseSerialGC", "-Xms16m", "-Xmx64m", "-XX:-UsePerfData"'

# ct_workers NAME: "NAME:NSTID" of each fork-join worker the probe reported
ct_workers() {
    sed -n 's/^worker name="\(ForkJoinPool-[0-9]*-worker-[0-9]*\)" tid=\([0-9]*\) .*/\1:\2/p' $CT/$1/out.log
}

# ct_resize NAME PID CPUS WHAT: `runc update --cpuset-cpus CPUS` (within
# node 1), as the CPU manager resizes a pod; awaited (30 s each): a new
# replan line on CPUS, the whole JVM re-placed there, each fork-join
# worker's latest placement on CPUS (how=replan), every thread on CPUS
ct_resize() {
    log=$CT/$1/probe/np.log
    rs_n=$(grep -c '\]\[numapin\] replan ' $log)
    t0=$(up)
    runc update --cpuset-cpus $3 np-$1 && ok "$1: runc update --cpuset-cpus $3 ($4)" || fail "$1: runc update --cpuset-cpus $3 failed"
    i=0
    while [ "$(grep -c '\]\[numapin\] replan ' $log)" -le "$rs_n" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    took=$(awk -v a="$t0" -v b="$(up)" 'BEGIN {printf "%.1f", b - a}')
    l=$(grep '\]\[numapin\] replan ' $log | tail -1)
    case $l in
        *" node=1 slice=1/1 cpus=$3 "*" allowed=$3 "*) ok "$1 ($4): after ${took} s: ${l#*numapin\] }" ;;
        *) fail "$1 ($4): the latest replan line '${l#*numapin\] }', want node=1 cpus=$3 allowed=$3" ;;
    esac
    l=$(grep '\]\[numapin\] jvm ' $log | tail -1)
    case $l in
        *" cpus=$3 mem=unchanged how=replan"*) ok "$1 ($4): ${l#*numapin\] }" ;;
        *) fail "$1 ($4): the latest jvm line '${l#*numapin\] }', want cpus=$3 how=replan" ;;
    esac
    for w in $(ct_workers $1); do
        i=0
        while [ $i -lt 300 ]; do
            l=$(grep "\]\[numapin\] placed \"${w%%:*}\" tid=${w#*:} " $log | tail -1)
            case $l in *" cpus=$3 mem=unchanged how=replan"*) break ;; esac
            sleep 0.1
            i=$((i + 1))
        done
        case $l in
            *" cpus=$3 mem=unchanged how=replan"*) ok "$1 ($4): ${l#*numapin\] }" ;;
            *) fail "$1 ($4): \"${w%%:*}\" last placed as '${l#*numapin\] }', want cpus=$3 how=replan" ;;
        esac
    done
    ct_tasks_on $2 $3 "$1 ($4)"
}

# A JVM in a container made by runc, its cpuset node 0 (CPUs 0-1, memory
# 0): numapin plans on that cpuset (group 0 of 1), places the fork-join
# workers and the whole JVM there, memory preferred on node 0; numapin
# check run inside the container names the workers by their tids there. Then
# `runc update --cpuset-cpus 2-3 --cpuset-mems 1` moves the container to
# node 1 (this kernel resets every thread's CPUs to 2-3 and rebinds their
# policies): numapin re-plans within its rescan period, re-places the
# workers and the whole JVM on 2-3, and new fork-join workers get node 1's
# policy and their pages there. Last the cpuset shrinks to CPU 3 and grows
# back to 2-3: each a re-plan, every worker and the whole JVM re-placed.
scenario_n3_runc() {
    tag=runc-move
    command -v runc >/dev/null || { fail "no runc in the guest"; return 1; }
    echo "runc: $(runc --version | head -1)"
    cgroup2 || return 1
    ct_rootfs
    ct_bundle $tag 0-1 0 "[$RUNC_JAVA, \"-agentpath:$AGENT=scope=jvm,rescan=500,log=info:/probe/np.log\", \"-cp\", \"/tests\", \"RuncProbe\", \"2\", \"/probe/stop\", \"/probe/move\", \"200\"]"
    echo "--- $tag: config.json"
    cat $CT/$tag/config.json
    ct_run $tag || return 1
    pid=$(cat $CT/$tag/pid)
    log=$CT/$tag/probe/np.log
    if ct_await $tag '^ready pid=' 120; then ok "$tag: the JVM started its workers"; else
        fail "$tag: the JVM never got ready"; cat $CT/$tag/out.log; cat $log; runc delete -f np-$tag; return 1; fi
    cg=$(cat /proc/$pid/cgroup)
    same "$tag: the JVM's cgroup, seen from the guest" "$cg" "0::/np-ct-$tag"
    inside=$(runc exec np-$tag sh -c 'cat /proc/self/cgroup /sys/fs/cgroup/cpuset.cpus.effective /sys/fs/cgroup/cpuset.mems.effective' 2>&1 | tr '\n' ' ')
    same "$tag: from inside (runc exec), its cgroup, CPUs and memory nodes" "$inside" "0::/ 0-1 0 "
    ln -sf $log /tmp/$tag.log # has_line reads /tmp/TAG.log
    # hwloc, in the container, sees the machine restricted to its cpuset:
    # node 0, CPUs 0-1
    has_line $tag info "topology nodes=1 packages=1 l3=1 cores=2 pus=2 smt=1 allowed=0-1 source=\"this system\""
    has_line $tag info "plan group=0 groups=1 domain=node node=0 slice=1/1 cpus=0-1 "
    has_line $tag info "jvm group=0 node=0 cpus=0-1 mem=preferred:0"
    n=$(grep -c '\]\[info\]\[numapin\] placed "ForkJoinPool-1-worker-[0-9]*" tid=[0-9]* group=0 node=0 cpus=0-1 mem=preferred:0$' $log)
    same "$tag: fork-join workers placed on node 0 (CPUs 0-1, mem=preferred:0)" "$n" 2
    n=$(grep -c '^worker name="ForkJoinPool-1-worker-[0-9]*" tid=[0-9]* cpus=0-1 policy=prefer:0$' $CT/$tag/out.log)
    same "$tag: workers see CPUs 0-1 and policy prefer:0 themselves" "$n" 2
    all_threads_on $pid 0-1 "$tag: scope=jvm"
    tids=
    for nst in $(sed -n 's/^worker name="ForkJoinPool-1-worker-[0-9]*" tid=\([0-9]*\) .*/\1/p' $CT/$tag/out.log); do
        tids="$tids $(guest_tid $pid $nst)"
    done
    echo "note: workers' guest tids:$tids"
    # numapin check inside the container (runc exec): the JVM is its pid 1,
    # each worker shown by its tid there, on the CPUs numapin planned; under
    # -XX:-UsePerfData check does not ask the JVM, and names threads as the
    # kernel does (their first 15 bytes)
    inside=$(runc exec np-$tag /opt/numapin/numapin check 1 2>&1)
    echo "--- $tag: numapin check 1, inside the container"
    echo "$inside"
    for w in $(ct_workers $tag); do
        k=$(echo "${w%%:*}" | cut -c1-15)
        n=$(echo "$inside" | grep -c "^thread \"$k\" tid=${w#*:} cpus=0-1 .* name=kernel planned=0-1 drift=no\$")
        same "$tag: check inside shows \"${w%%:*}\" (\"$k\") by its tid in the container, planned=0-1" "$n" 1
    done
    same "$tag: check inside sees no other namespace's ids (nstid=)" "$(echo "$inside" | grep -c nstid=)" 0

    # moved to node 1
    t0=$(up)
    runc update --cpuset-cpus 2-3 --cpuset-mems 1 np-$tag && ok "$tag: runc update --cpuset-cpus 2-3 --cpuset-mems 1" ||
        fail "$tag: runc update failed"
    echo "note: right after runc update: $(tier_cpus $pid "$tids") (cgroup: $(cat $CG/np-ct-$tag/cpuset.cpus) mems $(cat $CG/np-ct-$tag/cpuset.mems))"
    i=0
    while ! grep -q '\]\[numapin\] replan ' $log && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    took=$(awk -v a="$t0" -v b="$(up)" 'BEGIN {printf "%.1f", b - a}')
    if grep -q '\]\[numapin\] replan ' $log; then ok "$tag: replan logged ${took} s after runc update (rescan=500 ms)"; else fail "$tag: no replan within 30 s"; fi
    has_line $tag info "replan group=0 groups=1 domain=node node=1 slice=1/1 cpus=2-3 "
    has_line $tag info " mem=preferred:1 allowed=2-3 was_node=0 was_cpus=0-1"
    has_line $tag warning "group 0 moved from node 0 to node 1: threads placed before keep their memory policy preferred:0"
    has_line $tag info "jvm group=0 node=1 cpus=2-3 mem=unchanged how=replan"
    i=0
    while [ "$(grep -c '\]\[info\]\[numapin\] placed "ForkJoinPool-1-worker-[0-9]*" tid=[0-9]* group=0 node=1 cpus=2-3 mem=unchanged how=replan' $log)" -lt 2 ] && [ $i -lt 100 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    n=$(grep -c '\]\[info\]\[numapin\] placed "ForkJoinPool-1-worker-[0-9]*" tid=[0-9]* group=0 node=1 cpus=2-3 mem=unchanged how=replan' $log)
    same "$tag: fork-join workers re-placed on node 1 (how=replan)" "$n" 2
    tiers_on "$tag: workers after the move" $pid "$tids" "2-3 2-3"
    ct_tasks_on $pid 2-3 "$tag: scope=jvm after the move"
    echo "note: how=drift lines (threads 6.1's cpuset write reset, put back): $(grep -c 'how=drift' $log)"
    # as numapin warned: this kernel does not remap a preferred node when
    # cpuset.mems changes; the cpuset's mems (1) now decide where their
    # pages go, and cgroup v2 migrated what they had to node 1
    for t in $tids; do
        p=$(head -1 /proc/$pid/task/$t/numa_maps | cut -d' ' -f2)
        same "$tag: worker tid $t keeps its policy after the move (the kernel reads back)" "$p" "prefer:0"
    done
    echo "note: the JVM's pages by node after the move (numa_maps: cgroup v2 migrates them to the new mems; file pages of the initramfs may stay): $(awk '{for (i = 3; i <= NF; i++) if ($i ~ /^N[0-9]+=/) {split(substr($i, 2), a, "="); n[a[1]] += a[2]}} END {for (k in n) printf "N%s=%d ", k, n[k]}' /proc/$pid/numa_maps)"
    # new workers: node 1's policy, their pages there
    touch $CT/$tag/probe/move
    ct_await $tag '^moved-ready' 60 && ok "$tag: a second fork-join pool started" || fail "$tag: no second pool"
    n=$(grep -c '\]\[info\]\[numapin\] placed "ForkJoinPool-2-worker-[0-9]*" tid=[0-9]* group=0 node=1 cpus=2-3 mem=preferred:1$' $log)
    same "$tag: new fork-join workers placed on node 1 (CPUs 2-3, mem=preferred:1)" "$n" 2
    grep '^worker name="ForkJoinPool-2' $CT/$tag/out.log
    n=$(grep -c '^worker name="ForkJoinPool-2-worker-[0-9]*" tid=[0-9]* cpus=2-3 policy=prefer:1 pages=\(N1=[0-9]*\)$' $CT/$tag/out.log)
    same "$tag: new workers' 8 MiB buffers: policy prefer:1, every page on node 1" "$n" 2
    ct_resize $tag $pid 3 shrunk
    ct_resize $tag $pid 2-3 grown
    ct_stop $tag
    echo "--- $tag: container output"
    cat $CT/$tag/out.log
    echo "--- $tag: agent log"
    cat $log
    summary=$(grep '\]\[info\]\[numapin\] summary ' $log | tail -1)
    case $summary in
        *" failed=0 "*" replans=3 mem_pages=1:"[0-9]*" mem_local=100.0% "*) ok "$tag: ${summary#*numapin\] }" ;;
        *) fail "$tag: summary: ${summary:-none}" ;;
    esac
    grep -q '\]\[error\]\[numapin\]' $log && fail "$tag: agent logged an error"
    [ -d $CG/np-ct-$tag ] && fail "$tag: runc delete left cgroup np-ct-$tag" || ok "$tag: container deleted, its cgroup gone"
    verdict
}

# auto_bundle NAME: a container that sees the whole machine, its JVM
# group=auto with the lock directory $CT/locks bind-mounted at /run/numapin
auto_bundle() {
    ct_bundle $1 0-5 0-2 "[$RUNC_JAVA, \"-agentpath:$AGENT=group=auto,lockdir=/run/numapin,rescan=500,log=info:/probe/np.log\", \"-cp\", \"/tests\", \"RuncProbe\", \"2\", \"/probe/stop\", \"/probe/move\", \"200\"]" \
            "{\"destination\": \"/run/numapin\", \"type\": \"bind\", \"source\": \"$CT/locks\", \"options\": [\"rbind\", \"rw\"]}"
}

# auto_group NAME: the group the container's JVM took, from its auto line
auto_group() { sed -n 's/.*\[numapin\] auto group=\([0-9]*\) groups=3$/\1/p' $CT/$1/probe/np.log | head -1; }

# auto_holder G: N of the container autoN (auto0 to auto2) whose JVM took group G
auto_holder() {
    for h in 0 1 2; do
        [ "$(auto_group auto$h)" = "$1" ] && { echo $h; return 0; }
    done
    return 1
}

# Three containers that see the whole machine (cpuset 0-5, memory 0-2),
# all group=auto with one lock directory bind-mounted at /run/numapin (a
# hostPath): they take groups 0, 1 and 2, one per node, each JVM and its
# fork-join workers on its node's CPUs with its node's memory. The
# container of group 0 killed (runc kill KILL), a fourth takes group 0.
scenario_n3_runc_auto() {
    command -v runc >/dev/null || { fail "no runc in the guest"; return 1; }
    cgroup2 || return 1
    ct_rootfs
    mkdir -m 700 $CT/locks
    for c in 0 1 2; do
        auto_bundle auto$c
        ct_run auto$c || return 1
    done
    taken=
    for c in 0 1 2; do
        ct_await auto$c '^ready pid=' 180 && ok "auto$c: the JVM started its workers" || { fail "auto$c: never ready"; cat $CT/auto$c/out.log; }
    done
    echo "note: lock directory while they run: $(ls $CT/locks | tr '\n' ' ')"
    for c in 0 1 2; do
        log=$CT/auto$c/probe/np.log
        ln -sf $log /tmp/auto$c.log
        g=$(auto_group auto$c)
        echo "note: container auto$c took group ${g:-none}"
        taken="$taken ${g:-none}"
        [ -n "$g" ] || { fail "auto$c: no auto line"; continue; }
        cpus=$((2 * g))-$((2 * g + 1))
        has_line auto$c info "plan group=$g groups=3 domain=node node=$g slice=1/1 cpus=$cpus "
        has_line auto$c info "jvm group=$g node=$g cpus=$cpus mem=preferred:$g"
        n=$(grep -c "\]\[info\]\[numapin\] placed \"ForkJoinPool-1-worker-[0-9]*\" tid=[0-9]* group=$g node=$g cpus=$cpus mem=preferred:$g\$" $log)
        same "auto$c: fork-join workers placed on node $g" "$n" 2
        n=$(grep -c "^worker name=\"ForkJoinPool-1-worker-[0-9]*\" tid=[0-9]* cpus=$cpus policy=prefer:$g\$" $CT/auto$c/out.log)
        same "auto$c: workers see CPUs $cpus and policy prefer:$g themselves" "$n" 2
        all_threads_on "$(cat $CT/auto$c/pid)" $cpus "auto$c: scope=jvm"
        no_warning auto$c
    done
    same "groups taken by the 3 containers" "$(echo $taken | tr ' ' '\n' | sort | tr '\n' ' ')" "0 1 2 "
    # The container of group 1 given CPUs 1-5: the plan of group 1 (node
    # 1, CPUs 2-3) stays, but this kernel resets every thread of the
    # container to 1-5; numapin puts them back (how=drift)
    c=$(auto_holder 1)
    pid=$(cat $CT/auto$c/pid)
    log=$CT/auto$c/probe/np.log
    runc update --cpuset-cpus 1-5 np-auto$c && ok "auto$c (group 1): runc update --cpuset-cpus 1-5" || fail "auto$c: runc update failed"
    echo "note: right after the update: $(for t in /proc/$pid/task/*; do tid_cpus $pid ${t##*/}; done | sort | uniq -c | tr '\n' ' ' | tr -s ' ')"
    ct_tasks_on $pid 2-3 "auto$c: after cpuset 1-5"
    i=0
    while [ "$(grep -c '\]\[info\]\[numapin\] placed "ForkJoinPool-1-worker-[0-9]*" tid=[0-9]* group=1 node=1 cpus=2-3 mem=unchanged how=drift was=1-5$' $log)" -lt 2 ] && [ $i -lt 100 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    n=$(grep -c '\]\[info\]\[numapin\] placed "ForkJoinPool-1-worker-[0-9]*" tid=[0-9]* group=1 node=1 cpus=2-3 mem=unchanged how=drift was=1-5$' $log)
    same "auto$c: fork-join workers the kernel reset to 1-5 put back on 2-3 (how=drift was=1-5)" "$n" 2
    has_line auto$c info "jvm group=1 node=1 cpus=2-3 mem=unchanged how=drift threads="
    lacks_line auto$c "] replan "
    g1=auto$c
    # group 0's container killed, as kubelet ends a pod past its grace
    # period: the JVM's lock goes with it, and a new container takes group 0
    killed=auto$(auto_holder 0)
    runc kill np-$killed KILL && ok "$killed (group 0): runc kill np-$killed KILL" || fail "$killed: runc kill failed"
    ct_delete $killed
    auto_bundle auto3
    if ct_run auto3 && ct_await auto3 '^ready pid=' 180; then
        ln -sf $CT/auto3/probe/np.log /tmp/auto3.log
        g=$(auto_group auto3)
        same "auto3, started after $killed was killed: the group it took" "${g:-none}" 0
        has_line auto3 info "jvm group=0 node=0 cpus=0-1 mem=preferred:0"
        all_threads_on "$(cat $CT/auto3/pid)" 0-1 "auto3: scope=jvm"
    else
        fail "auto3: never ready"
        cat $CT/auto3/out.log
    fi
    for c in 0 1 2 3; do [ auto$c = $killed ] || ct_stop auto$c; done
    summary=$(grep '\]\[info\]\[numapin\] summary ' $CT/$g1/probe/np.log | tail -1)
    case $summary in
        *" drift="[1-9]*" replans=0 "*) ok "$g1: ${summary#*numapin\] }" ;;
        *) fail "$g1: summary without drift=N replans=0: ${summary:-none}" ;;
    esac
    for c in 0 1 2 3; do
        echo "--- auto$c: container output"
        cat $CT/auto$c/out.log
        echo "--- auto$c: agent log"
        cat $CT/auto$c/probe/np.log
        [ auto$c = $killed ] && continue # killed: no summary
        grep -q '\]\[info\]\[numapin\] summary .* failed=0 mem_failed=0 ' $CT/auto$c/probe/np.log &&
            ok "auto$c: summary without failures" || fail "auto$c: summary: $(grep summary $CT/auto$c/probe/np.log)"
    done
    verdict
}

# ---- containers made by runc: seccomp, numapin check, pods per node (c3) ------

# ct_argv ARGS...: a JSON array of the words given (no word may hold a quote)
ct_argv() {
    a=
    for w in "$@"; do a="$a${a:+, }\"$w\""; done
    echo "[$a]"
}

# placed_workers LOG NAME_RE: "NAME NSTID" of each thread numapin placed at
# its start whose name matches NAME_RE (a basic regex)
placed_workers() {
    sed -n "/how=/d; s/.*\\[numapin\\] placed \"\\($2\\)\" tid=\\([0-9]*\\) .*/\\1 \\2/p" "$1" | sort -u
}

# Docker's default seccomp profile (moby's profiles/seccomp/default.json),
# made into config.json's linux.seccomp on the host as dockerd makes it for
# a container with Docker's default capabilities (/tests/seccomp/docker.json)
# and with CAP_SYS_NICE added (docker-sys-nice.json): it lets set_mempolicy
# and mbind through only with CAP_SYS_NICE. Two containers of node 1's CPUs
# (2-3) that may use every node's memory run the JVM under it. Without the
# capability: one warning, naming CAP_SYS_NICE; the workers placed on 2-3
# (as the guest reads them) with mem_error=EPERM, their policy the default
# (the kernel reads back). With it: mem=preferred:1, the kernel reads back
# prefer:1, and new workers' buffers are on node 1 page by page. Then
# `numapin check PID`, run in the guest's own namespaces, finds the
# containerized JVM by its guest PID and names each worker with its guest
# tid and its tid in the container (nstid=).
scenario_c3_runc_seccomp() {
    command -v runc >/dev/null || { fail "no runc in the guest"; return 1; }
    cgroup2 || return 1
    ct_rootfs
    for v in docker docker-sys-nice; do
        tag=seccomp-$v
        [ -s /tests/seccomp/$v.json ] || { fail "$tag: no /tests/seccomp/$v.json"; continue; }
        CT_SECCOMP=/tests/seccomp/$v.json
        # with CAP_SYS_NICE: its perf data on, so that numapin check can
        # ask it for the Java names of its threads (jcmd's attach)
        if [ $v = docker ]; then CT_CAPS=$CAPS java=$RUNC_JAVA; else CT_CAPS="$CAPS,\"CAP_SYS_NICE\"" java=${RUNC_JAVA%, \"-XX:-UsePerfData\"}; fi
        ct_bundle $tag 2-3 0-2 "[$java, \"-agentpath:$AGENT=rescan=500,log=info:/probe/np.log\", \"-cp\", \"/tests\", \"RuncProbe\", \"2\", \"/probe/stop\", \"/probe/move\", \"200\"]"
        CT_SECCOMP='' CT_CAPS=''
        ct_run $tag
    done
    for v in docker docker-sys-nice; do
        tag=seccomp-$v
        log=$CT/$tag/probe/np.log
        ln -sf $log /tmp/$tag.log
        ct_await $tag '^ready pid=' 180 || { fail "$tag: the JVM never got ready"; cat $CT/$tag/out.log $log; continue; }
        pid=$(cat $CT/$tag/pid)
        same "$tag: the JVM runs under a seccomp filter (Seccomp: in the guest's /proc)" \
            "$(awk '/^Seccomp:/ {print $2}' /proc/$pid/status)" 2
        has_line $tag info "plan group=0 groups=1 domain=node node=1 slice=1/1 cpus=2-3 "
        touch $CT/$tag/probe/move
        ct_await $tag '^moved-ready' 90 && ok "$tag: a second fork-join pool started" || fail "$tag: no second pool"
        if [ $v = docker ]; then mem='mem=unknown mem_error=EPERM' policy=default; else mem='mem=preferred:1' policy=prefer:1; fi
        n=$(grep -c "\\]\\[info\\]\\[numapin\\] placed \"ForkJoinPool-[12]-worker-[0-9]*\" tid=[0-9]* group=0 node=1 cpus=2-3 $mem\$" $log)
        same "$tag: the workers of both pools placed on CPUs 2-3 with $mem" "$n" 4
        n=$(grep -c "^worker name=\"ForkJoinPool-1-worker-[0-9]*\" tid=[0-9]* cpus=2-3 policy=$policy\$" $CT/$tag/out.log)
        same "$tag: pool 1's workers see CPUs 2-3 and policy $policy themselves" "$n" 2
        grep '^worker name="ForkJoinPool-2' $CT/$tag/out.log
        n=$(grep -c "^worker name=\"ForkJoinPool-2-worker-[0-9]*\" tid=[0-9]* cpus=2-3 policy=$policy pages=" $CT/$tag/out.log)
        same "$tag: pool 2's 8 MiB buffers have policy $policy" "$n" 2
        tids=
        for nst in $(placed_workers $log 'ForkJoinPool-[12]-worker-[0-9]*' | cut -d' ' -f2); do
            tids="$tids $(guest_tid $pid $nst)"
        done
        same "$tag: the workers' CPUs, from the guest's /proc" "$(cpu_set $pid "$tids")" "2-3 2-3 2-3 2-3"
        for t in $tids; do
            same "$tag: worker tid $t: its policy, from the guest's /proc" \
                "$(head -1 /proc/$pid/task/$t/numa_maps | cut -d' ' -f2)" $policy
        done
        w=$(grep '\]\[warning\]\[numapin\] ' $log | grep -v '\] advice: ' | grep -c 'memory policy')
        if [ $v = docker ]; then
            same "$tag: warnings about the memory policy" "$w" 1
            has_line $tag warning "CAP_SYS_NICE (docker run --cap-add SYS_NICE"
        else
            same "$tag: warnings about the memory policy" "$w" 0
            n=$(grep -c '^worker name="ForkJoinPool-2-worker-[0-9]*" tid=[0-9]* cpus=2-3 policy=prefer:1 pages=N1=[0-9]*$' $CT/$tag/out.log)
            same "$tag: pool 2's buffers: every page on node 1" "$n" 2
            # numapin check from the guest's namespaces: the JVM by its guest
            # PID, each worker by its guest tid and its tid in the container
            cmd_ok "$tag: numapin check $pid (guest PID)" $CLI check $pid
            grep -q '^numapin group=0 groups=1 .*cpus=2-3 ' /tmp/cmd.out &&
                ok "$tag: check names numapin's group 0 of 1 on CPUs 2-3" || fail "$tag: check has no numapin line on CPUs 2-3"
            placed_workers $log 'ForkJoinPool-[12]-worker-[0-9]*' >/tmp/$tag.workers
            while read -r name nst; do
                h=$(guest_tid $pid $nst)
                if grep -q "^thread \"$name\" tid=$h cpus=2-3 .* nstid=$nst planned=2-3 drift=no\( \|\$\)" /tmp/cmd.out; then
                    ok "$tag: check: \"$name\" tid=$h nstid=$nst planned=2-3 drift=no"
                else
                    fail "$tag: check has no line for \"$name\" with tid=$h nstid=$nst planned=2-3 drift=no"
                fi
            done </tmp/$tag.workers
            same "$tag: workers check named" "$(wc -l </tmp/$tag.workers)" 4
        fi
    done
    for v in docker docker-sys-nice; do
        tag=seccomp-$v
        ct_stop $tag
        echo "--- $tag: container output"
        cat $CT/$tag/out.log
        echo "--- $tag: agent log"
        cat $CT/$tag/probe/np.log
        if [ $v = docker ]; then want=" failed=0 mem_failed=4 "; else want=" failed=0 mem_failed=0 "; fi
        summary=$(grep '\]\[info\]\[numapin\] summary ' $CT/$tag/probe/np.log | tail -1)
        case $summary in
            *"$want"*) ok "$tag: ${summary#*numapin\] }" ;;
            *) fail "$tag: summary without$want: ${summary:-none}" ;;
        esac
    done
    verdict
}

# TierBench, short and small (its three tiers one thread each)
TB_ARGV='/jdk/bin/java -Xint -XX:+UseSerialGC -Xms16m -Xmx64m -XX:-UsePerfData -cp /tests:/tests/hdrhistogram.jar
    numapin.tierbench.TierBench --duration-s 2 --steps 1 --max-rate 20 --working-set-mb 4 --accesses 50 --tier-threads 1,1,1'

# tb_pods BASE: the three containers $CT/BASE-0..2 run at once by
# `numapin groups --groups 3` (runc run in the foreground as each group's
# command; the containers' JVMs take their options from their own
# environment, not from the JAVA_TOOL_OPTIONS numapin groups gives runc),
# which prints the table of their results and numapin summaries from their
# output (/tmp/BASE/group-N.log); then `numapin report` makes the page of
# the run from their reports
tb_pods() {
    echo "--- numapin groups --groups 3 -- runc run --no-pivot --bundle $CT/$1-{group} np-$1-{group}"
    timeout 300 $CLI groups --groups 3 --logs /tmp/$1 -- runc run --no-pivot --bundle "$CT/$1-{group}" "np-$1-{group}" \
        >/tmp/$1.table 2>&1
    rc=$?
    cat /tmp/$1.table
    same "$1: numapin groups: exit" "$rc" 0
    same "$1: the table's rows that exited 0" "$(awk '$1 ~ /^[012]$/ && $2 == 0' /tmp/$1.table | wc -l)" 3
    for i in 0 1 2; do
        echo "--- $1-$i: output"
        cat /tmp/$1/group-$i.log
    done
    if $CLI report $CT/$1-0/probe/report.json $CT/$1-1/probe/report.json $CT/$1-2/probe/report.json \
        --html /tmp/$1.html >/tmp/$1.report.out 2>&1 && grep -q Tier1-worker-1 /tmp/$1.html; then
        ok "$1: numapin report: the page of the run ($(wc -c </tmp/$1.html) bytes, the tier threads in it)"
    else
        fail "$1: numapin report: $(head -3 /tmp/$1.report.out)"
    fi
}

# tb_judged BASE I G CPUS: the TierBench of container BASE-I, group G of its
# plan on node I: each tier thread placed there by numapin with node I's
# memory policy, and on those CPUs as it read them itself
tb_judged() {
    log=/tmp/$1/group-$2.log
    grep -q '^result throughput=' $log && ok "$1-$2: $(grep '^result ' $log)" || fail "$1-$2: TierBench gave no result"
    for w in Tier1-worker-1 Tier2-worker-1 Tier3-worker-1; do
        grep -q "\\[numapin\\] placed \"$w\" tid=[0-9]* group=$3 node=$2 cpus=$4 mem=preferred:$2\$" $log &&
            ok "$1-$2: $w placed on node $2, CPUs $4, mem=preferred:$2" ||
            fail "$1-$2: $w not placed as group=$3 node=$2 cpus=$4 mem=preferred:$2"
        grep -q "^  $w  *tid=[0-9]* cpus=$4\$" $log && ok "$1-$2: $w ran on CPUs $4 (TierBench's placement table)" ||
            fail "$1-$2: $w not on CPUs $4 in TierBench's placement table"
    done
    grep -q '\]\[numapin\] summary .* failed=0 mem_failed=0 ' $log && ok "$1-$2: summary without failures" ||
        fail "$1-$2: summary: $(grep '\]\[numapin\] summary ' $log)"
    # the JVM's pages on its group's node, as numapin's summary counts them
    # and numapin groups' table shows them
    row=$(awk -v g=$2 '$1 == g && $2 == 0' /tmp/$1.table)
    local_pct=$(echo "$row" | sed -n 's/.* mem_local=\([0-9.]*\)%.*/\1/p')
    case $row in
        *" cpus=$4 mem_pages="*) ;;
        *) fail "$1-$2: the table's row (exit 0) is not on CPUs $4: $row" ;;
    esac
    if [ -n "$local_pct" ] && [ "$(awk -v p="$local_pct" 'BEGIN {print (p >= 99)}')" = 1 ]; then
        ok "$1-$2: the table's row: cpus=$4, ${local_pct}% of the JVM's pages on node $2"
    else
        fail "$1-$2: the table's row has mem_local=${local_pct:-none}, under 99%: $row"
    fi
    grep -q '\]\[error\]\[numapin\]' $log && fail "$1-$2: agent logged an error"
    grep '\]\[warning\]\[numapin\] ' $log | grep -v 'advice: ' | head -3 | sed 's/^/note: warning: /'
}

# A StatefulSet of three TierBench pods on one machine, each seeing every
# node (CPUs 0-5, memory 0-2): JAVA_TOOL_OPTIONS is kubernetes.md's
# statefulset-env value (/tests/k8s/statefulset-env), for three replicas
# (groups=3), with $(POD_INDEX) expanded from the container's POD_INDEX as
# kubelet expands it: pod I takes group I, on node I.
scenario_c3_runc_statefulset() {
    command -v runc >/dev/null || { fail "no runc in the guest"; return 1; }
    cgroup2 || return 1
    ct_rootfs
    v=$(cat /tests/k8s/statefulset-env)
    echo "kubernetes.md's value: $v"
    case $v in *'group=$(POD_INDEX),groups=2,'*) ok "the value takes its group from \$(POD_INDEX)" ;;
        *) fail "kubernetes.md's statefulset-env value is not group=\$(POD_INDEX),groups=2: $v"; return 1 ;; esac
    rm -rf /tmp/sts
    for i in 0 1 2; do
        jto=$(echo "$v" | sed "s/groups=2,/groups=3,/; s/\$(POD_INDEX)/$i/g")
        CT_ENV="\"POD_INDEX=$i\", \"JAVA_TOOL_OPTIONS=$jto,report=/probe/report.json\""
        # shellcheck disable=SC2086 # the words of TB_ARGV
        ct_bundle sts-$i 0-5 0-2 "$(ct_argv $TB_ARGV)"
        CT_ENV=
    done
    grep JAVA_TOOL_OPTIONS $CT/sts-1/config.json
    tb_pods sts
    for i in 0 1 2; do
        grep -q "\\[numapin\\] plan group=$i groups=3 domain=node node=$i slice=1/1 cpus=$((2 * i))-$((2 * i + 1)) " /tmp/sts/group-$i.log &&
            ok "sts-$i: planned as group $i of 3 on node $i" || fail "sts-$i: not planned as group $i of 3 on node $i"
        tb_judged sts $i $i $((2 * i))-$((2 * i + 1))
    done
    verdict
}

# One pod-sized container per node (CPUs 0-1, 2-3, 4-5 and memory 0, 1,
# 2), all with kubernetes.md's auto-env value (/tests/k8s/auto-env) and one
# lock directory bind-mounted at /run/numapin: each takes group 0 of 1 on
# its node without a lock.
scenario_c3_runc_pods_auto() {
    command -v runc >/dev/null || { fail "no runc in the guest"; return 1; }
    cgroup2 || return 1
    ct_rootfs
    v=$(cat /tests/k8s/auto-env)
    echo "kubernetes.md's value: $v"
    [ -n "$v" ] || { fail "no auto-env value"; return 1; }
    mkdir -m 700 $CT/locks
    rm -rf /tmp/pod
    for i in 0 1 2; do
        CT_ENV="\"JAVA_TOOL_OPTIONS=$v,report=/probe/report.json\""
        # shellcheck disable=SC2086 # the words of TB_ARGV
        ct_bundle pod-$i $((2 * i))-$((2 * i + 1)) $i "$(ct_argv $TB_ARGV)" \
            "{\"destination\": \"/run/numapin\", \"type\": \"bind\", \"source\": \"$CT/locks\", \"options\": [\"rbind\", \"rw\"]}"
        CT_ENV=
    done
    tb_pods pod
    for i in 0 1 2; do
        grep -q '\[numapin\] auto group=0 groups=1 lock=none' /tmp/pod/group-$i.log &&
            ok "pod-$i: auto group=0 groups=1 lock=none" || fail "pod-$i: no 'auto group=0 groups=1 lock=none' line"
        grep -q "\\[numapin\\] plan group=0 groups=1 domain=node node=$i slice=1/1 cpus=$((2 * i))-$((2 * i + 1)) " /tmp/pod/group-$i.log &&
            ok "pod-$i: planned on node $i" || fail "pod-$i: not planned on node $i"
        tb_judged pod $i 0 $((2 * i))-$((2 * i + 1))
    done
    same "lock files left" "$(ls $CT/locks | wc -l)" 0
    verdict
}

# ---- the Java heap on the group's node ------------------------------------------

# heap_run TAG GC PRETOUCH HOW NODES [PROBE_ARGS...]: HeapProbe (24 MiB of
# long-lived arrays built by four fork-join workers, young collections
# between, then two full ones) in a 64 MiB heap with -XX:+Use${GC}GC
# (PRETOUCH on: -XX:+AlwaysPreTouch) and $HEAP_FLAGS, on $HEAP_JDK, run HOW:
#   none            no agent
#   numactl:N       under numactl --cpunodebind=N --membind=N
#   numactl-balancing:N  the same with --balancing (MPOL_F_NUMA_BALANCING)
#   numapin:OPTS    with -agentpath:libnumapin.so=OPTS (log at info into /tmp/TAG.log)
#   cpus:LIST       no agent, under taskset -c LIST
# NODES: where the heap should be.  Prints the output and the log; sets
# $share (the last count's share of the heap's resident pages on NODES,
# 0 to 1; empty when the probe failed), $pages (resident pages) and $byn
# (pages by node).  In the background ($HEAP_BG=1) it only starts the JVM,
# its pid in $heap_pid; heap_counted reads the counts afterwards.
# $HEAP_PRE: a command the JVM is started under, before HOW's.
HEAP_JAVA="-Xint -Xms64m -Xmx64m -XX:-UsePerfData -cp /tests"
HEAP_FLAGS=
HEAP_JDK=/jdk # or /jdk25, on the machines that have it
heap_run() {
    tag=$1 gc=$2 pt=$3 how=$4 nodes=$5
    shift 5
    flags="-XX:+Use${gc}GC $HEAP_FLAGS"
    [ "$pt" = on ] && flags="$flags -XX:+AlwaysPreTouch"
    pre=${HEAP_PRE:-}
    agent=""
    case $how in
        none) ;;
        numactl:*) pre="$pre numactl --cpunodebind=${how#numactl:} --membind=${how#numactl:}" ;;
        numactl-balancing:*)
            n=${how#numactl-balancing:}
            pre="$pre numactl --balancing --cpunodebind=$n --membind=$n"
            ;;
        numapin:*)
            agent="-agentpath:$AGENT=${how#numapin:},log=${HEAP_LOG:-info}:/tmp/$tag.log"
            # the last count is compared with numapin's summary
            [ -n "${HEAP_BG:-}" ] || set -- "$@" settle=1
            ;;
        cpus:*) pre="$pre taskset -c ${how#cpus:}" ;;
    esac
    rm -f "/tmp/$tag.log" "/tmp/$tag.coops"
    echo "--- $tag: $pre java $flags ${agent:+-agentpath:libnumapin.so=${how#numapin:}} HeapProbe"
    # shellcheck disable=SC2086 # word splitting of the flags is meant
    if [ -n "${HEAP_BG:-}" ]; then
        timeout $JAVA_TIMEOUT $pre $HEAP_JDK/bin/java $HEAP_JAVA $flags $agent "-Xlog:gc+heap+coops=debug:file=/tmp/$tag.coops" \
            HeapProbe coops=/tmp/$tag.coops nodes="$nodes" mib=24 "$@" >"/tmp/$tag.out" 2>&1 &
        heap_pid=$!
        return
    fi
    timeout $JAVA_TIMEOUT $pre $HEAP_JDK/bin/java $HEAP_JAVA $flags $agent "-Xlog:gc+heap+coops=debug:file=/tmp/$tag.coops" \
        HeapProbe coops=/tmp/$tag.coops nodes="$nodes" mib=24 "$@" >"/tmp/$tag.out" 2>&1
    rc=$?
    heap_counted "$tag" "$rc" "$agent"
}

# heap_counted TAG EXIT [AGENT]: prints what heap_run's JVM wrote and reads its
# last count into $share, $pages and $byn
heap_counted() {
    cat "/tmp/$1.out"
    [ -z "$3" ] || { echo "--- $1: agent log"; cat "/tmp/$1.log" 2>/dev/null || echo "(no agent log)"; }
    echo "--- $1: exit $2"
    line=$(grep '^heap phase=' "/tmp/$1.out" | tail -1)
    share=
    pages=$(kv "$line" pages)
    byn=$(kv "$line" by_node)
    if [ "$2" -eq 0 ] && grep -q '^heap: PASS$' "/tmp/$1.out"; then
        share=$(kv "$line" share)
    else
        fail "$1: the heap probe failed (exit $2)"
    fi
    if [ -n "$3" ] && grep -q '\]\[error\]\[numapin\]' "/tmp/$1.log" 2>/dev/null; then
        fail "$1: agent logged an error"
    fi
}

pct() { # pct SHARE: 0.9987 -> 99.8%
    if [ -n "$1" ]; then awk -v s="$1" 'BEGIN {printf "%.1f%%", int(s * 1000) / 10}'; else echo "failed"; fi
}

# heap_at_least_99 TAG NODES: the last count put at least 99% of the heap on NODES
heap_at_least_99() {
    if [ -n "$share" ] && [ "$(awk -v s="$share" 'BEGIN {print (s >= 0.99)}')" = 1 ]; then
        ok "$1: $(pct "$share") of $pages resident heap pages on node $2 ($byn)"
    else
        fail "$1: $(pct "$share") of ${pages:-?} resident heap pages on node $2, below 99% ($byn)"
    fi
}

# heap_row MACHINE GC PRETOUCH GROUP NODE [AGENT_OPTIONS]: the heap with no
# agent, with numapin's defaults for GROUP (plus AGENT_OPTIONS), and under
# numactl on NODE ($HEAP_NUMAPIN_ONLY=1: numapin's only); numapin's must be
# at least 99% on NODE.  Prints a row of docs/heap.md's table
# ("heaptable: | ... |").
# $HEAP_TAG names the row's runs (default "-numa" with $HEAP_FLAGS);
# $HEAP_LABEL is its flags column (default $HEAP_FLAGS); $HEAP_PROBE is
# more of HeapProbe's arguments; with $HEAP_SHORT=1 numapin's share is only
# shown, not judged (a huge page pool too short for the heap, where the
# warning is what the scenario checks).
heap_row() {
    m=$1 gc=$2 pt=$3 g=$4 n=$5 extra=${6:-}
    t=heap-$gc-pt$pt-g$g${HEAP_TAG:-${HEAP_FLAGS:+-numa}}${HEAP_JDK#/jdk}
    a=-
    c=-
    if [ -z "${HEAP_NUMAPIN_ONLY:-}" ]; then
        # shellcheck disable=SC2086 # $HEAP_PROBE is a list of arguments
        heap_run "$t-none" "$gc" "$pt" none "$n" $HEAP_PROBE
        a=$(pct "$share")
    fi
    # shellcheck disable=SC2086
    heap_run "$t-numapin" "$gc" "$pt" "numapin:group=$g$extra" "$n" $HEAP_PROBE
    b=$(pct "$share")
    [ -n "${HEAP_SHORT:-}" ] || heap_at_least_99 "$t-numapin" "$n"
    summary_agrees "$t-numapin"
    [ -n "${HEAP_SHORT:-}" ] || own_local "$t-numapin"
    if [ -z "${HEAP_NUMAPIN_ONLY:-}" ]; then
        # shellcheck disable=SC2086
        heap_run "$t-numactl" "$gc" "$pt" "numactl:$n" "$n" $HEAP_PROBE
        c=$(pct "$share")
    fi
    jdk=17
    [ "$HEAP_JDK" = /jdk25 ] && jdk=25
    gcname=$gc
    [ "$gc" = Z ] && gcname=ZGC
    echo "heaptable: | $m | $jdk | $gcname | $pt | ${HEAP_LABEL:-${HEAP_FLAGS:--}} | $g | $a | $b | $c |"
}

# own_local TAG: at least 99.9% of the process's own memory on the group's
# node(s) by numapin's summary at exit: also what the launcher and the
# loader touched before Agent_OnLoad, which numapin moves at load (the
# "load: ... moved" line)
own_local() {
    sl=$(grep '\]\[info\]\[numapin\] summary ' "/tmp/$1.log" 2>/dev/null | tail -1)
    loc=$(kv "$sl" mem_local)
    if [ -n "$loc" ] && [ "$(awk -v s="${loc%\%}" 'BEGIN { print (s >= 99.9) }')" = 1 ]; then
        ok "$1: $loc of the process's own memory on the group's node (mem_pages=$(kv "$sl" mem_pages))"
    else
        fail "$1: ${loc:-no} mem_local= in the summary, below 99.9% (mem_pages=$(kv "$sl" mem_pages))"
    fi
    has_line "$1" info "load: the memory touched before numapin loaded moved to node"
}

# summary_agrees TAG: numapin's summary at exit gives the process's own
# memory by node (mem_pages=, mem_local=), and its total agrees within 1%
# with the probe's last count of the same memory page by page (HeapProbe's
# "own" line: every anonymous, memfd, hugetlbfs and SysV page once). With
# transparent huge pages, what the JVM frees on its way out, before the
# summary counts, can be a whole 2 MiB page: JDK 17's G1 under THP always
# had, in some runs, one huge page more (smaps' AnonHugePages) than in
# others while the probe counted, its counts steady, and none of it left at
# exit, where the summary's count was the same in every run; so the probe
# may be up to 512 pages more besides.
summary_agrees() {
    sl=$(grep '\]\[info\]\[numapin\] summary ' "/tmp/$1.log" 2>/dev/null | tail -1)
    if ! echo "$sl" | grep -q " mem_pages=[0-9]*:[0-9].* mem_local=[0-9.]*%"; then
        fail "$1: the summary has no mem_pages= and mem_local=: $sl"
        return
    fi
    mine=$(kv "$sl" mem_pages | tr ',' '\n' | awk -F: '{ t += $2 } END { print t + 0 }')
    own=$(grep '^own phase=' "/tmp/$1.out" | tail -1)
    theirs=$(kv "$own" pages)
    thp=$(kv "$own" thp_kib)
    agree=$(awk -v a="${mine:-0}" -v b="${theirs:-0}" -v thp="${thp:-0}" 'BEGIN { d = a - b; if (d < 0) d = -d
        print ((b <= 0) ? 0 : (d * 100 <= b) ? 1 : (thp > 0 && b > a && (b - a) * 100 <= b + 512 * 100) ? 2 : 0) }')
    if [ "$agree" = 1 ]; then
        ok "$1: the summary's $mine pages agree with the $theirs counted page by page (within 1%)"
    elif [ "$agree" = 2 ]; then
        ok "$1: the summary's $mine pages agree with the $theirs counted page by page (within 1% and one huge page the JVM freed on its way out)"
    else
        fail "$1: the summary's ${mine:-?} pages against ${theirs:-?} counted page by page: more than 1% apart"
    fi
    # mem_huge=1:30x2M,2:2x2M (or none) against the probe's huge_by_node=N1=15360,N2=1024 (4 KiB pages)
    hs=$(kv "$sl" mem_huge | tr ',' '\n' | awk -F'[:x]' '
        /^[0-9]+:[0-9]+x[0-9]+[MG]$/ { kb = $3 + 0; kb *= ($3 ~ /G$/) ? 1048576 : 1024; n[$1] += $2 * kb / 4 }
        END { for (k in n) printf "N%s=%d\n", k, n[k] }' | sort)
    hp=$(kv "$own" huge_by_node | tr ',' '\n' | grep '^N' | sort)
    if [ -z "$(kv "$sl" mem_huge)" ]; then
        fail "$1: the summary has no mem_huge="
    elif [ "$(echo "$hs" | tr '\n' ' ')" = "$(echo "$hp" | tr '\n' ' ')" ]; then
        ok "$1: the summary's huge pages by node (mem_huge=$(kv "$sl" mem_huge)) are the probe's (${hp:-none})"
    else
        fail "$1: the summary's huge pages by node, mem_huge=$(kv "$sl" mem_huge) ($(echo $hs)), are not the probe's ($(echo $hp))"
    fi
}

# The heap of group 1 with the default options: on 2 nodes, G1, Parallel
# and Serial, with and without AlwaysPreTouch; on 3 nodes, G1 (groups 0 and
# 2 too, numapin only), the machines running at once
scenario_n3_heap() {
    for pt in off on; do
        heap_row n3 G1 $pt 1 1
    done
    HEAP_NUMAPIN_ONLY=1 heap_row n3 G1 off 0 0
    HEAP_NUMAPIN_ONLY=1 heap_row n3 G1 off 2 2
    verdict
}

scenario_n2_heap() {
    for gc in G1 Parallel Serial; do
        for pt in off on; do
            heap_row n2 $gc $pt 1 1
        done
    done
    if have_jdk25; then
        HEAP_JDK=/jdk25 heap_row n2 G1 off 1 1
    fi
    verdict
}

# have_jdk25: the machine has the JDK 25 runtime (/jdk25), or a note says why not
have_jdk25() {
    if [ -x /jdk25/bin/java ]; then
        return 0
    fi
    echo "note: no /jdk25 in this guest (JAVA25_HOME): the JDK 25 runs are skipped"
    return 1
}

# -XX:+UseNUMA, which HotSpot decides before the agent loads: numapin turns
# it off for the whole JVM placed on node 1, and the heap follows
scenario_n2_heap_usenuma() {
    HEAP_FLAGS=-XX:+UseNUMA
    jdks=/jdk
    have_jdk25 && jdks="/jdk /jdk25"
    for HEAP_JDK in $jdks; do
        for gc in Parallel G1; do
            heap_row n2 $gc off 1 1
            t=heap-$gc-ptoff-g1-numa${HEAP_JDK#/jdk}-numapin
            has_line $t info "UseNUMA turned off, and UseNUMAInterleaving with it: HotSpot decided it for the whole machine (nodes 0-1) before numapin placed the JVM on node 1"
        done
    done
    HEAP_JDK=/jdk
    HEAP_FLAGS=
    verdict
}

# A late attach (jcmd JVMTI.agent_load) to a JVM started without numapin:
# the whole JVM placed on group 1, its heap moved to node 1; pages by node
# before and after.  The JVM builds its heap on node 0's CPUs (taskset), so
# that none of it starts on node 1 by chance, and is let onto every CPU
# again before the attach (numapin keeps to a JVM's own binding).
scenario_n3_heap_attach() {
    heap_attach n3-attach G1
    verdict
}

# heap_attach TAG GC [PROBE_ARGS...]: the late attach above, for GC on
# $HEAP_JDK; prints its row of the late-attach table
heap_attach() {
    t=$1 gc=$2
    shift 2
    rm -f /tmp/$t.ready /tmp/$t.go /tmp/$t.log
    HEAP_BG=1 heap_run $t "$gc" off cpus:0-1 1 ready=/tmp/$t.ready go=/tmp/$t.go "$@"
    pid=$heap_pid
    i=0
    while [ ! -e /tmp/$t.ready ] && [ $i -lt 1200 ] && kill -0 $pid 2>/dev/null; do
        sleep 0.1
        i=$((i + 1))
    done
    cmd_ok "taskset: every CPU again" taskset -a -p -c "$(cat /sys/devices/system/cpu/online)" $pid
    cmd_ok "jcmd JVMTI.agent_load" /jdk/bin/jcmd $pid JVMTI.agent_load $AGENT "\"group=1,groups=3,log=info:/tmp/$t.log\""
    touch /tmp/$t.go
    wait $pid
    rc=$?
    echo "--- $t: agent log"
    heap_counted $t $rc /tmp/$t.log
    before=$(grep '^heap phase=before ' /tmp/$t.out)
    bshare=$(kv "$before" share)
    echo "$t: before attach $(pct "$bshare") on node 1 ($(kv "$before" by_node)), after $(pct "$share") ($byn)"
    if [ -n "$bshare" ] && [ "$(awk -v s="$bshare" 'BEGIN {print (s < 0.8)}')" = 1 ]; then
        ok "$t: before the attach, $(pct "$bshare") of the heap on node 1 (built on node 0)"
    else
        fail "$t: before the attach, $(pct "$bshare") of the heap on node 1: the test means nothing"
    fi
    [ -n "${HEAP_ATTACH_LEFT:-}" ] || heap_at_least_99 "$t: after the attach" 1
    has_line $t info "jvm group=1 node=1 cpus=2-3 mem=preferred:1"
    has_line $t info "attach: moved memory pages="
    moved=$(grep 'attach: moved memory pages=' /tmp/$t.log | sed -n 's/.* pages=\([0-9]*\) .*/\1/p')
    if [ "${moved:-0}" -gt 0 ]; then ok "$t: $moved pages moved"; else fail "$t: no page moved"; fi
    no_warning $t
    jdk=17
    [ "$HEAP_JDK" = /jdk25 ] && jdk=25
    gcname=$gc
    [ "$gc" = Z ] && gcname=ZGC
    echo "heaptable-attach: | $jdk | $gcname | $(pct "$bshare") | $(pct "$share") | ${moved:-?} | $(sed -n 's/.* ms=\([0-9]*\) .*/\1/p' /tmp/$t.log) |"
}

# ---- huge pages, transparent huge pages, ZGC and Shenandoah (h3) -------------
# The machine h3 is n3 with 2 GiB a node and one 1 GiB huge page reserved
# at boot on node 1 (hugepagesz=1G hugepages=1:1); the 2 MiB pools are set
# here, per node, for each row.

# huge_pool KIB COUNT: COUNT huge pages of KIB KiB reserved on every node
# (the 1 GiB pool is the boot's); prints what each node then has free
huge_pool() {
    for d in /sys/devices/system/node/node[0-9]*; do
        echo "$2" >"$d/hugepages/hugepages-$1kB/nr_hugepages"
    done
    for d in /sys/devices/system/node/node[0-9]*; do
        echo "huge pool: ${d##*/} $1 kB: $(cat "$d/hugepages/hugepages-$1kB/nr_hugepages") reserved, $(cat "$d/hugepages/hugepages-$1kB/free_hugepages") free"
    done
}

# thp_mode MODE: transparent huge pages' mode (always, madvise, never)
thp_mode() {
    echo "$1" >/sys/kernel/mm/transparent_hugepage/enabled
    echo "transparent_hugepage: $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
}

# huge_used TAG: the probe's heap was in hugetlbfs pages (its last "own"
# count has some), or the row means nothing
huge_used() {
    h=$(kv "$(grep '^own phase=' "/tmp/$1.out" | tail -1)" huge_pages)
    if [ "${h:-0}" -gt 0 ]; then ok "$1: $h of its pages in hugetlbfs pages"; else fail "$1: no hugetlbfs page: the row means nothing"; fi
}

# thp_used TAG: the same for transparent huge pages
thp_used() {
    h=$(kv "$(grep '^own phase=' "/tmp/$1.out" | tail -1)" thp_kib)
    if [ "${h:-0}" -gt 0 ]; then ok "$1: $h KiB in transparent huge pages"; else fail "$1: no transparent huge page: the row means nothing"; fi
}

# h3_jdks: the runtimes every h3 row runs on
h3_jdks() {
    if have_jdk25; then echo "/jdk /jdk25"; else echo /jdk; fi
}

# -XX:+UseLargePages (hugetlbfs, 2 MiB pages): HotSpot reserves the 64 MiB
# heap (32 pages) and its code cache (ReservedCodeCacheSize, read from the
# JVM) in huge pages.  With 4 pages more than that free on each node: no
# warning, the heap on node 1.  With 20: one warning at start-up with the
# numbers and the fix; under mem=preferred (the default) the rest comes
# from the other nodes, under mem=bind HotSpot falls back to small pages
# (its own warning) and the heap is local.  With 1 GiB pages (a 1 GiB
# heap): the one page reserved on node 1, with numapin only.
scenario_h3_large_pages() {
    for HEAP_JDK in $(h3_jdks); do
        j=${HEAP_JDK#/jdk}
        HEAP_FLAGS=-XX:+UseLargePages
        # shellcheck disable=SC2086
        cc=$($HEAP_JDK/bin/java $HEAP_JAVA $HEAP_FLAGS -XX:+PrintFlagsFinal -version 2>/dev/null |
            awk '$2 == "ReservedCodeCacheSize" { print int(($4 + 2097151) / 2097152) }')
        need=$((32 + ${cc:-0}))
        echo "JDK ${j:-17}: the heap takes 32 pages of 2 MiB, the code cache ${cc:-?}: $need"
        enough=$((need + 4))
        huge_pool 2048 $enough
        HEAP_TAG=-lpenough HEAP_LABEL="-XX:+UseLargePages, 2 MiB pages, $enough free a node (the heap and code cache take $need)" heap_row h3 G1 off 1 1
        huge_used heap-G1-ptoff-g1-lpenough$j-numapin
        no_warning heap-G1-ptoff-g1-lpenough$j-numapin
        has_line heap-G1-ptoff-g1-lpenough$j-numapin info "free=$enough needed=$need size=2M nodes=1 heap_pages=32 code_pages=$cc"
        huge_pool 2048 20
        HEAP_SHORT=1 HEAP_TAG=-lp20 HEAP_LABEL="-XX:+UseLargePages, 2 MiB pages, 20 free a node (short)" heap_row h3 G1 off 1 1
        has_line heap-G1-ptoff-g1-lp20$j-numapin warning "free=20 needed=$need size=2M nodes=1 heap_pages=32 code_pages=$cc"
        has_line heap-G1-ptoff-g1-lp20$j-numapin warning "under mem=preferred the kernel takes the $((need - 20)) pages node 1 lacks from other nodes' pools"
        has_line heap-G1-ptoff-g1-lp20$j-numapin warning "echo $need > /sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages"
        t=heap-G1-ptoff-g1-lp20bind$j-numapin
        heap_run $t G1 off numapin:group=1,mem=bind 1
        heap_at_least_99 $t 1
        has_line $t warning "free=20 needed=$need size=2M nodes=1 heap_pages=32 code_pages=$cc"
        has_line $t warning "under mem=bind the kernel lets HotSpot reserve huge pages only on"
        echo "heaptable: | h3 | ${j:-17} | G1 | off | -XX:+UseLargePages, 2 MiB pages, 20 free a node (short), numapin mem=bind | 1 | - | $(pct "$share") | - |"
        # 2 MiB pages too, for what HotSpot puts in huge pages beside the heap
        # (the code cache): only the heap is in the 1 GiB page
        huge_pool 2048 $enough
        HEAP_JAVA="-Xint -Xms1g -Xmx1g -XX:-UsePerfData -cp /tests"
        HEAP_FLAGS="-XX:+UseLargePages -XX:LargePageSizeInBytes=1g"
        # numapin's run only: the one 1 GiB page is on node 1 whoever asks
        # for it, and clearing it takes half a minute under emulation
        HEAP_NUMAPIN_ONLY=1 HEAP_TAG=-lp1g HEAP_LABEL="-XX:+UseLargePages -XX:LargePageSizeInBytes=1g, one 1 GiB page on node 1" heap_row h3 G1 off 1 1
        huge_used heap-G1-ptoff-g1-lp1g$j-numapin
        no_warning heap-G1-ptoff-g1-lp1g$j-numapin
        HEAP_JAVA="-Xint -Xms64m -Xmx64m -XX:-UsePerfData -cp /tests"
        huge_pool 2048 0
    done
    HEAP_JDK=/jdk
    HEAP_FLAGS=
    verdict
}

# Transparent huge pages: -XX:+UseTransparentHugePages under THP's madvise
# mode, and no flag under always (the default of Debian's and RHEL's kernels)
scenario_h3_thp() {
    for HEAP_JDK in $(h3_jdks); do
        j=${HEAP_JDK#/jdk}
        thp_mode madvise
        HEAP_FLAGS=-XX:+UseTransparentHugePages HEAP_TAG=-thpmadvise HEAP_LABEL="-XX:+UseTransparentHugePages, THP madvise" heap_row h3 G1 off 1 1
        thp_used heap-G1-ptoff-g1-thpmadvise$j-numapin
        thp_mode always
        HEAP_TAG=-thpalways HEAP_LABEL="THP always" heap_row h3 G1 off 1 1
        thp_used heap-G1-ptoff-g1-thpalways$j-numapin
        thp_mode never
    done
    HEAP_JDK=/jdk
    verdict
}

# The concurrent collectors: Shenandoah, and ZGC, whose heap is a memfd
# (/memfd:java_heap; JDK 17 maps it three times, JDK 25's generational ZGC
# once): counted page by page from its mappings, each page once; and ZGC's
# heap moved by a late attach
scenario_h3_collectors() {
    for HEAP_JDK in $(h3_jdks); do
        heap_row h3 Shenandoah off 1 1
        HEAP_PROBE=heap=memfd heap_row h3 Z off 1 1
        heap_attach h3-attach-Z${HEAP_JDK#/jdk} Z heap=memfd
    done
    HEAP_JDK=/jdk
    verdict
}

# numapin groups sizes each JVM to its group: 3 groups of 2 CPUs, each JVM
# with -XX:ActiveProcessorCount=2 and so 2 GC threads; without the flags
# HotSpot sizes them for the 6 CPUs it sees
scenario_n3_java_flags() {
    cmd_ok "numapin plan --java-flags" $CLI plan --groups 3 --group 1 --java-flags
    same "plan --groups 3 --group 1 --java-flags" "$(cat /tmp/cmd.out)" "-XX:ActiveProcessorCount=2"
    for mode in flags none; do
        arg=
        [ $mode = none ] && arg=--no-java-flags
        rm -rf /tmp/jf-$mode
        cmd_ok "numapin groups --groups 3 $arg" $CLI groups --groups 3 $arg --logs /tmp/jf-$mode -- \
            /jdk/bin/java -Xint -XX:+UseG1GC -XX:-UsePerfData -XX:+PrintFlagsFinal -cp /tests JvmSize
        for g in 0 1 2; do
            log=/tmp/jf-$mode/group-$g.log
            grep -E 'Picked up|ActiveProcessorCount|ParallelGCThreads|^jvm |numapin\] (plan|jvm|summary) ' $log
            avail=$(sed -n 's/^jvm available=\([0-9]*\)$/\1/p' $log)
            gcthreads=$(awk '$2 == "ParallelGCThreads" {print $4}' $log)
            same "$mode: group $g: Runtime.availableProcessors()" "$avail" 2
            if [ $mode = flags ]; then
                same "$mode: group $g: ParallelGCThreads" "$gcthreads" 2
            else
                same "$mode: group $g: ParallelGCThreads (sized for the machine)" "$gcthreads" 6
            fi
        done
    done
    verdict
}

