# Scenarios run inside the QEMU guest (busybox sh), sourced by /init.
# Each scenario_NAME runs in a subshell and succeeds when every check passed.
# Machines (set up by run.sh):
#   n2: 2 nodes x 2 CPUs      node0 = CPUs 0-1, node1 = CPUs 2-3
#   n3: 3 nodes x 2 CPUs      node0 = 0-1, node1 = 2-3, node2 = 4-5,
#       distances 10/21/31, one package (the shape of a sub-NUMA-clustered Xeon)

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
    if echo "$topo" | grep -q " nodes=$nodes " && ! echo "$topo" | grep -q 'source="\(synthetic\|.*\.xml"\)'; then
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

# plan_is MACHINE GROUPS: `numapin plan --groups N` in the guest, where hwloc
# reads the emulated machine, prints the table of expected/MACHINE-plan-N.txt
# and the group lines of expected/MACHINE-plan-N.json (warnings aside: see
# has_plan_warning)
plan_is() {
    m=$1 n=$2
    if cmd_ok "numapin plan --groups $n" $CLI plan --groups $n; then
        sed -n '/^group /,$p' /tmp/cmd.out | grep -v '^warning: ' >/tmp/plan.txt
        if cmp -s /tmp/plan.txt "/expected/$m-plan-$n.txt"; then
            ok "plan --groups $n is expected/$m-plan-$n.txt"
        else
            fail "plan --groups $n differs from expected/$m-plan-$n.txt:"
            diff "/expected/$m-plan-$n.txt" /tmp/plan.txt
        fi
    fi
    cp /tmp/cmd.out /tmp/plan-$n.out
    if cmd_ok "numapin plan --groups $n --json" $CLI plan --groups $n --json; then
        grep '^    {"group": ' /tmp/cmd.out >/tmp/plan.json
        if cmp -s /tmp/plan.json "/expected/$m-plan-$n.json"; then
            ok "plan --groups $n --json is expected/$m-plan-$n.json (warnings aside)"
        else
            fail "plan --groups $n --json differs from expected/$m-plan-$n.json:"
            cat "/expected/$m-plan-$n.json"
        fi
    fi
}

# plan_warns GROUPS TEXT: the text plan of the last plan_is GROUPS warned TEXT
plan_warns() {
    if grep -q "^warning: $2" /tmp/plan-$1.out; then
        ok "plan --groups $1 warns: $(grep "^warning: $2" /tmp/plan-$1.out)"
    else
        fail "plan --groups $1 does not warn '$2'"
    fi
}

plan_quiet() {
    if grep -q '^warning' /tmp/plan-$1.out; then
        fail "plan --groups $1 warns: $(grep '^warning' /tmp/plan-$1.out)"
    else
        ok "plan --groups $1 has no warning"
    fi
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
    cmd_ok "numapin topo" $CLI topo
    plan_is n2 2
    plan_quiet 2
    plan_is n2 1
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
    cmd_ok "numapin topo" $CLI topo
    plan_is n3 3
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

# ---- lifecycle and start-up advice (issue 5) ----------------------------------

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
    has_line n3-bal-on warning "advice: kernel automatic NUMA balancing is on (kernel.numa_balancing=1)"
    sysctl -w kernel.numa_balancing=0
    same "kernel.numa_balancing after sysctl -w" "$(cat /proc/sys/kernel/numa_balancing)" 0
    jvm_run n3-bal-off "groups=3,group=0" -XX:+UseSerialGC -version
    same "n3-bal-off: exit" "$rc" 0
    lacks_line n3-bal-off "NUMA balancing"
    echo 1 >/proc/sys/kernel/numa_balancing
    verdict
}

# A CPU of the group goes offline after the JVM started: the binding reads
# back without it, warned once; workers run on the CPU left
scenario_n3_cpu_offline() {
    tag=n3-offline
    rm -f /tmp/off.ready /tmp/off.go
    jvm_run $tag "groups=3,group=2" -XX:+UseSerialGC -cp /tests OfflineProbe /tmp/off.ready /tmp/off.go 3 \
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

# ---- the MultiJVM experiment (issue 6) -----------------------------------------

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

# ---- the Java heap on the group's node ------------------------------------------

# heap_run TAG GC PRETOUCH HOW NODES [PROBE_ARGS...]: HeapProbe (24 MiB of
# long-lived arrays built by four fork-join workers, young collections
# between, then two full ones) in a 64 MiB heap with -XX:+Use${GC}GC
# (PRETOUCH on: -XX:+AlwaysPreTouch) and $HEAP_FLAGS, on $HEAP_JDK, run HOW:
#   none            no agent
#   numactl:N       under numactl --cpunodebind=N --membind=N
#   numapin:OPTS    with -agentpath:libnumapin.so=OPTS (log at info into /tmp/TAG.log)
# NODES: where the heap should be.  Prints the output and the log; sets
# $share (the last count's share of the heap's resident pages on NODES,
# 0 to 1; empty when the probe failed), $pages (resident pages) and $byn
# (pages by node).  In the background ($HEAP_BG=1) it only starts the JVM,
# its pid in $heap_pid; heap_counted reads the counts afterwards.
HEAP_JAVA="-Xint -Xms64m -Xmx64m -XX:-UsePerfData -cp /tests"
HEAP_FLAGS=
HEAP_JDK=/jdk # or /jdk25, on the machines that have it
heap_run() {
    tag=$1 gc=$2 pt=$3 how=$4 nodes=$5
    shift 5
    flags="-XX:+Use${gc}GC $HEAP_FLAGS"
    [ "$pt" = on ] && flags="$flags -XX:+AlwaysPreTouch"
    pre=""
    agent=""
    case $how in
        none) ;;
        numactl:*) pre="numactl --cpunodebind=${how#numactl:} --membind=${how#numactl:}" ;;
        numapin:*) agent="-agentpath:$AGENT=${how#numapin:},log=info:/tmp/$tag.log" ;;
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
heap_row() {
    m=$1 gc=$2 pt=$3 g=$4 n=$5 extra=${6:-}
    t=heap-$gc-pt$pt-g$g${HEAP_FLAGS:+-numa}${HEAP_JDK#/jdk}
    a=-
    c=-
    if [ -z "${HEAP_NUMAPIN_ONLY:-}" ]; then
        heap_run "$t-none" "$gc" "$pt" none "$n"
        a=$(pct "$share")
    fi
    heap_run "$t-numapin" "$gc" "$pt" "numapin:group=$g$extra" "$n"
    b=$(pct "$share")
    heap_at_least_99 "$t-numapin" "$n"
    if grep -q "\]\[info\]\[numapin\] summary .* mem_pages=[0-9]*:[0-9].* mem_local=[0-9.]*%$" "/tmp/$t-numapin.log"; then
        ok "$t-numapin: the summary gives mem_pages= and mem_local="
    else
        fail "$t-numapin: the summary has no mem_pages= and mem_local="
    fi
    if [ -z "${HEAP_NUMAPIN_ONLY:-}" ]; then
        heap_run "$t-numactl" "$gc" "$pt" "numactl:$n" "$n"
        c=$(pct "$share")
    fi
    jdk=17
    [ "$HEAP_JDK" = /jdk25 ] && jdk=25
    echo "heaptable: | $m | $jdk | $gc | $pt | ${HEAP_FLAGS:--} | $g | $a | $b | $c |"
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

# A late attach (jcmd JVMTI.agent_load) to a JVM started without numapin,
# its heap over every node: the whole JVM placed on group 1, its heap moved
# to node 1; pages by node before and after
scenario_n3_heap_attach() {
    t=n3-attach
    rm -f /tmp/$t.ready /tmp/$t.go /tmp/$t.log
    HEAP_BG=1 heap_run $t G1 off none 1 ready=/tmp/$t.ready go=/tmp/$t.go
    pid=$heap_pid
    i=0
    while [ ! -e /tmp/$t.ready ] && [ $i -lt 1200 ] && kill -0 $pid 2>/dev/null; do
        sleep 0.1
        i=$((i + 1))
    done
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
        ok "$t: before the attach, $(pct "$bshare") of the heap on node 1 (built on every node)"
    else
        fail "$t: before the attach, $(pct "$bshare") of the heap on node 1: the test means nothing"
    fi
    heap_at_least_99 "$t: after the attach" 1
    has_line $t info "jvm group=1 node=1 cpus=2-3 mem=preferred:1"
    has_line $t info "attach: moved memory pages="
    moved=$(grep 'attach: moved memory pages=' /tmp/$t.log | sed -n 's/.* pages=\([0-9]*\) .*/\1/p')
    if [ "${moved:-0}" -gt 0 ]; then ok "$t: $moved pages moved"; else fail "$t: no page moved"; fi
    no_warning $t
    echo "heaptable-attach: | $(pct "$bshare") | $(pct "$share") | ${moved:-?} | $(sed -n 's/.* ms=\([0-9]*\) .*/\1/p' /tmp/$t.log) |"
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

