#!/usr/bin/env bash
# numapin beside the tools that bind whole processes (taskset, numactl) or
# threads in creation order (likwid-pin): what each binds.  The intent
# stated to each: the benchmark's threads ("Bench-*") on CPU 1, the JVM's
# own threads (main, GC, JIT, the rest) left free.
#
#   tests/bench/tools.sh [--jdk JDK_HOME] [--agent LIB]
#
# For each tool: a JVM holding 8 Bench-* threads (Where.java) is looked at
# with `numapin check PID --json` (the tool beside the agent): how many
# Bench-* threads may run on CPU 1 only, how many other threads were bound
# at all.  Prints a markdown section.  numapin runs on a fake 2-node
# machine laid over this one (HWLOC_SYNTHETIC "pack:1 numa:2 core:1 pu:1",
# HWLOC_THISSYSTEM=1), where group 1 of 2 is CPU 1.  Nothing here asserts
# anything.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
jdk=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
agent=$root/build/libnumapin.so
while [ $# -gt 0 ]; do
    case "$1" in
        --jdk) jdk=$2; shift 2 ;;
        --agent) agent=$2; shift 2 ;;
        -h|--help) sed -n '2,15s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "tools: unknown argument $1" >&2; exit 2 ;;
    esac
done
case "$agent" in /*) ;; *) agent=$PWD/$agent ;; esac
numapin=$(dirname "$agent")/numapin
for f in "$agent" "$numapin" "$jdk/bin/java"; do
    [ -e "$f" ] || { echo "tools: no $f" >&2; exit 2; }
done
for t in taskset numactl likwid-pin jq; do
    command -v "$t" >/dev/null || { echo "tools: $t is not installed (./build.sh installs it)" >&2; exit 2; }
done

out=$(mktemp -d "${TMPDIR:-/tmp}/numapin-tools.XXXXXX")
trap 'rm -rf "$out"' EXIT
"$jdk/bin/javac" -d "$out/classes" "$here/Where.java"
# name | command prefix | java option ("" none) | "fake": the fake 2-node machine
configs=(
    "no tool|||"
    "taskset -c 1|taskset -c 1||"
    "numactl --physcpubind=1 --membind=0|numactl --physcpubind=1 --membind=0||"
    "likwid-pin -c 1|likwid-pin -q -c 1||"
    "likwid-pin -c 0,1 (threads in creation order)|likwid-pin -q -c 0,1||"
    "numapin threads=Bench-*, group=1, scope=threads (CPU 1)||-agentpath:$agent=group=1,groups=2,scope=threads,threads=Bench-*,log=warning|fake"
    "numapin threads=Bench-*, group=1 (the default with 2 groups: the whole JVM on CPU 1)||-agentpath:$agent=group=1,groups=2,threads=Bench-*,log=warning|fake"
)
jvm=(-XX:+UseSerialGC -Xmx64m -cp "$out/classes")

run() { # run CONFIG-INDEX PROGRAM ARGS...: the JVM under the config's tool
    local i=$1; shift
    local c=${configs[$i]} prefix opts env=()
    prefix=$(cut -d'|' -f2 <<<"$c")
    opts=$(cut -d'|' -f3 <<<"$c")
    [ "$(cut -d'|' -f4 <<<"$c")" = fake ] && env=(HWLOC_SYNTHETIC="pack:1 numa:2 core:1 pu:1" HWLOC_THISSYSTEM=1)
    local java=("$jdk/bin/java")
    [ -n "$opts" ] && java+=("$opts")
    # shellcheck disable=SC2086 # the prefix is words
    env "${env[@]}" $prefix "${java[@]}" "${jvm[@]}" "$@"
}

declare -A bench_ok bench_all others_bound others_all
for i in "${!configs[@]}"; do
    go=$out/go-$i
    run "$i" Where 8 "$go" > "$out/where-$i.txt" 2>&1 &
    holder=$!
    pid=
    for _ in $(seq 1 600); do
        pid=$(sed -n 's/^where-ready pid=\([0-9]*\)$/\1/p' "$out/where-$i.txt")
        [ -n "$pid" ] && break
        sleep 0.1
    done
    [ -n "$pid" ] || { echo "tools: ${configs[$i]%%|*}: the JVM did not start" >&2; cat "$out/where-$i.txt" >&2; exit 1; }
    "$numapin" check "$pid" --json > "$out/check-$i.json" 2>"$out/check-$i.err"
    touch "$go"
    wait "$holder"
    j=$out/check-$i.json
    bench_all[$i]=$(jq '[.threads[] | select(.name | startswith("Bench-"))] | length' "$j")
    bench_ok[$i]=$(jq '[.threads[] | select((.name | startswith("Bench-")) and .cpus == "1")] | length' "$j")
    others_all[$i]=$(jq '[.threads[] | select(.name | startswith("Bench-") | not)] | length' "$j")
    # bound: allowed fewer CPUs than the machine's (what the first thread of an unbound run has)
    others_bound[$i]=$(jq --arg all "$(nproc --all | awk '{print "0-" $1 - 1}')" \
        '[.threads[] | select((.name | startswith("Bench-") | not) and .cpus != $all)] | length' "$j")
done
echo "## numapin beside numactl, taskset and likwid-pin"
echo
echo "The intent given to each tool: the benchmark's threads (\`Bench-*\`) on"
echo "CPU 1, the JVM's own threads (main, GC, JIT compilers, the others) left"
echo "free. A JVM holding 8 \`Bench-*\` threads (\`tests/bench/Where.java\`)"
echo "is looked at with \`numapin check PID\` (\`tests/bench/tools.sh\`)."
echo "numapin runs on a fake 2-node machine laid over this one, where group 1"
echo "of 2 is CPU 1."
echo
echo "| tool | Bench-* threads on CPU 1 only | other threads bound |"
echo "|---|---:|---:|"
for i in "${!configs[@]}"; do
    printf '| %s | %s of %s | %s of %s |\n' "${configs[$i]%%|*}" "${bench_ok[$i]}" "${bench_all[$i]}" \
        "${others_bound[$i]}" "${others_all[$i]}"
done
echo
echo "Whole-process tools bind every thread, the JVM's own included: its GC"
echo "and JIT threads then compete with the workers for CPU 1. likwid-pin pins"
echo "threads in the order they are created, and a JVM creates a dozen of its"
echo "own before the first \`Bench-*\`, so a list of CPUs lands on threads by"
echo "accident of order. numapin with \`scope=threads\` binds the threads whose"
echo "names match and leaves the others where they were; its default with more"
echo "than one group, \`scope=jvm\`, puts the whole JVM on its group (heap, GC"
echo "and JIT threads included) and the matching threads on their CPUs within"
echo "it, which on a real node is what the heap's locality needs (docs/heap.md)"
echo "and here, with a group of one CPU, binds everything there as taskset"
echo "does. Throughput is not compared here:"
echo "binding a whole JVM to one CPU changes how its threads wake each other"
echo "(a start and join loop runs faster on one CPU), which says nothing of a"
echo "tool's own cost; numapin's is in \"Thread start and join\" above."
echo
echo "Machine: $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) CPUs;"
echo "$("$jdk/bin/java" -version 2>&1 | head -1); likwid-pin $(likwid-pin -v 2>&1 | sed -n 's/.*Version \([0-9.]*\).*/\1/p' | head -1); $(date -u +%Y-%m-%d)."
