#!/usr/bin/env bash
# A real server under load, with and without numapin: embedded Jetty 9
# (tests/servers/src/numapin/servers/HelloJetty.java, Debian's
# libjetty9-java) driven by wrk on 127.0.0.1.  Prints a markdown section on
# stdout (make bench appends it to docs/performance.md); each run's line goes
# to stderr as it finishes.
#
#   tests/bench/servers.sh [--jdk JDK_HOME] [--agent LIB] [--rounds N]
#                          [--warmup S] [--seconds S] [--connections N]
#
# Configurations: no agent; numapin placing Jetty's request pool (qtp*) on
# the whole machine (groups=1), on CPU 1 of 2 alone (group=1,groups=2,
# scope=threads) and with the whole JVM there (group=1,groups=2, whose
# default is scope=jvm); the whole JVM on CPU 1 by taskset and by numactl.  They alternate, ROUNDS
# times (default 7), a different one first each round.  Each run: a new JVM,
# wrk for WARMUP seconds (default 3, not counted), then SECONDS (default 5)
# with --latency; requests/s, wrk's latency percentiles and its failed
# requests (socket errors, timeouts after 10 s, non-2xx answers).  A ratio is of
# medians over the rounds, to the no-agent median.  Nothing here asserts a
# number.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srv_root=$(cd "$here/../.." && pwd)
jdk=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
agent=$srv_root/build/libnumapin.so
rounds=7
warmup=3
seconds=5
conns=32
while [ $# -gt 0 ]; do
    case "$1" in
        --jdk) jdk=$2; shift 2 ;;
        --agent) agent=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --warmup) warmup=$2; shift 2 ;;
        --seconds) seconds=$2; shift 2 ;;
        --connections) conns=$2; shift 2 ;;
        -h|--help) sed -n '2,19s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "bench-servers: unknown argument $1" >&2; exit 2 ;;
    esac
done
case "$agent" in /*) ;; *) agent=$PWD/$agent ;; esac
srv_build=$(dirname "$agent")
numapin=$srv_build/numapin
for f in "$agent" "$numapin" "$jdk/bin/java"; do
    [ -e "$f" ] || { echo "bench-servers: no $f" >&2; exit 2; }
done
for t in wrk taskset numactl ss; do
    command -v "$t" >/dev/null || { echo "bench-servers: $t is not installed (scripts/install-deps.sh servers build)" >&2; exit 2; }
done
# shellcheck source=../servers/lib.sh
. "$srv_root/tests/servers/lib.sh"
unset HWLOC_SYNTHETIC HWLOC_THISSYSTEM HWLOC_XMLFILE JAVA_TOOL_OPTIONS JDK_JAVA_OPTIONS _JAVA_OPTIONS \
    NUMAPIN_GROUP NUMAPIN_GROUPS

out=$(mktemp -d "${TMPDIR:-/tmp}/numapin-bench-servers.XXXXXX")
trap 'rm -rf "$out"' EXIT
srv_compile "$jdk" "$out/classes" >&2
cp=$(APP=$out/classes; eval "$(srv_snippet jetty.md classpath)"; echo "$CP")

# name | command prefix | -agentpath options ("" none)
configs=(
    "no agent||"
    "numapin threads=qtp*, groups=1 (both CPUs)||groups=1,threads=qtp*,log=warning"
    "numapin threads=qtp*, group=1,groups=2, scope=threads (request pool on CPU 1)||group=1,groups=2,scope=threads,threads=qtp*,log=warning"
    "numapin threads=qtp*, group=1,groups=2 (the default: whole JVM on CPU 1)||group=1,groups=2,threads=qtp*,log=warning"
    "taskset -c 1 (whole JVM)|taskset -c 1|"
    "numactl --physcpubind=1 --membind=0 (whole JVM)|numactl --physcpubind=1 --membind=0|"
)
jvm=(-Xms256m -Xmx256m -cp "$cp" numapin.servers.HelloJetty)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

declare -A rate p50 p90 p99 placed errors
# One run: the JVM, warm-up, measurement, then (first round) numapin check.
run_one() { # run_one CONFIG ROUND
    local i=$1 r=$2 c=${configs[$1]} prefix opts port pid f=$out/run-$1-$2
    prefix=$(cut -d'|' -f2 <<<"$c")
    opts=$(cut -d'|' -f3 <<<"$c")
    local java=("$jdk/bin/java")
    [ -n "$opts" ] && java+=("-agentpath:$agent=$opts")
    port=$(srv_free_ports 1)
    # shellcheck disable=SC2086 # the prefix is words
    $prefix "${java[@]}" "${jvm[@]}" "$port" > "$f.server" 2>&1 &
    pid=$!
    for _ in $(seq 1 300); do
        grep -qs '^ready ' "$f.server" && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    grep -q '^ready ' "$f.server" || { echo "bench-servers: ${c%%|*}: the server did not start" >&2; cat "$f.server" >&2; exit 1; }
    wrk -t2 -c"$conns" -d"${warmup}s" --timeout 10s "http://127.0.0.1:$port/" > "$f.warmup"
    wrk -t2 -c"$conns" -d"${seconds}s" --timeout 10s --latency "http://127.0.0.1:$port/" > "$f.wrk"
    if [ "$r" -eq 1 ]; then
        "$numapin" check "$pid" --threads 'qtp*' > "$f.check" 2>&1 || true
        placed[$i]=$(awk '/^thread "/ { n++; if ($0 ~ / cpus=1 /) one++ } END { printf "%d of %d", one, n }' "$f.check")
    fi
    kill "$pid"
    wait "$pid" || true
    # Requests without a good answer: socket errors (timeouts included) and non-2xx.
    errors[$i]=$(( ${errors[$i]:-0} + $(srv_wrk_failed "$f.wrk") ))
    rate[$i,$r]=$(srv_wrk_rate "$f.wrk")
    p50[$i,$r]=$(srv_wrk_latency "$f.wrk" 50)
    p90[$i,$r]=$(srv_wrk_latency "$f.wrk" 90)
    p99[$i,$r]=$(srv_wrk_latency "$f.wrk" 99)
    echo "bench-servers: round $r ${c%%|*}: ${rate[$i,$r]} req/s p50=${p50[$i,$r]} p90=${p90[$i,$r]} p99=${p99[$i,$r]} ms" >&2
}

n=${#configs[@]}
for r in $(seq 1 "$rounds"); do
    for k in $(seq 0 $((n - 1))); do
        run_one $(( (k + r - 1) % n )) "$r"
    done
done

median() { # median VALUES...
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
col() { # col ARRAY CONFIG: the rounds' values of one configuration
    local -n a=$1
    local r
    for r in $(seq 1 "$rounds"); do printf '%s\n' "${a[$2,$r]}"; done
}
declare -A med
for i in $(seq 0 $((n - 1))); do
    # shellcheck disable=SC2046 # one value a word
    med[$i]=$(median $(col rate "$i"))
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
# The per-round ratio to the no-agent run of the same round, their median.
round_ratio() {
    local r vals=()
    for r in $(seq 1 "$rounds"); do vals+=("$(ratio "${rate[$1,$r]}" "${rate[0,$r]}")"); done
    median "${vals[@]}"
}

echo
echo "## A real server: Jetty under wrk"
echo
echo "Embedded Jetty 9 (\`HelloJetty\`, Debian's libjetty9-java, one servlet"
echo "answering each GET with a line of text) on 127.0.0.1, loaded by wrk"
echo "(\`-t2 -c$conns\`, ${warmup} s of warm-up not counted, then ${seconds} s with"
echo "\`--latency\`; \`tests/bench/servers.sh\`). Each run is a new JVM"
echo "(\`-Xms256m -Xmx256m\`, nothing else); the configurations alternate, $rounds"
echo "rounds, a different one first each round. numapin places Jetty's request"
echo "pool, \`threads=qtp*\` (acceptor and selectors included: they are pool"
echo "threads), as in [harness/jetty.md](harness/jetty.md)."
echo
echo "This machine has one NUMA node: with \`groups=1\` the group is the whole"
echo "machine, the binding restricts nothing, and what is measured is the cost"
echo "of making and checking it for each thread the pool starts. With"
echo "\`group=1,groups=2,scope=threads\` the request threads are on CPU 1 of the"
echo "two, the rest of the JVM (GC, JIT, main) on both; with \`group=1,groups=2\`"
echo "alone (its default, \`scope=jvm\`) numapin binds the whole JVM to CPU 1, as"
echo "taskset and numactl do. wrk runs unbound on both CPUs in every"
echo "configuration: on two CPUs the load generator and the server share the"
echo "machine."
echo
echo "| configuration | requests/s (median) | ratio of medians to no agent | median of per-round ratios | p50 ms | p90 ms | p99 ms | failed requests | qtp threads on CPU 1 only (round 1) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for i in $(seq 0 $((n - 1))); do
    # shellcheck disable=SC2046 # one value a word
    printf '| %s | %.0f | %s | %s | %.2f | %.2f | %.2f | %s | %s |\n' "${configs[$i]%%|*}" "${med[$i]}" \
        "$(ratio "${med[$i]}" "${med[0]}")" "$(round_ratio "$i")" \
        "$(median $(col p50 "$i"))" "$(median $(col p90 "$i"))" "$(median $(col p99 "$i"))" \
        "${errors[$i]:-0}" "${placed[$i]:-}"
done
echo
echo "Latency percentiles are wrk's, the median over the rounds. Failed"
echo "requests are wrk's socket errors (no answer within 10 s included) and"
echo "non-2xx answers, summed over the rounds. The target"
echo "is a ratio of medians of at least 0.99 for numapin on the whole machine"
echo "(the agent's own cost): $(ratio "${med[1]}" "${med[0]}") in this run, target"
echo "$(awk -v r="$(ratio "${med[1]}" "${med[0]}")" 'BEGIN { print (r >= 0.99) ? "met" : "not met" }')."
echo
echo "Binding the whole JVM to one CPU (taskset, numactl) puts Jetty's GC, JIT"
echo "compiler and other threads on that CPU with the request threads;"
echo "numapin's \`scope=threads\` moves only the request pool there and leaves"
echo "the rest of the JVM on both CPUs. numapin's default binds the whole JVM"
echo "in Agent_OnLoad, after HotSpot sized its GC and JIT threads for the two"
echo "CPUs it saw; under taskset and numactl it sees one CPU from the start."
echo "\`numapin groups\` passes \`-XX:ActiveProcessorCount\` for the group's CPUs"
echo "(\`numapin plan --java-flags\` prints it), which this run leaves out so"
echo "that numapin's binding is compared alone. The per-round figures below spread"
echo "widely: compare medians of one run, and read one round as noise."
echo
echo "Per round (requests/s):"
echo
for i in $(seq 0 $((n - 1))); do
    echo "- ${configs[$i]%%|*}: $(col rate "$i" | awk '{ printf "%s%.0f", (NR > 1 ? ", " : ""), $1 }')"
done
echo
echo "Machine: $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) CPUs,"
echo "$(awk '/^MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), NUMA nodes: $(numactl --hardware | sed -n 's/^available: //p'), Linux $(uname -r);"
echo "$("$jdk/bin/java" -version 2>&1 | head -1); Jetty $(dpkg-query -W -f='${Version}' libjetty9-java 2>/dev/null);"
echo "$(wrk -v 2>&1 | head -1 | sed 's/ Copyright.*//'); numapin $(git -C "$srv_root" rev-parse --short HEAD 2>/dev/null || echo '(no git)'); $(date -u +%Y-%m-%d)."
echo "Load average $load_before before the run and $(cut -d' ' -f1-3 /proc/loadavg) after it: the"
echo "machine is shared, and other builds and tests may run at the same time;"
echo "a ratio compares runs of the same session, alternated, not runs on a quiet machine."
