# The scenarios of the access-counting machine a3 (n3 under the plugin,
# tests/qemu/plugin/access.c), in the guest's /scenarios.sh after
# scenarios.sh: a3-access-tierbench in make test-numa (its record judged by
# tests/qemu/access-table.sh), and those of tests/qemu/access.sh, which
# read what they print.
# shellcheck disable=SC2154 # heap_pid, agent, share, byn: set by heap_run and heap_counted (scenarios.sh)
ACCMARK=/access/accmark

# The kernel's sampled NUMA hinting faults of process PID, summed over its
# threads by the page's node, and the pages it migrated:
# "node0=F node1=F node2=F migrated=M threads=T"
sampled_faults() {
    for t in /proc/"$1"/task/*; do cat "$t/sched" 2>/dev/null; done | awk '
        /^numa_faults node=/ { split($2, a, "="); split($3, p, "="); split($4, q, "="); f[a[2]] += p[2] + q[2]; if (a[2] > m) m = a[2] }
        /^numa_pages_migrated/ { mig += $3 }
        /^mm->numa_scan_seq/ { th++ }
        END { for (n = 0; n <= m; n++) printf "node%d=%d ", n, f[n]; printf "migrated=%d threads=%d\n", mig, th }'
}

# /proc/vmstat's NUMA balancing counters: "hint=H hint_local=L migrated=M"
balancing_counts() {
    awk '$1 == "numa_hint_faults" { h = $2 } $1 == "numa_hint_faults_local" { l = $2 }
         $1 == "numa_pages_migrated" { m = $2 } END { printf "hint=%d hint_local=%d migrated=%d\n", h, l, m }' /proc/vmstat
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
    before=$(balancing_counts)
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
    echo "@@@ access vmstat $tag before: $before after: $(balancing_counts)"
    if [ -n "$jp" ]; then
        echo "@@@ access sampled $tag $(sampled_faults "$jp")"
        grep -E 'balancing|heap|stack' "/proc/$jp/numa_maps" | head -20 | sed "s/^/@@@ numa_maps $tag /"
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
    # kernel.numa_balancing=1 (this kernel's default), its scanner started
    # and repeated within the few seconds of a run: a scan 100 ms after
    # start, then every 100 ms to 1 s (defaults 1 s, 1 s to 60 s)
    echo 1 >/proc/sys/kernel/numa_balancing
    quick_scans
    D=/sys/kernel/debug/sched/numa_balancing
    echo "@@@ access balancing $(cat /proc/sys/kernel/numa_balancing) scan_delay_ms=$(cat $D/scan_delay_ms)" \
        "scan_period_min_ms=$(cat $D/scan_period_min_ms) scan_period_max_ms=$(cat $D/scan_period_max_ms)" \
        "scan_size_mb=$(cat $D/scan_size_mb)"
    access_run access-none none
    access_run access-numactl numactl:1
    access_run access-numactl-balancing numactl-balancing:1
    access_run access-numapin numapin:group=1,groups=3
    access_run access-numapin-balancing numapin:group=1,groups=3,mem=balancing
    # the launcher's memory preferred on node 0: what the JVM touched
    # before Agent_OnLoad is there, and numapin moves it at load
    HEAP_PRE="numactl --preferred=0"
    access_run access-numapin-pre0 numapin:group=1,groups=3
    HEAP_PRE=
    verdict
}

# What the kernel's NUMA balancing costs a JVM numapin placed under
# mem=balancing, at the kernel's default scan rates: HeapProbe's fixed work
# (up to its first count) in rounds of three runs, balancing on, balancing
# off, and off with COST_SPIN ms of CPU spun by the probe (the control: a
# cost known in advance, which the method must resolve), in an order that
# turns with each round; each "@@@ cost kind=K run=I cpu_ticks=T wall_cs=W
# hint=H hint_local=L migrated=M samples=S access_local=A": the JVM's CPU
# time (utime+stime, in clock ticks) and the wall time (centiseconds) up to
# the end of its work, /proc/vmstat's hint faults and migrations over it,
# and the summary's sampled accesses.
COST_SPIN=400
COST_ROUNDS=8
cost_run() {
    kind=$1 i=$2 tag=cost-$1-$2
    bal=0 spin=0
    case $kind in on) bal=1 ;; control) spin=$COST_SPIN ;; esac
    echo "$bal" >/proc/sys/kernel/numa_balancing
    rm -f "/tmp/$tag.ready" "/tmp/$tag.go"
    b=$(balancing_counts)
    t0=$(cut -d' ' -f1 /proc/uptime | tr -d .)
    HEAP_BG=1 heap_run "$tag" G1 off numapin:group=1,groups=3,mem=balancing 1 ready="/tmp/$tag.ready" \
        go="/tmp/$tag.go" spin=$spin >/dev/null
    k=0
    while [ ! -f "/tmp/$tag.ready" ] && [ $k -lt 1200 ] && kill -0 "$heap_pid" 2>/dev/null; do
        sleep 0.05
        k=$((k + 1))
    done
    t1=$(cut -d' ' -f1 /proc/uptime | tr -d .)
    jp=$(java_pid)
    ticks=$(awk '{ print $14 + $15 }' "/proc/$jp/stat" 2>/dev/null)
    a=$(balancing_counts)
    touch "/tmp/$tag.go"
    wait "$heap_pid"
    heap_counted "$tag" $? "$agent" >/dev/null
    sl=$(grep '\] summary ' "/tmp/$tag.log" | tail -1)
    echo "@@@ cost kind=$kind run=$i cpu_ticks=$ticks wall_cs=$((t1 - t0)) hint=$(($(kv "$a" hint) - $(kv "$b" hint)))" \
        "hint_local=$(($(kv "$a" hint_local) - $(kv "$b" hint_local))) migrated=$(($(kv "$a" migrated) - $(kv "$b" migrated)))" \
        "samples=$(kv "$sl" access_samples) access_local=$(kv "$sl" access_local) heap_share=$share"
}

scenario_n3_balancing_cost() {
    quick_scans default
    echo "@@@ cost tunables $(cd /sys/kernel/debug/sched/numa_balancing && for f in scan_delay_ms scan_period_min_ms scan_period_max_ms scan_size_mb; do printf '%s=%s ' $f "$(cat $f)"; done) spin_ms=$COST_SPIN"
    # a first round, not counted: the page cache warms
    for kind in on off control; do cost_run $kind 0; done
    i=1
    while [ $i -le $COST_ROUNDS ]; do
        case $((i % 3)) in
            1) order="on off control" ;;
            2) order="off control on" ;;
            0) order="control on off" ;;
        esac
        for kind in $order; do cost_run $kind $i; done
        i=$((i + 1))
    done
    echo 1 >/proc/sys/kernel/numa_balancing
    verdict
}

# ---- TierBench, as the MultiJVM experiment runs it, every access counted ----

# The JVMs of one run: TierBench as docs/multijvm-experiment.md sizes it
# (2,1,1 tier threads and TB_RATE requests/s per node's worth of group; the
# group over nodes 0-1 of 2 groups gets twice both), run until stopped.
TB_RATE=4
TB_WINDOW=20 # seconds of each measured window
tb_script() {
    cat >/tmp/tb-access.sh <<EOT
#!/bin/sh
# group groups
if [ "\$2" = 2 ] && [ "\$1" = 0 ]; then tt=4,2,2 rate=$((2 * TB_RATE)); else tt=2,1,1 rate=$TB_RATE; fi
exec /jdk/bin/java -Xint -XX:+UseSerialGC -Xms32m -Xmx64m -XX:-UsePerfData \\
    -cp /tests:/tests/hdrhistogram.jar numapin.tierbench.TierBench --duration-s 3600 --steps 1 \\
    --max-rate \$rate --working-set-mb 16 --accesses 200 --tier-threads \$tt
EOT
}

# tb_nodes N G: group G's nodes when N groups share the 3 nodes
tb_nodes() {
    if [ "$1" = 2 ] && [ "$2" = 0 ]; then echo 0-1; elif [ "$1" = 2 ]; then echo 2; else echo "$2"; fi
}

# the pids of the TierBench JVMs running
tb_pids() {
    for p in /proc/[0-9]*; do
        [ "$(readlink "$p/exe" 2>/dev/null)" = /jdk/bin/java ] && grep -q TierBench "$p/cmdline" 2>/dev/null &&
            echo "${p#/proc/}"
    done
}

# tb_group PID: the group a TierBench JVM runs as (TB_GROUP, or numapin
# groups' NUMAPIN_GROUP, in its environment)
tb_group() {
    g=$(tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null | sed -n 's/^\(TB\|NUMAPIN\)_GROUP=//p' | head -1)
    echo "${g:-?}"
}

# tb_window TAG N HOW BALANCING LABEL: N TierBench JVMs run HOW (none: no
# binding; numactl: numactl --cpunodebind --membind of the group's nodes;
# numapin:OPTIONS: numapin groups --options OPTIONS), with
# kernel.numa_balancing=BALANCING; once every JVM has run its first
# requests, one measured window of TB_WINDOW seconds; at its end, the
# kernel's sampled accesses of each JVM ("@@@ tbsampled TAG group=G ...")
# and numapin check's access line for it; then the JVMs are stopped
# (SIGTERM: numapin's summary at exit).
tb_window() {
    tag=$1 n=$2 how=$3 bal=$4
    echo "@@@ tbrun $tag balancing=$bal label=$5"
    echo "$bal" >/proc/sys/kernel/numa_balancing
    rm -rf "/tmp/$tag"
    mkdir -p "/tmp/$tag"
    echo "--- $tag: $n TierBench JVMs, $how, kernel.numa_balancing=$bal"
    case $how in
        numapin:*)
            opts=${how#numapin:}
            # TB_REPORT=1: each JVM writes its report, checked below
            [ -z "${TB_REPORT:-}" ] || opts="$opts,report=/tmp/$tag/report-%p.json"
            timeout 900 $CLI groups --groups "$n" --options "$opts" --logs "/tmp/$tag" -- \
                sh /tmp/tb-access.sh '{group}' "$n" >"/tmp/$tag/groups.out" 2>&1 &
            ;;
        *)
            g=0
            while [ $g -lt "$n" ]; do
                nodes=$(tb_nodes "$n" $g)
                pre=
                [ "$how" = numactl ] && pre="numactl --cpunodebind=$nodes --membind=$nodes"
                TB_GROUP=$g timeout 900 $pre sh /tmp/tb-access.sh $g "$n" >"/tmp/$tag/group-$g.log" 2>&1 &
                g=$((g + 1))
            done
            ;;
    esac
    # ready: every JVM has printed its step table's header, which TierBench
    # does as its first step starts; the window opens 5 s later
    i=0
    while [ $i -lt 1800 ]; do
        up=$(grep -l '^    rate ' /tmp/"$tag"/group-*.log 2>/dev/null | wc -l)
        [ "$up" -ge "$n" ] && break
        sleep 0.2
        i=$((i + 1))
    done
    same "$tag: JVMs running their requests" "$up" "$n"
    sleep 5
    echo "@@@ access window $tag"
    before=$(balancing_counts)
    $ACCMARK start || fail "$tag: accmark start"
    sleep "$TB_WINDOW"
    $ACCMARK end || fail "$tag: accmark end"
    echo "@@@ access vmstat $tag before: $before after: $(balancing_counts)"
    for p in $(tb_pids); do
        g=$(tb_group "$p")
        # TB_PAGES=1: each JVM's resident pages by frame, for access.sh's
        # report of where the remote accesses went
        [ -z "${TB_PAGES:-}" ] || $ACCMARK pages "$p" | sed "s/^/@@@ pages $tag /"
        echo "@@@ tbsampled $tag group=$g nodes=$(tb_nodes "$n" "$g") $(sampled_faults "$p")"
        $CLI check "$p" >"/tmp/$tag/check-$g.txt" 2>&1
        a=$(grep '^access' "/tmp/$tag/check-$g.txt" | head -1)
        echo "@@@ tbcheck $tag group=$g ${a:-no access line}"
    done
    for p in $(tb_pids); do kill -TERM "$p" 2>/dev/null; done
    wait
    g=0
    while [ $g -lt "$n" ]; do
        s=$(grep '\] summary ' "/tmp/$tag/group-$g.log" 2>/dev/null | tail -1)
        [ -n "$s" ] && echo "@@@ tbsummary $tag group=$g ${s#*\] summary }"
        grep -q '\]\[error\]\[numapin\]' "/tmp/$tag/group-$g.log" 2>/dev/null &&
            fail "$tag: group $g: the agent logged an error"
        g=$((g + 1))
    done
    # the reports: each live tier thread's own sampled accesses
    for r in /tmp/"$tag"/report-*.json; do
        [ -n "${TB_REPORT:-}" ] && [ -f "$r" ] || continue
        k=$(grep -c '"name": "Tier.*"live": true.*"access_samples": [1-9]' "$r")
        if [ "$k" -gt 0 ]; then
            ok "$tag: ${r##*/}: $k live tier threads with their own sampled accesses"
        else
            fail "$tag: ${r##*/}: no live tier thread with its own sampled accesses"
            grep '"name": "Tier' "$r" | head -3
        fi
    done
}

scenario_a3_access_tierbench() {
    $ACCMARK calibrate 3 | sed 's/^/@@@ /' || fail "accmark calibrate"
    tb_script
    quick_scans
    tb_window tb-none-3 3 none 0 "3 JVMs, no agent"
    tb_window tb-numactl-3 3 numactl 0 "3 JVMs, numactl --cpunodebind=G --membind=G"
    tb_window tb-numapin-3 3 'numapin:threads=Tier*' 0 "numapin groups --groups 3 (default options)"
    tb_window tb-threads-3 3 'numapin:threads=Tier*,scope=threads' 0 "numapin groups --groups 3, scope=threads"
    tb_window tb-numapin-2 2 'numapin:threads=Tier*' 0 "numapin groups --groups 2 (default options)"
    tb_window tb-none-3-bal 3 none 1 "3 JVMs, no agent"
    tb_window tb-numapin-3-bal 3 'numapin:threads=Tier*' 1 "numapin groups --groups 3 (default options)"
    tb_window tb-threads-3-bal 3 'numapin:threads=Tier*,scope=threads' 1 "numapin groups --groups 3, scope=threads"
    TB_REPORT=1 tb_window tb-balancing-3-bal 3 'numapin:threads=Tier*,mem=balancing' 1 "numapin groups --groups 3, mem=balancing"
    tb_window tb-balancing-2-bal 2 'numapin:threads=Tier*,mem=balancing' 1 "numapin groups --groups 2, mem=balancing"
    quick_scans default
    echo 1 >/proc/sys/kernel/numa_balancing
    verdict
}
