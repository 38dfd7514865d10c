#!/usr/bin/env bash
# Thread start+join throughput with numapin placing every thread, against no
# agent, in one run: the configurations alternate, ROUNDS times, on one JDK.
# Prints a markdown section (heading, table, machine note) on stdout; each
# JVM's own line goes to stderr as it finishes.
#
#   java-tests/bench/run.sh [--jdk JDK_HOME] [--agent LIB] [--rounds N]
#                           [--threads N] [--batches N]
#
# Defaults: the JDK of `javac` on PATH, build/libnumapin.so, 5 rounds, batches
# of 6000 threads, 5 timed batches per JVM after 2000 untimed threads.
# Nothing here asserts a time: the numbers are for docs/performance.md.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
jdk=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
agent=$root/build/libnumapin.so
rounds=5
threads=6000
batches=5
warmup=2000

while [ $# -gt 0 ]; do
    case "$1" in
        --jdk) jdk=$2; shift 2 ;;
        --agent) agent=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;;
        --batches) batches=$2; shift 2 ;;
        -h|--help) sed -n '2,13s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "bench: unknown argument $1" >&2; exit 2 ;;
    esac
done
case "$agent" in /*) ;; *) agent=$PWD/$agent ;; esac
[ -f "$agent" ] || { echo "bench: no agent at $agent (run make first)" >&2; exit 2; }
[ -x "$jdk/bin/java" ] || { echo "bench: no $jdk/bin/java" >&2; exit 2; }

out=$(mktemp -d "${TMPDIR:-/tmp}/numapin-bench.XXXXXX")
trap 'rm -rf "$out"' EXIT
"$jdk/bin/javac" -d "$out/classes" "$here/ThreadBench.java"

# configuration name | agent options ("" = no agent)
configs=(
    "no agent|"
    "numapin, threads=*, log=info to a file|groups=1,threads=*,log=info:$out/agent.log"
    "numapin, threads=*, log=warning|groups=1,threads=*,log=warning"
)
jvm=(-XX:+UseSerialGC -Xmx64m -cp "$out/classes")

declare -A rate cpu self rss
for r in $(seq 1 "$rounds"); do
    n=${#configs[@]}
    for k in $(seq 0 $((n - 1))); do
        i=$(( (k + r - 1) % n ))   # a different configuration goes first each round
        name=${configs[$i]%%|*}
        opts=${configs[$i]#*|}
        rm -f "$out/agent.log"
        if [ -z "$opts" ]; then
            line=$("$jdk/bin/java" "${jvm[@]}" ThreadBench "$warmup" "$threads" "$batches" | grep '^bench ')
        else
            line=$("$jdk/bin/java" "-agentpath:$agent=$opts" "${jvm[@]}" ThreadBench "$warmup" "$threads" \
                "$batches" | grep '^bench ')
        fi
        echo "round $r: $name: $line" >&2
        rate[$i,$r]=$(sed 's/.* rate=\([0-9]*\).*/\1/' <<<"$line")
        cpu[$i,$r]=$(sed 's/.* cpu_us=\([0-9.]*\).*/\1/' <<<"$line")
        self[$i,$r]=$(sed 's/.* self_us=\([0-9.]*\).*/\1/' <<<"$line")
        rss[$i,$r]=$(sed 's/.* rss_kb=\([0-9]*\).*/\1/' <<<"$line")
    done
done

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
col() { # col ARRAY CONFIG: the values of every round
    local -n a=$1
    for r in $(seq 1 "$rounds"); do echo "${a[$2,$r]}"; done
}
ratios() { # ratios ARRAY CONFIG INVERT: per-round ratio to "no agent" (config 0)
    local -n a=$1
    for r in $(seq 1 "$rounds"); do
        if [ "$3" = 1 ]; then
            awk -v x="${a[0,$r]}" -v y="${a[$2,$r]}" 'BEGIN {printf "%.3f\n", x / y}'
        else
            awk -v x="${a[0,$r]}" -v y="${a[$2,$r]}" 'BEGIN {printf "%.3f\n", y / x}'
        fi
    done
}

cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
jver=$("$jdk/bin/java" -version 2>&1 | head -1)
echo "## Thread start and join"
echo
echo "One JVM starts threads one after another, each joined before the next"
echo "starts (\`java-tests/bench/ThreadBench.java\`): $warmup untimed, then"
echo "$batches batches of $threads, each timed; a JVM's figure is the median of its"
echo "batches. The configurations alternate, $rounds rounds, a different one first"
echo "each round. With the agent every thread is placed (\`threads=*\`,"
echo "\`groups=1\`: bound to the group's CPUs and given its memory policy, read"
echo "back, and logged). Throughput is threads per second (wall clock); CPU is the"
echo "process's CPU time per thread started (all its threads, user and system),"
echo "which waiting for a busy machine's CPUs does not inflate (10 ms clock"
echo "ticks: about 1.7 µs a thread here). Thread CPU is each new thread's own"
echo "CPU time when its run() begins (median over all timed threads): creating"
echo "and starting it, and numapin's ThreadStart callback, which runs there; it"
echo "shows the agent's cost per thread most precisely. Ratios are the"
echo "median of the per-round ratios to the no-agent run of the same round;"
echo "the ratio of bests compares each configuration's best round, the least"
echo "disturbed by other work (throughput: higher is better; target at least 0.97)."
echo
echo "| configuration | threads/s | throughput ratio | best threads/s | ratio of bests | CPU µs/thread | CPU ratio (no agent / agent) | thread CPU µs at run() | added µs | RSS at end (MiB) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
self0=$(col self 0 | median)
best0=$(col rate 0 | sort -g | tail -1)
for i in $(seq 0 $((${#configs[@]} - 1))); do
    name=${configs[$i]%%|*}
    m_rate=$(col rate "$i" | median)
    b_rate=$(col rate "$i" | sort -g | tail -1)
    m_cpu=$(col cpu "$i" | median)
    m_self=$(col self "$i" | median)
    m_rss=$(col rss "$i" | median)
    if [ "$i" -eq 0 ]; then
        rr=1.000 cr=1.000
    else
        rr=$(ratios rate "$i" 0 | median)
        cr=$(ratios cpu "$i" 1 | median)
    fi
    br=$(awk -v x="$best0" -v y="$b_rate" 'BEGIN {printf "%.3f", y / x}')
    added=$(awk -v a="$m_self" -v b="$self0" 'BEGIN {printf "%+.1f", a - b}')
    printf '| %s | %.0f | %.3f | %.0f | %s | %.1f | %.3f | %.1f | %s | %.0f |\n' "$name" "$m_rate" "$rr" "$b_rate" "$br" \
        "$m_cpu" "$cr" "$m_self" "$added" "$(awk -v k="$m_rss" 'BEGIN {print k / 1024}')"
done
echo
echo "Per round (threads/s):"
echo
for i in $(seq 0 $((${#configs[@]} - 1))); do
    echo "- ${configs[$i]%%|*}: $(col rate "$i" | paste -sd' ' | sed 's/ /, /g')"
done
echo
echo "Machine: $cpu_model, $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo),"
echo "Linux $(uname -r); $jver; load average $(cut -d' ' -f1-3 /proc/loadavg) at the end."
echo "$(date -u +%Y-%m-%d)."
