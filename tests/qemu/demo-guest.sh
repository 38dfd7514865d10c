# The demo of the 3-node machine, appended to the guest's /scenarios.sh by
# tierbench/demo-numa.sh, which boots n3 and reads what is printed here:
# TierBench run by `numapin groups` as 3 groups, then as 2, on the 3 nodes,
# under mem=balancing (the memory mode whose accesses the kernel samples,
# its scanner quickened); the merged table of each run and each group's
# summary, then each run's page (`numapin groups --html`) base64-encoded
# between "@@@ FILE NAME BEGIN" and "@@@ FILE END".

# demo_run N: TierBench as N groups; the same work in all, as n3-multijvm
# shares it (2,1,1 tier threads a group of one node, 4,2,2 for the group of
# two nodes)
demo_run() {
    n=$1
    cat >/tmp/demo-tb.sh <<EOT
#!/bin/sh
if [ "\$2" = 2 ] && [ "\$1" = 0 ]; then tt=4,2,2 rate=$((2 * MJ_RATE)); else tt=2,1,1 rate=$MJ_RATE; fi
exec /jdk/bin/java -Xint -XX:+UseSerialGC -Xms32m -Xmx64m -XX:-UsePerfData \\
    -cp /tests:/tests/hdrhistogram.jar numapin.tierbench.TierBench --duration-s ${DEMO_SECONDS:-12} --steps 4 \\
    --calibrate-ms 500 --max-rate \$rate --working-set-mb 16 --accesses 200 --tier-threads \$tt --locality
EOT
    rm -rf "/tmp/demo$n" "/tmp/demo$n.html"
    echo "@@@ demo groups=$n: numapin groups --groups $n --options 'threads=Tier*,mem=balancing' --html groups-$n.html -- TierBench"
    timeout 600 $CLI groups --groups "$n" --options 'threads=Tier*,mem=balancing' --logs "/tmp/demo$n" \
        --html "/tmp/demo$n.html" -- sh /tmp/demo-tb.sh '{group}' "$n" >"/tmp/demo$n.table" 2>&1
    rc=$?
    same "numapin groups --groups $n: exit" "$rc" 0
    sed 's/^/@@@ demo table: /' "/tmp/demo$n.table"
    g=0
    while [ $g -lt "$n" ]; do
        log=/tmp/demo$n/group-$g.log
        echo "--- groups=$n group $g: output and agent log"
        cat "$log" 2>/dev/null || echo "(no log)"
        pl=$(grep -o '\] plan .*' "$log" | head -1)
        echo "@@@ demo group $g: plan node=$(kv "$pl" node) cpus=$(kv "$pl" cpus) mem=$(kv "$pl" mem)"
        grep '^locality ' "$log" | tail -1 | sed 's/^/@@@ demo group '"$g"': /'
        grep '\] summary ' "$log" | sed 's/.*\] summary /@@@ demo group '"$g"': summary /'
        g=$((g + 1))
    done
    if [ -s "/tmp/demo$n.html" ]; then
        ok "groups=$n: the page, $(wc -c <"/tmp/demo$n.html") bytes"
        echo "@@@ FILE groups-$n.html BEGIN"
        base64 "/tmp/demo$n.html"
        echo "@@@ FILE END"
    else
        fail "groups=$n: no page"
    fi
}

scenario_n3_demo() {
    quick_scans
    demo_run 3
    demo_run 2
    quick_scans default
    verdict
}
