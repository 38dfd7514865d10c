#!/usr/bin/env bash
# Every guest memory access counted: boots the 3-node machine (n3: 3 nodes x
# 2 CPUs, 1 GiB a node) under QEMU with the access-counting plugin
# (tests/qemu/plugin/access.c) and runs HeapProbe (its heap on node 1) with
# no agent, under numactl --cpunodebind=1 --membind=1, and under numapin's
# default options for group 1 of 3 (group=1,groups=3: the whole JVM
# placed). Each run is one measured window, from before the JVM starts to
# the end of HeapProbe's work. Prints, for each, the share of node 1's vCPUs'
# user-space accesses that hit node 1's memory and the share over all vCPUs,
# the matrix, and where node 1's vCPUs' remote accesses went: the JVM's
# mappings the most accessed remote pages belong to (the guest's pagemap,
# read at the window's end).
#
#   bash tests/qemu/access.sh              the runs, counted
#   bash tests/qemu/access.sh --no-plugin  the same guest without the plugin
#                                          (what the plugin costs)
#
# The machinery is tests/qemu/run.sh's (NUMAPIN_QEMU_BUILD, NUMAPIN_AGENT,
# NUMAPIN_CLI, NUMAPIN_QEMU_TIMEOUT as there); the plugin's header comes
# from Debian's qemu source package (tests/qemu/plugin/fetch-header.sh).
# Files: $B/access/access.txt (the plugin's record), $B/access/report.txt
# (what this prints), $B/logs/n3.console.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
B=${NUMAPIN_QEMU_BUILD:-$ROOT/build/qemu}
PLUGIN=1
case ${1:-} in
    "") ;;
    --no-plugin) PLUGIN= ;;
    *) echo "usage: bash tests/qemu/access.sh [--no-plugin]" >&2; exit 2 ;;
esac
die() { echo "access: error: $*" >&2; exit 1; }

A=$B/access
mkdir -p "$A"
HDR=$(bash "$HERE/plugin/fetch-header.sh" "$B/qemu-plugin") || die "no qemu-plugin.h"
CFLAGS=(-O2 -g -std=gnu11 -Wall -Wextra -Wshadow -Werror)
cc "${CFLAGS[@]}" -fPIC -shared -I"$(dirname "$HDR")" -I"$HERE/plugin" "$HERE/plugin/access.c" -o "$A/access.so" ||
    die "cannot build the plugin"
cc "${CFLAGS[@]}" -I"$HERE/plugin" "$HERE/plugin/accmark.c" -lnuma -o "$A/accmark" || die "cannot build accmark"

OUT=$A/access.txt
rm -f "$OUT"
cat >"$A/extend.sh" <<EOF
MACHINES=n3
n3_scenarios=n3-access
n3_timeout=1500
extend_root() {
    mkdir -p "\$1/access"
    cp "$A/accmark" "\$1/access/accmark"
    cat "$HERE/access-guest.sh" >>"\$1/scenarios.sh"
}
EOF
if [ -n "$PLUGIN" ]; then
    # each node's CPUs and memory, from run.sh's table of n3
    cat >>"$A/extend.sh" <<'EOF'
acc_cpus=$(echo $n3_nodes | tr ' ' ':')
acc_mem=$(for n in $n3_nodes; do printf '%s:' "$n3_mem_mb"; done)
EOF
    echo "QEMU_EXTRA=(-plugin \"$A/access.so,cpus=\$acc_cpus,mem=\${acc_mem%:},out=$OUT,top=4000\")" >>"$A/extend.sh"
fi

rc=0
NUMAPIN_QEMU_EXTEND=$A/extend.sh NUMAPIN_QEMU_ONLY="" bash "$HERE/run.sh" || rc=$?
CONSOLE=$B/logs/n3.console.txt
[ -s "$CONSOLE" ] || die "no console ($B/logs/n3.console)"
grep -a '^@@@ END n3-access ' "$CONSOLE" | sed 's/^@@@ /access: /'
if [ -z "$PLUGIN" ]; then
    exit "$rc"
fi
[ -s "$OUT" ] || die "the plugin wrote no $OUT (QEMU's output: $B/logs/n3.qemu)"

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
