#!/usr/bin/env bash
# numapin's second demo: the 2-against-3-groups experiment on a real 3-node
# kernel. Boots Debian's 6.1 kernel under QEMU (software emulation: a few
# minutes) on the 3-node machine of `make test-numa` (3 nodes x 2 CPUs,
# 1 GiB a node), and runs TierBench there with `numapin groups`: as 3
# groups, one a node, then as 2, one of them spanning two nodes, the same
# work in both, under mem=balancing so that the kernel samples each JVM's
# memory accesses. Prints each run's merged table (throughput and response
# times) and each group's node, CPUs, pages on its nodes and sampled
# accesses, and writes the page of each run (`numapin groups --html`: each
# group's pages and access locality beside the run's table) into
# build/demo-numa/.
#
#   tierbench/demo-numa.sh [--seconds S]     TierBench's run, 12 s by default
#
# The machinery is tests/qemu/run.sh's (it fetches the kernel and builds the
# guest the first time; NUMAPIN_QEMU_BUILD, NUMAPIN_AGENT, NUMAPIN_CLI as
# there); the guest's part is tests/qemu/demo-guest.sh.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=12
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds=${2:?--seconds needs a number}; shift 2 ;;
        -h|--help) sed -n '2,17s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "demo-numa.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
done
case $seconds in '' | *[!0-9]*) echo "demo-numa.sh: --seconds takes a whole number of seconds" >&2; exit 2 ;; esac
B=${NUMAPIN_QEMU_BUILD:-$root/build/qemu}
out=$root/build/demo-numa
rm -rf "$out"
mkdir -p "$out"

cat >"$out/extend.sh" <<EOT
MACHINES=n3
n3_scenarios=n3-demo
n3_timeout=1200
extend_root() {
    cat "$root/tests/qemu/demo-guest.sh" >>"\$1/scenarios.sh"
    echo "DEMO_SECONDS=$seconds" >>"\$1/scenarios.sh"
}
EOT
echo "numapin demo-numa: TierBench as 3 groups, then as 2, on an emulated 3-node machine (a few minutes)"
rc=0
NUMAPIN_QEMU_EXTEND=$out/extend.sh NUMAPIN_QEMU_ONLY="" bash "$root/tests/qemu/run.sh" >"$out/qemu.log" 2>&1 || rc=$?
console=$B/logs/n3.console.txt
if [ ! -s "$console" ]; then
    tail -20 "$out/qemu.log" >&2
    echo "demo-numa.sh: the machine printed nothing (see $out/qemu.log)" >&2
    exit 1
fi
cp "$console" "$out/console.txt"

# The pages, decoded; the rest of what the guest printed for the demo.
awk -v dir="$out" '
    /^@@@ FILE .* BEGIN$/ { name = $3; file = dir "/" name ".b64"; printf "" > file; next }
    /^@@@ FILE END$/ { close(file); file = ""; next }
    file != "" { print >> file }' "$console"
pages=()
for b in "$out"/*.b64; do
    [ -e "$b" ] || continue
    base64 -d "$b" >"${b%.b64}" && pages+=("${b%.b64}")
    rm -f "$b"
done
for n in 3 2; do
    echo
    echo "=== $n groups on 3 nodes"
    awk -v n="$n" '
        /^@@@ demo groups=/ { on = (index($0, "@@@ demo groups=" n ":") == 1); next }
        on && /^@@@ demo table: / { sub(/^@@@ demo table: /, "  "); print; next }
        on && /^@@@ demo group / { sub(/^@@@ demo /, "  "); print }' "$console"
done
echo
grep -a '^check FAIL' "$console" || true
if [ "$rc" -ne 0 ] || [ ${#pages[@]} -ne 2 ]; then
    echo "demo-numa.sh: the demo did not run through (see $out/qemu.log and $out/console.txt)" >&2
    exit 1
fi
echo "pages: ${pages[*]}"
