#!/usr/bin/env bash
# Every guest memory access counted: boots the 3-node machine (n3: 3 nodes x
# 2 CPUs, 1 GiB a node) under QEMU with the access-counting plugin
# (tests/qemu/plugin/access.c), kernel.numa_balancing=1 with its scanner
# quickened, and runs HeapProbe (its heap on node 1) with no agent, under
# numactl --cpunodebind=1 --membind=1 (with and without --balancing), under
# numapin's default options for group 1 of 3 (group=1,groups=3: the whole
# JVM placed), under mem=balancing, and with the launcher preferring node
# 0. Each run is one measured window. Prints, for each, the matrix of
# user-space accesses by the vCPU's node and the memory's, the share of
# node 1's vCPUs' accesses that hit node 1's memory, the kernel's sampled
# share beside it, and where node 1's vCPUs' remote accesses went (the
# JVM's mappings the most accessed remote pages belong to, from the
# guest's pagemap at the window's end).
#
#   bash tests/qemu/access.sh              the runs, counted
#   bash tests/qemu/access.sh --no-plugin  the same guest without the plugin
#                                          (what the plugin costs)
#   bash tests/qemu/access.sh --cost       no plugin: what the kernel's NUMA
#                                          balancing costs a JVM under
#                                          mem=balancing, in pairs of runs
#                                          with it on and off
#
# The machinery, the machine a3 (n3 under the plugin) and the plugin's
# build are tests/qemu/run.sh's (NUMAPIN_QEMU_BUILD, NUMAPIN_AGENT,
# NUMAPIN_CLI, NUMAPIN_QEMU_TIMEOUT as there). Files: $B/logs/a3.access.txt
# (the plugin's record), $B/access/report.txt (what this prints),
# $B/logs/a3.console.txt. The TierBench windows are make test-numa's
# (a3-access-tierbench).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
B=${NUMAPIN_QEMU_BUILD:-$ROOT/build/qemu}
PLUGIN=1
SCENARIO=n3-access
case ${1:-} in
    "") ;;
    --no-plugin) PLUGIN= ;;
    --cost) PLUGIN= SCENARIO=n3-balancing-cost ;;
    *) echo "usage: bash tests/qemu/access.sh [--no-plugin | --cost]" >&2; exit 2 ;;
esac
die() { echo "access: error: $*" >&2; exit 1; }

A=$B/access
mkdir -p "$A"
OUT=$B/logs/a3.access.txt
cat >"$A/extend.sh" <<EOF
MACHINES=a3
a3_scenarios=$SCENARIO
a3_timeout=1500
a3_plugin=$PLUGIN
a3_top=4000
a3_judge=
EOF

rc=0
NUMAPIN_QEMU_EXTEND=$A/extend.sh NUMAPIN_QEMU_ONLY="" bash "$HERE/run.sh" || rc=$?
CONSOLE=$B/logs/a3.console.txt
[ -s "$CONSOLE" ] || die "no console ($B/logs/a3.console)"
grep -a "^@@@ END $SCENARIO " "$CONSOLE" | sed 's/^@@@ /access: /'
if [ "$SCENARIO" = n3-balancing-cost ]; then
    # each round's ratios over its run with balancing off: balancing on, and
    # the control (off, COST_SPIN ms of CPU spun); their medians with a 90%
    # interval (the order statistics a binomial gives, no assumption of a
    # distribution); the verdict; the table for docs/access.md
    grep -a '^@@@ cost ' "$CONSOLE" | sed 's/^@@@ cost //' >"$A/cost.txt"
    cat "$A/cost.txt"
    awk -v table="$B/balancing-cost.md" -v date="$(date -u +%Y-%m-%d)" -f "$HERE/../bench/stats.awk" -f /dev/fd/3 3<<'EOF' "$A/cost.txt" | tee "$A/cost-report.txt"
    function kv(line, k,   m) {
        if (match(line, "(^| )" k "=[^ ]*")) { m = substr(line, RSTART, RLENGTH); sub(/^ /, "", m); return substr(m, length(k) + 2) }
        return ""
    }
    /^tunables/ { tun = $0; sub(/^tunables /, "", tun); sub(/ *spin_ms=.*/, "", tun); spin = kv($0, "spin_ms") }
    /^kind=/ {
        r = kv($0, "run"); if (r == 0) next
        k = kv($0, "kind"); cpu[k, r] = kv($0, "cpu_ticks"); wall[k, r] = kv($0, "wall_cs")
        if (k == "on") { h += kv($0, "hint"); m += kv($0, "migrated"); w += kv($0, "wall_cs"); s = s " " kv($0, "access_local") }
        runs[r] = 1
    }
    END {
        n = 0
        for (r in runs) if (cpu["off", r] > 0 && cpu["on", r] > 0 && cpu["control", r] > 0 && wall["off", r] > 0) {
            n++
            c[n] = cpu["on", r] / cpu["off", r]; ww[n] = wall["on", r] / wall["off", r]
            cc[n] = cpu["control", r] / cpu["off", r]; cw[n] = wall["control", r] / wall["off", r]
            ce[n] = (cpu["off", r] + spin / 10) / cpu["off", r]
        }
        if (n == 0) { print "cost: no complete round"; exit 1 }
        sc = summary(c, n); onlo = ilo; onhi = ihi
        sw = summary(ww, n)
        scc = summary(cc, n); ctllo = ilo
        scw = summary(cw, n)
        sort(ce, n); expect = med(ce, n)
        resolved = ctllo > 1
        if (!resolved) verdict = "not resolved on this run: the control (" spin " ms of CPU, " sprintf("%.3f", expect) " expected) is not resolved"
        else if (onhi < 1) verdict = "balancing on cost less CPU than off (the interval lies below 1)"
        else if (onlo > 1) verdict = sprintf("resolved: balancing on costs the JVM %.1f%% more CPU (median)", 100 * (med(c, n) - 1))
        else verdict = sprintf("no CPU cost resolved: the interval holds 1 while the method resolves the control, so what balancing costs the JVM is below %.1f%% of its CPU time", 100 * (onhi - 1))
        printf "cost: %d rounds; balancing on over off: JVM CPU %s, wall %s\n", n, sc, sw
        printf "cost: control over off (expected %.3f): JVM CPU %s, wall %s\n", expect, scc, scw
        printf "cost: %s\n", verdict
        hs = w > 0 ? h * 100 / w : 0; ms = w > 0 ? m * 100 / w : 0
        printf "cost: with balancing on: %.0f hint faults/s, %.1f pages migrated/s (system-wide, over the runs); access_local:%s\n", hs, ms, s
        print "| over the run with balancing off | JVM CPU time, median (90% interval) | wall time, median (90% interval) |" > table
        print "|---|---|---|" > table
        printf "| balancing on | %s | %s |\n", sc, sw > table
        printf "| the control: off, and %d ms of CPU spun (%.3f expected) | %s | %s |\n", spin, expect, scc, scw > table
        print "" > table
        printf "Verdict: %s. With balancing on: %.0f hint faults a second, %.1f pages migrated a second (system-wide, over the runs). %d rounds of three runs (an order turning each round, after one round not counted), HeapProbe under `mem=balancing` for group 1 of 3 on `a3` without its plugin, the kernel's default scan rates (%s); measured by `bash tests/qemu/access.sh --cost`, %s.\n", verdict, hs, ms, n, tun, date > table
    }
EOF
    exit "$rc"
fi
if [ -z "$PLUGIN" ]; then
    exit "$rc"
fi
[ -s "$OUT" ] || die "the plugin wrote no $OUT (QEMU's output: $B/logs/a3.qemu)"

# The report: windows in the plugin's file are the console's "@@@ access
# window TAG" lines in order.
awk '
function hex(s,   v, i) {
    s = tolower(s); sub(/^0x/, "", s); v = 0
    for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
    return v
}
function kv(line, k,   m) {
    if (match(line, "(^| )" k "=[^ ]*")) { m = substr(line, RSTART, RLENGTH); sub(/^ /, "", m); return substr(m, length(k) + 2) }
    return ""
}
function pct(a, b) { return b > 0 ? sprintf("%.2f%%", 100 * a / b) : "-" }
FNR == 1 { file++ }
# the plugin record
file == 1 && /^window / { w = $2; if ($0 ~ /calibration=failed/) failed[w] = $0; nw = w > nw ? w : nw }
file == 1 && /^node / { nodes = $2 + 1 }
file == 1 && /^calibration / { caladdr[kv($0, "node") "/" kv($0, "page")] = hex(kv($0, "addr")) }
file == 1 && /^matrix / {
    c = kv($0, "cpu_node"); ram[w, c] = kv($0, "ram")
    for (n = 0; n < 8; n++) if (kv($0, "mem_node" n) != "") mat[w, c, n] = kv($0, "mem_node" n)
    if (c != "none") rows[w] = rows[w] " " c
}
file == 1 && /^remote / {
    k = ++nr[w]; rc_[w, k] = kv($0, "cpu_node"); rm_[w, k] = kv($0, "mem_node")
    rp_[w, k] = hex(kv($0, "page")); ra_[w, k] = kv($0, "accesses")
}
file == 1 && /^remote_pages / { rtot[w, kv($0, "cpu_node")] = kv($0, "accesses"); rlist[w, kv($0, "cpu_node")] = kv($0, "listed_accesses") }
# the console
file == 2 && /^@@@ access window / { tag[++nt] = $4; win[$4] = nt }
file == 2 && /^@@@ accmark cal / { calpfn[kv($0, "node") "/" kv($0, "page")] = hex(kv($0, "pfn")) }
file == 2 && /^@@@ access heap / { heap[$4] = kv($0, "share") "  (" kv($0, "by_node") ")" }
file == 2 && /^@@@ access sampled / {
    t = $4; st = 0
    for (n = 0; n < 8; n++) if (kv($0, "node" n) != "") { sf[t, n] = kv($0, "node" n); st += sf[t, n] }
    stot[t] = st; smig[t] = kv($0, "migrated")
}
file == 2 && /^@@@ access vmstat / {
    t = $4; b = $0; sub(/ after:.*/, "", b); a = $0; sub(/.* after:/, "", a)
    vh[t] = kv(a, "hint") - kv(b, "hint"); vl[t] = kv(a, "hint_local") - kv(b, "hint_local")
    vm[t] = kv(a, "migrated") - kv(b, "migrated")
}
file == 2 && /^@@@ access balancing / { sub(/^@@@ access balancing /, ""); balancing = $0 }
file == 2 && /^@@@ pages / {
    t = $3; k = ++nruns[t]
    rpfn[t, k] = hex(kv($0, "pfn")); rn[t, k] = kv($0, "pages")
    lab = $0; sub(/.* excl=[01] ?/, "", lab)
    if (lab == "") lab = "[anonymous]"
    rlab[t, k] = lab " " kv($0, "perm") (kv($0, "excl") == "1" ? "" : " (shared)")
}
END {
    # guest frame = (plugin address - delta of the node) / 4096, one delta a node
    for (key in caladdr) {
        split(key, p, "/"); d = caladdr[key] - calpfn[key] * 4096
        if (!(p[1] in delta)) delta[p[1]] = d
        else if (delta[p[1]] != d) deltabad = deltabad " " p[1]
    }
    print "kernel.numa_balancing=" balancing
    printf "calibration: plugin address = guest-physical address +"
    for (n = 0; n < nodes; n++) printf " %s0x%x (node %d)", n ? ", " : "", delta[n], n
    print deltabad == "" ? "" : "; not one offset for node(s)" deltabad
    for (i = 1; i <= nt; i++) {
        t = tag[i]; w = i
        print ""
        print "== " t
        if (w in failed) { print "  " failed[w]; continue }
        if (!((w, 1) in ram)) { print "  no window recorded"; continue }
        tl = 0; ta = 0
        n1 = split(rows[w], rr, " ")
        for (j = 1; j <= n1; j++) {
            c = rr[j]; line = sprintf("  cpu node %s:", c)
            for (n = 0; n < nodes; n++) { line = line sprintf(" node%d=%s", n, mat[w, c, n]); if (n == c) tl += mat[w, c, n] }
            ta += ram[w, c]
            print line sprintf("  local %s of %s", pct(mat[w, c, c], ram[w, c]), ram[w, c])
        }
        printf "  node 1 vCPUs: %s of their user-space accesses on node 1 (node 0 %s, node 2 %s); all vCPUs: %s local\n",
            pct(mat[w, 1, 1], ram[w, 1]), pct(mat[w, 1, 0], ram[w, 1]), pct(mat[w, 1, 2], ram[w, 1]), pct(tl, ta)
        printf "  heap (HeapProbe): share on node 1 %s\n", heap[t]
        printf "  kernel samples (the JVM threads\x27 NUMA hinting faults by page node): node0=%s node1=%s node2=%s, on node 1 %s of %d; pages migrated %s\n",
            sf[t, 0], sf[t, 1], sf[t, 2], pct(sf[t, 1], stot[t]), stot[t], smig[t]
        printf "  kernel samples, whole system (/proc/vmstat): hint faults %d, local %s; pages migrated %d\n",
            vh[t], pct(vl[t], vh[t]), vm[t]
        # where node 1 vCPUs remote accesses went
        split("", by); split("", bypages); got = 0
        for (k = 1; k <= nr[w]; k++) {
            if (rc_[w, k] != 1) continue
            pfn = int((rp_[w, k] - delta[rm_[w, k]]) / 4096); lab = "(no page of the JVM at the window end)"
            for (q = 1; q <= nruns[t]; q++)
                if (pfn >= rpfn[t, q] && pfn < rpfn[t, q] + rn[t, q]) { lab = rlab[t, q]; break }
            lab = lab " -> node " rm_[w, k]
            by[lab] += ra_[w, k]; bypages[lab]++
        }
        printf "  node 1 vCPUs remote accesses: %s, the %s listed (%s of them) by mapping:\n",
            rtot[w, 1], rlist[w, 1], pct(rlist[w, 1], rtot[w, 1])
        m = 0
        for (lab in by) order[++m] = lab
        for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (by[order[b]] > by[order[a]]) { x = order[a]; order[a] = order[b]; order[b] = x }
        for (a = 1; a <= m && a <= 15; a++)
            printf "    %8s %s of remote, %s of all, %d pages  %s\n", by[order[a]], pct(by[order[a]], rtot[w, 1]),
                pct(by[order[a]], ram[w, 1]), bypages[order[a]], order[a]
        split("", order)
    }
}' "$OUT" "$CONSOLE" | tee "$A/report.txt"
exit "$rc"
