#!/usr/bin/env bash
# JVM start-up time with and without numapin, in one run: `java -version`
# and a small program (Hello, written here: a fork-join pool of
# two workers, one task, exit), each configuration in turn, ROUNDS times, a
# different one first each round. Prints a markdown section on stdout.
#
#   tests/bench/startup.sh [--jdk JDK_HOME] [--agent LIB] [--rounds N]
#
# Configurations: no agent; numapin with one group (scope=threads); numapin
# as group 0 of 2 (the whole JVM placed on its group, CPU 0 here); and,
# beside the last, no agent under `taskset -c 0`, the same CPUs without
# numapin, since a JVM on fewer CPUs starts at another speed whoever binds
# it. Wall time per JVM, median over the rounds; a ratio is the median of
# the per-round ratios. Nothing here asserts a time.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
jdk=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
agent=$root/build/libnumapin.so
rounds=11

while [ $# -gt 0 ]; do
    case "$1" in
        --jdk) jdk=$2; shift 2 ;;
        --agent) agent=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        -h|--help) sed -n '2,16s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "bench: unknown argument $1" >&2; exit 2 ;;
    esac
done
case "$agent" in /*) ;; *) agent=$PWD/$agent ;; esac
[ -f "$agent" ] || { echo "bench: no agent at $agent (run make first)" >&2; exit 2; }
[ -x "$jdk/bin/java" ] || { echo "bench: no $jdk/bin/java" >&2; exit 2; }

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

# name | command prefix | -agentpath argument
configs=(
    "no agent||"
    "numapin, groups=1 (scope=threads)||-agentpath:$agent=groups=1,log=warning"
    "numapin, group 0 of 2 (scope=jvm: CPU 0)||-agentpath:$agent=groups=2,group=0,log=warning"
    "no agent, taskset -c 0|taskset -c 0|"
)
programs=("-version" "Hello")

now_ms() { echo $(($(date +%s%N) / 1000000)); }
declare -A t
for r in $(seq 1 "$rounds"); do
    n=${#configs[@]}
    for k in $(seq 0 $((n - 1))); do
        i=$(( (k + r - 1) % n ))
        IFS='|' read -r name pre ap <<<"${configs[$i]}"
        for p in 0 1; do
            cmd=()
            # shellcheck disable=SC2206 # the prefix is words
            [ -z "$pre" ] || cmd=($pre)
            cmd+=("$jdk/bin/java" -XX:-UsePerfData)
            [ -z "$ap" ] || cmd+=("$ap")
            cmd+=(-cp "$out" ${programs[$p]})
            t0=$(now_ms)
            "${cmd[@]}" >/dev/null 2>&1
            t[$i,$p,$r]=$(( $(now_ms) - t0 ))
        done
        echo "round $r: $name: -version ${t[$i,0,$r]} ms, Hello ${t[$i,1,$r]} ms" >&2
    done
done

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
col() { for r in $(seq 1 "$rounds"); do echo "${t[$1,$2,$r]}"; done; }
ratio() { # ratio CONFIG BASE PROGRAM: median of per-round time ratios
    for r in $(seq 1 "$rounds"); do
        awk -v a="${t[$1,$3,$r]}" -v b="${t[$2,$3,$r]}" 'BEGIN {printf "%.3f\n", a / b}'
    done | median
}

jver=$("$jdk/bin/java" -version 2>&1 | head -1)
echo "## Start-up time"
echo
echo "Wall time of one JVM, from exec to exit (\`tests/bench/startup.sh\`):"
echo "\`java -version\`, and a small program that runs one task in a"
echo "fork-join pool of two workers (so numapin places one). The"
echo "configurations alternate, $rounds rounds, a different one first each round;"
echo "times are medians over the rounds, a ratio the median of the per-round"
echo "ratios (higher is slower). A JVM placed whole on group 0 of 2 runs on one"
echo "CPU here, so it is compared with \`taskset -c 0\` too, the same CPU"
echo "without numapin (under taskset HotSpot sees one CPU from the start and"
echo "sizes itself for it: Serial GC, fewer threads; under numapin it is bound"
echo "in Agent_OnLoad, after its own start-up ran on both)."
echo
echo "| configuration | -version ms | ratio to no agent | Hello ms | ratio to no agent |"
echo "|---|---:|---:|---:|---:|"
for i in $(seq 0 $((${#configs[@]} - 1))); do
    name=${configs[$i]%%|*}
    printf '| %s | %s | %s | %s | %s |\n' "$name" "$(col "$i" 0 | median)" "$(ratio "$i" 0 0)" \
        "$(col "$i" 1 | median)" "$(ratio "$i" 0 1)"
done
echo
printf 'Placed whole on CPU 0 against `taskset -c 0`: -version %s, Hello %s.\n' "$(ratio 2 3 0)" "$(ratio 2 3 1)"
echo
echo "Machine: $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) CPUs,"
echo "Linux $(uname -r); $jver; load average $(cut -d' ' -f1-3 /proc/loadavg) at the end."
echo "$(date -u +%Y-%m-%d)."
