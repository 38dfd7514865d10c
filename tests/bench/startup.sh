#!/usr/bin/env bash
# JVM start-up time with and without numapin, in pairs: `java -version`
# and a small program (Hello, written here: a fork-join pool of two
# workers, one task, exit). Prints a markdown section on stdout.
#
#   tests/bench/startup.sh [--jdk JDK_HOME] [--agent LIB] [--floor LIB] [--pairs N]
#
# Each pair runs one JVM without numapin and one with it, in an order drawn
# for the pair, back to back; its ratio is the second's time over the
# first's (wall time from exec to exit, and the CPU time of the whole
# process, as perf stat counts them). The configurations take turns, pair
# after pair. The median ratio of each comparison comes with its 90%
# interval (tests/bench/stats.awk: order statistics, no distribution
# assumed). Beside them runs a control of known cost: the JVMTI floor agent
# (tests/bench/floor_agent.c) busy-waiting in Agent_OnLoad for the target's
# margin (3%) of the program's median time without an agent (timed first,
# over 7 JVMs), against the same agent without the wait; the method
# resolves the control when its interval lies above 1, that is when it
# tells a cost of the margin's size from none. The target, 1.03 of no
# agent, is met when the whole interval lies at or below it, not met when
# above, and neither otherwise; with the control unresolved, no verdict is
# given. A group with fewer CPUs than the machine is also compared with the
# same JVM placed there by numactl, which needs numapin's CLI beside LIB.
# Nothing here asserts a time.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
jdk=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
agent=$root/build/libnumapin.so
floor=
pairs=80
target=1.03

while [ $# -gt 0 ]; do
    case "$1" in
        --jdk) jdk=$2; shift 2 ;;
        --agent) agent=$2; shift 2 ;;
        --floor) floor=$2; shift 2 ;;
        --pairs) pairs=$2; shift 2 ;;
        -h|--help) sed -n '2,25s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "bench: unknown argument $1" >&2; exit 2 ;;
    esac
done
case "$agent" in /*) ;; *) agent=$PWD/$agent ;; esac
[ -n "$floor" ] || floor=$(dirname "$agent")/bench/libjvmti_floor.so
[ -f "$agent" ] || { echo "bench: no agent at $agent (run make first)" >&2; exit 2; }
[ -f "$floor" ] || { echo "bench: no floor agent at $floor (make $(dirname "$agent")/bench/libjvmti_floor.so)" >&2; exit 2; }
[ -x "$jdk/bin/java" ] || { echo "bench: no $jdk/bin/java" >&2; exit 2; }
bash "$root/scripts/install-deps.sh" linux-perf numactl jq # perf stat counts each JVM's times
cli=$(dirname "$agent")/numapin
[ -x "$cli" ] || { echo "bench: no numapin CLI at $cli (run make first)" >&2; exit 2; }

out=$(mktemp -d "${TMPDIR:-/tmp}/numapin-startup.XXXXXX")
trap 'rm -rf "$out"' EXIT
cat >"$out/Hello.java" <<'EOF'
public final class Hello {
    public static void main(String[] args) throws Exception {
        java.util.concurrent.ForkJoinPool pool = new java.util.concurrent.ForkJoinPool(2);
        System.out.println(pool.submit(() -> Thread.currentThread().getName()).get());
        pool.shutdown();
    }
}
EOF
"$jdk/bin/javac" -d "$out" "$out/Hello.java"

# The topology cache: warm in $out/warm (written by the first JVM, read by
# every other), cold in $out/cold (emptied before each JVM, which then
# discovers the machine and writes the file).
warm="topocache=$out/warm"
cold="topocache=$out/cold"
# Group 0 of 3 as numapin places it: its CPUs and first node, and the
# flags that size its JVM to them (numapin's advice when they do not).
read -r g3_cpus g3_node < <("$cli" plan --groups 3 --group 0 --json | jq -r '.groups[0] | "\(.cpus) \(.nodes[0])"')
g3_flags=$("$cli" plan --groups 3 --group 0 --java-flags)
g3_args=${g3_flags// /;}
g3_bind="numactl=--physcpubind=$g3_cpus,--preferred=$g3_node"
# name | A's arguments (empty: none) | B's, each ';'-separated: the JVM's,
# and numactl=OPTS (comma-separated) to start it under numactl (SPIN: the
# control's wait for the program, in ns)
comparisons=(
    "numapin, no options (one group: scope=threads), cache warm||-agentpath:$agent=$warm"
    "numapin, log=warning (no summary, so no page count at exit), cache warm||-agentpath:$agent=log=warning,$warm"
    "numapin, group 0 of 2 (scope=jvm: the whole JVM on CPU 0), cache warm||-agentpath:$agent=groups=2,group=0,$warm"
    "numapin, group 0 of 3 (scope=jvm), cache warm||-agentpath:$agent=groups=3,group=0,$warm"
    "numactl placing the whole JVM as group 0 of 3 is placed (CPUs $g3_cpus, memory preferred on node $g3_node), no agent||$g3_bind"
    "numapin, group 0 of 3, cache warm, against numactl placing the JVM there, both with $g3_flags|$g3_bind;$g3_args|$g3_args;-agentpath:$agent=groups=3,group=0,$warm"
    "numapin, group 0 of 2, cache cold (discovered and written)||-agentpath:$agent=groups=2,group=0,$cold"
    "numapin, group 0 of 2, topocache=off (discovered)||-agentpath:$agent=groups=2,group=0,topocache=off"
    "numapin, group 0 of 2, cache warm, against the same with topocache=off|-agentpath:$agent=groups=2,group=0,topocache=off|-agentpath:$agent=groups=2,group=0,$warm"
    "the JVMTI floor agent (ThreadStart and ThreadEnd, each name read), against none||-agentpath:$floor"
    "numapin, no options, cache warm, against the JVMTI floor agent|-agentpath:$floor|-agentpath:$agent=$warm"
    "control: the floor agent and the target's margin spun at load, against the floor|-agentpath:$floor|-agentpath:$floor=load_spin=SPIN"
)
programs=("-version" "Hello")
ncmp=${#comparisons[@]}
control=$((ncmp - 1))

# run ARGUMENTS PROGRAM: "WALL_NS CPU_MS" of one JVM.  Under numactl, perf
# runs under it too, so that only the JVM is timed.
run() {
    local words=() ap=() pre=() w s
    [ -z "$1" ] || IFS=';' read -ra words <<<"$1"
    for w in "${words[@]}"; do
        case "$w" in
            '') ;;
            numactl=*) IFS=',' read -ra pre <<<"${w#numactl=}"; pre=(numactl "${pre[@]}") ;;
            *) ap+=("$w") ;;
        esac
    done
    case "$1" in *"$cold"*) rm -rf "$out/cold" ;; esac
    s=$("${pre[@]}" perf stat -x, -e duration_time,task-clock "$jdk/bin/java" -XX:-UsePerfData "${ap[@]}" \
        -cp "$out" "$2" 2>&1 >/dev/null | awk -F, '$3 == "duration_time" {w = $1} $3 == "task-clock" {c = $1} END {print w, c}')
    echo "$s"
}

# One JVM of each kind first, not counted (page cache, the floor's build).
for c in $(seq 0 $((ncmp - 1))); do
    IFS='|' read -r _ a b <<<"${comparisons[$c]}"
    run "$a" -version >/dev/null
    run "${b//SPIN/1}" -version >/dev/null
done
# The control's cost, for each program: the target's margin of its median
# wall time without an agent, over 7 JVMs.
spin=()
for g in 0 1; do
    wall=$(for _ in 1 2 3 4 5 6 7; do run "" "${programs[$g]}"; done | awk '{print $1}' | sort -n | sed -n 4p)
    spin[g]=$(awk -v w="$wall" -v t="$target" 'BEGIN {printf "%d", w * (t - 1)}')
done
: >"$out/pairs"
for p in $(seq 1 "$pairs"); do
    for c in $(seq 0 $((ncmp - 1))); do
        IFS='|' read -r _ a b <<<"${comparisons[$c]}"
        for g in 0 1; do
            bg=${b//SPIN/${spin[g]}}
            if [ $((RANDOM % 2)) = 0 ]; then
                read -r wa ca < <(run "$a" "${programs[$g]}")
                read -r wb cb < <(run "$bg" "${programs[$g]}")
            else
                read -r wb cb < <(run "$bg" "${programs[$g]}")
                read -r wa ca < <(run "$a" "${programs[$g]}")
            fi
            echo "$c $g $wa $ca $wb $cb" >>"$out/pairs"
        done
    done
    echo "startup: pair $p of $pairs" >&2
done

jver=$("$jdk/bin/java" -version 2>&1 | head -1)
# The warm runs read the cache, the cold ones write it: the log says so.
warm_note=$("$jdk/bin/java" "-agentpath:$agent=groups=2,group=0,$warm" -version 2>&1 | sed -n 's/.*\] topology .* cache=//p')
rm -rf "$out/cold"
cold_note=$("$jdk/bin/java" "-agentpath:$agent=groups=2,group=0,$cold" -version 2>&1 | sed -n 's/.*\] topology .* cache=//p')
echo "## Start-up time"
echo
echo "Wall time of one JVM from exec to exit, and the CPU time of its"
echo "process, with numapin against without (\`tests/bench/startup.sh\`):"
echo "\`java -version\`, and a small program that runs one task in a fork-join"
echo "pool of two workers (so numapin places one). $pairs pairs for each"
echo "comparison and program, the two JVMs of a pair back to back in an order"
echo "drawn for it, the comparisons taking turns; a pair's ratio is B's time"
echo "over A's, and each cell the median ratio with its 90% interval (order"
echo "statistics: no distribution assumed). The control is a known cost: the"
echo "JVMTI floor agent busy-waiting in \`Agent_OnLoad\` for the target's margin"
echo "of the program's median wall time without an agent, timed first over 7"
echo "JVMs ($(awk -v n="${spin[0]}" 'BEGIN {printf "%.2f", n / 1e6}') ms for \`-version\`, $(awk -v n="${spin[1]}" 'BEGIN {printf "%.2f", n / 1e6}') ms for Hello),"
echo "against the same agent without the wait; the method resolves it when its"
echo "interval lies above 1: it then tells a cost of the margin's size from"
echo "none. **Target: at most $target of no agent**, judged on the wall-time"
echo "interval: met when all of it is at or below $target, not met when all of"
echo "it is above, not shown otherwise; not resolved on this run when the"
echo "control is not. The topology cache (\`topocache=\`) is in a directory of"
echo "the run's own: warm, a current file every JVM but the first reads"
echo "(their log: cache=$warm_note); cold, emptied before each JVM, which"
echo "discovers the machine and writes the file (cache=$cold_note)."
echo "Group 0 of 3 has CPUs $g3_cpus here. A JVM on fewer CPUs than the"
echo "machine starts differently whoever places it, so its start-up is also"
echo "compared with the same JVM that numactl places there (\`numactl"
echo "--physcpubind=$g3_cpus --preferred=$g3_node\`, the way whole-process tools"
echo "place a JVM), both started with the flags \`numapin plan --java-flags\`"
echo "gives the group (\`$g3_flags\`, as numapin's advice asks; a JVM that numactl places"
echo "sizes itself to its CPUs anyway)."
echo
# numapin against no agent (placed by numactl or not) is judged on the
# target; the other comparisons (the cache, the floor, numactl) are
# measured only.
judged=$(for c in "${comparisons[@]}"; do
    IFS='|' read -r _ a b <<<"$c"
    [[ $a != *"$agent"* && $a != *"$floor"* && $b == *"$agent"* ]] && printf 1 || printf 0
done)
awk -v ncmp="$ncmp" -v control="$control" -v target="$target" -v judged="$judged" -v names="$(printf '%s\n' "${comparisons[@]}" | cut -d'|' -f1 | paste -sd'\t')" \
    -f "$here/stats.awk" -f /dev/fd/3 3<<'EOF' "$out/pairs"
{ c = $1; g = $2; k = ++n[c, g]; w[c, g, k] = $5 / $3; u[c, g, k] = $6 / $4; ms[c, g, k] = $3 / 1e6 }
END {
    split(names, name, "\t")
    for (g = 0; g < 2; g++) {
        summary_of(control, g)
        resolved[g] = ilo_w > 1
    }
    print "| B against A | program | A's wall ms (median) | wall ratio | CPU ratio | verdict |"
    print "|---|---|---:|---|---|---|"
    for (c = 0; c < ncmp; c++)
        for (g = 0; g < 2; g++) {
            s = summary_of(c, g)
            if (c == control)
                v = resolved[g] ? "resolved" : "**not resolved**"
            else if (!resolved[g])
                v = "not resolved on this run"
            else if (substr(judged, c + 1, 1) == "0")
                v = ihi_w < 1 ? "faster (resolved)" : ilo_w > 1 ? "slower (resolved)" : "no difference shown"
            else if (ihi_w <= target)
                v = "met"
            else if (ilo_w > target)
                v = "not met"
            else
                v = "not shown: the interval holds " target
            printf "| %s | %s | %s | %s |\n", name[c + 1], g ? "Hello" : "-version", s, v
        }
}
# "A's median ms | wall | cpu" of comparison c, program g; sets ilo_w, ihi_w
function summary_of(c, g,   i, m, a, b, x, sw) {
    m = n[c, g]
    for (i = 1; i <= m; i++) { a[i] = w[c, g, i]; b[i] = u[c, g, i]; x[i] = ms[c, g, i] }
    sort(x, m)
    sw = summary(a, m); ilo_w = ilo; ihi_w = ihi
    return sprintf("%.1f | %s | %s", med(x, m), sw, summary(b, m))
}
EOF
echo
echo "Machine: $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) CPUs,"
echo "Linux $(uname -r); $jver; load average $(cut -d' ' -f1-3 /proc/loadavg) at the end."
echo "$(date -u +%Y-%m-%d)."
echo
# Where the time goes: the profile behind the cuts, written by hand.
cat "$here/startup-notes.md"
