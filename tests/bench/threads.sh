#!/usr/bin/env bash
# Thread start+join throughput with no agent, with the JVMTI floor (a minimal
# agent, floor_agent.c) and with numapin placing threads, in one run: the
# configurations alternate, ROUNDS times, on one JDK. Prints a markdown
# section (heading, table, machine note) on stdout; each JVM's own line goes
# to stderr as it finishes.
#
#   tests/bench/threads.sh [--jdk JDK_HOME] [--agent LIB] [--floor LIB]
#                           [--pair LIB] [--callback BIN] [--rounds N]
#                           [--threads N] [--batches N] [--pairs N]
#                           [--pair-jvms N]
#
# Defaults: the JDK of `javac` on PATH, build/libnumapin.so, the floor and
# the pair agent at bench/libjvmti_floor.so and bench/libjvmti_pair.so in
# the agent's directory (make bench-threads builds them), 11 rounds, batches
# of 6000 threads, 5 timed batches per JVM after 2000 untimed threads. The
# target is then judged in pairs: two agents in one JVM take turns
# (pair_agent.c), blocks of 300 threads under each, N pairs (25) in each
# of N JVMs (24) a comparison, the comparisons' JVMs taking turns, and the
# verdict rests on the 90% interval of the median ratio, resampled by JVM
# and by pair within it (JVMs differ from each other more than pairs do);
# the JFR target is judged so too, in JVMs with a recording.
# Last, bench_callback (built next to the agent by make bench-threads, or
# --callback BIN) times numapin's own work per thread without a JVM.
# Nothing here asserts a time: the numbers are for docs/performance.md.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
jdk=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
agent=$root/build/libnumapin.so
floor=
pair=
callback=
rounds=11
threads=6000
batches=5
warmup=2000
npairs=25
pair_jvms=24

while [ $# -gt 0 ]; do
    case "$1" in
        --jdk) jdk=$2; shift 2 ;;
        --agent) agent=$2; shift 2 ;;
        --floor) floor=$2; shift 2 ;;
        --pair) pair=$2; shift 2 ;;
        --callback) callback=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;;
        --batches) batches=$2; shift 2 ;;
        --pairs) npairs=$2; shift 2 ;;
        --pair-jvms) pair_jvms=$2; shift 2 ;;
        -h|--help) sed -n '2,25s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "bench: unknown argument $1" >&2; exit 2 ;;
    esac
done
case "$agent" in /*) ;; *) agent=$PWD/$agent ;; esac
[ -f "$agent" ] || { echo "bench: no agent at $agent (run make first)" >&2; exit 2; }
[ -n "$floor" ] || floor=$(dirname "$agent")/bench/libjvmti_floor.so
case "$floor" in /*) ;; *) floor=$PWD/$floor ;; esac
[ -f "$floor" ] || {
    echo "bench: no JVMTI floor agent at $floor (make bench-threads builds it, or pass --floor LIB)" >&2
    exit 2
}
[ -n "$pair" ] || pair=$(dirname "$agent")/bench/libjvmti_pair.so
case "$pair" in /*) ;; *) pair=$PWD/$pair ;; esac
[ -f "$pair" ] || {
    echo "bench: no pair agent at $pair (make bench-threads builds it, or pass --pair LIB)" >&2
    exit 2
}
[ -n "$callback" ] || callback=$(dirname "$agent")/bench_callback
[ -x "$callback" ] || {
    echo "bench: no bench_callback at $callback (make bench-threads builds it, or pass --callback BIN)" >&2
    exit 2
}
[ -x "$jdk/bin/java" ] || { echo "bench: no $jdk/bin/java" >&2; exit 2; }

out=$(mktemp -d "${TMPDIR:-/tmp}/numapin-bench.XXXXXX")
trap 'rm -rf "$out"' EXIT
"$jdk/bin/javac" -d "$out/classes" "$here/ThreadBench.java"

# configuration name | JVM arguments, separated by ';' ("" = none). The
# ratios below take "no agent" as configuration 0 and the floor as
# configuration 1; the JFR section compares 4 with 5 (jfr=on and jfr=off, no
# recording) and 7 with 6 (a recording, with and without numapin); the
# sentences after the table compare 8 and 9 with 1, and 9 with 10 (the floor
# that also binds each thread to one CPU); the target itself is judged in
# the pairs further down.
rec="-XX:StartFlightRecording:filename=$out/rec.jfr,settings=default"
jfr_target=0.95
jfr_spin_us=20 # the JFR section's control: the floor plus this much a thread, with a recording
jfr_pair_spin_ns=5000 # the same in pairs: 2% of a thread's start and join with a recording here
configs=(
    "no agent|"
    "JVMTI floor|-agentpath:$floor"
    "numapin, threads=*, log=info to a file|-agentpath:$agent=groups=1,threads=*,log=info:$out/agent.log"
    "numapin, threads=*, log=warning|-agentpath:$agent=groups=1,threads=*,log=warning"
    "numapin, threads=Bench-*, log=warning|-agentpath:$agent=groups=1,threads=Bench-*,log=warning"
    "numapin, threads=Bench-*, log=warning, jfr=off|-agentpath:$agent=groups=1,threads=Bench-*,log=warning,jfr=off"
    "no agent, JFR recording|$rec"
    "numapin, threads=Bench-*, log=warning, JFR recording|-agentpath:$agent=groups=1,threads=Bench-*,log=warning;$rec"
    "numapin, scope=jvm, threads=Bench-*, log=info to a file|-agentpath:$agent=groups=1,scope=jvm,threads=Bench-*,log=info:$out/agent.log"
    "numapin, scope=jvm, cpus=core, threads=Bench-*, log=info to a file|-agentpath:$agent=groups=1,scope=jvm,cpus=core,threads=Bench-*,log=info:$out/agent.log"
    "JVMTI floor, each Bench-* thread bound to its CPU|-agentpath:$floor=pin=Bench-"
    "numapin, scope=jvm, threads=Bench-*, log=info to a file, logsync|-agentpath:$agent=groups=1,scope=jvm,threads=Bench-*,log=info:$out/agent.log,logsync"
    "JVMTI floor, JFR recording|-agentpath:$floor;$rec"
    "JVMTI floor spinning ${jfr_spin_us} µs a thread, JFR recording|-agentpath:$floor=spin=${jfr_spin_us}000;$rec"
)
jvm=(-XX:+UseSerialGC -Xmx64m -cp "$out/classes")

field() { # field KEY: the number after KEY= in $line
    [[ $line =~ \ $1=([0-9.]+) ]] || { echo "bench: no $1= in: $line" >&2; exit 1; }
    echo "${BASH_REMATCH[1]}"
}
bench() { # bench CONFIG WHAT WARMUP THREADS BATCHES: one JVM of CONFIG; its line in $line
    local ap=${configs[$1]#*|} args=()
    rm -f "$out/agent.log" "$out/rec.jfr"
    [ -z "$ap" ] || IFS=';' read -ra args <<<"$ap"
    line=$("$jdk/bin/java" "${args[@]}" "${jvm[@]}" ThreadBench "$3" "$4" "$5" | grep '^bench ')
    echo "$2: ${configs[$1]%%|*}: $line" >&2
}
declare -A rate cpu self rss
# shellcheck disable=SC2034  # rate, cpu, self and rss are read through namerefs (col, ratios)
for r in $(seq 1 "$rounds"); do
    n=${#configs[@]}
    for k in $(seq 0 $((n - 1))); do
        i=$(( (k + r - 1) % n ))   # a different configuration goes first each round
        bench "$i" "round $r" "$warmup" "$threads" "$batches"
        rate[$i,$r]=$(field rate)
        cpu[$i,$r]=$(field cpu_us)
        self[$i,$r]=$(field self_us)
        rss[$i,$r]=$(field rss_kb)
    done
done

# The target, in pairs: two agents in one JVM (the pair agent) take turns
# every 300 threads, and each pair's ratio compares neighbouring blocks.
# Each entry: what is compared | agent A#agent B (LIB[=OPTIONS]) [| the
# JVM's own arguments, separated by ';']. The floor against itself (a second
# copy: a library loaded twice is one) and against itself plus 1 µs a thread
# show what the pairs resolve. The JFR target's comparison runs with a
# recording, no agent (the floor's `idle`: an environment enabling nothing)
# against numapin, beside its own control: the floor plus jfr_pair_spin_ns
# a thread against the floor, with the same recording.
cp "$floor" "$out/floor-b.so"
flog="log=info:$out/agent.log"
pairs=(
    "the floor against itself|$floor#$out/floor-b.so"
    "the floor plus 1 µs a thread (\`spin=1000\`) against the floor|$floor#$out/floor-b.so=spin=1000"
    "numapin, scope=jvm, threads=Bench-*, log=info to a file, against the floor|$floor#$agent=groups=1,scope=jvm,threads=Bench-*,$flog"
    "numapin, scope=jvm, cpus=core, threads=Bench-*, log=info to a file, against the floor that binds each Bench-* thread to its CPU|$floor=pin=Bench-#$agent=groups=1,scope=jvm,cpus=core,threads=Bench-*,$flog"
    "the same numapin against the floor|$floor#$agent=groups=1,scope=jvm,cpus=core,threads=Bench-*,$flog"
    "the floor that binds each Bench-* thread to its CPU against the floor|$floor#$out/floor-b.so=pin=Bench-"
    "numapin, scope=jvm, threads=Bench-*, log=warning, against the floor|$floor#$agent=groups=1,scope=jvm,threads=Bench-*,log=warning"
    "numapin, scope=jvm, cpus=core, threads=Bench-*, log=warning, against the floor that binds|$floor=pin=Bench-#$agent=groups=1,scope=jvm,cpus=core,threads=Bench-*,log=warning"
    "with a JFR recording: the floor plus $((jfr_pair_spin_ns / 1000)) µs a thread against the floor|$floor#$out/floor-b.so=spin=$jfr_pair_spin_ns|$rec"
    "with a JFR recording: numapin, threads=Bench-*, log=warning, against no agent|$floor=idle#$agent=groups=1,threads=Bench-*,log=warning|$rec"
)
# The comparisons with a target (index, ratio to reach): placements logged
# at info, at log=warning, and the JFR target.
declare -A target=([2]=0.97 [3]=0.97 [6]=0.98 [7]=0.98 [9]=$jfr_target)
# Each comparison's control: the floor plus 1 µs a thread, or with a
# recording the floor plus jfr_pair_spin_ns.
declare -A control=([2]=1 [3]=1 [6]=1 [7]=1 [9]=8)
pair_block=300
for k in "${!pairs[@]}"; do
    : >"$out/pairs-$k"
    : >"$out/rates-$k"
done
# Each comparison's JVMs spread over the whole run: one of each in turn.
# Every other JVM loads the two agents the other way round (B#A), and its
# ratios are turned back (A/B inverted): whatever favours the agent loaded
# first or second then cancels out.
for j in $(seq 1 "$pair_jvms"); do
    for k in "${!pairs[@]}"; do
        rm -f "$out/agent.log" "$out/rec.jfr"
        spec=${pairs[$k]#*|}
        args=()
        if [[ $spec == *'|'* ]]; then
            IFS=';' read -ra args <<<"${spec#*|}"
            spec=${spec%%|*}
        fi
        swap=$((j % 2 == 0))
        order=
        if [ "$swap" = 1 ]; then
            spec="${spec#*#}#${spec%%#*}"
            order=" (B loaded first)"
        fi
        line=$("$jdk/bin/java" "-agentpath:$pair=$spec" "${args[@]}" "${jvm[@]}" ThreadBench pairs 2000 \
            "$pair_block" "$npairs" | grep '^pairs ')
        echo "pairs $k, JVM $j$order: ${pairs[$k]%%|*}: ${line%% ratios=*}" >&2
        echo "${line##*ratios=}" | tr ',' '\n' |
            awk -v j="$j" -v swap="$swap" '{printf "%s %.4f\n", j, swap ? 1 / $1 : $1}' >>"$out/pairs-$k"
        if [ "$swap" = 1 ]; then
            [[ $line =~ \ b=([0-9]+) ]] && echo "${BASH_REMATCH[1]}" >>"$out/rates-$k"
        else
            [[ $line =~ \ a=([0-9]+) ]] && echo "${BASH_REMATCH[1]}" >>"$out/rates-$k"
        fi
    done
done

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
col() { # col ARRAY CONFIG: the values of every round
    local -n a=$1
    for r in $(seq 1 "$rounds"); do echo "${a[$2,$r]}"; done
}
ratios() { # ratios ARRAY CONFIG BASE INVERT: per-round ratio to config BASE
    local -n a=$1
    for r in $(seq 1 "$rounds"); do
        if [ "$4" = 1 ]; then
            awk -v x="${a[$3,$r]}" -v y="${a[$2,$r]}" 'BEGIN {printf "%.3f\n", x / y}'
        else
            awk -v x="${a[$3,$r]}" -v y="${a[$2,$r]}" 'BEGIN {printf "%.3f\n", y / x}'
        fi
    done
}

cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
jver=$("$jdk/bin/java" -version 2>&1 | head -1)
echo "## Thread start and join"
echo
echo "One JVM starts threads one after another, each joined before the next"
echo "starts (\`tests/bench/ThreadBench.java\`, threads named \`Bench-N\`):"
echo "$warmup untimed, then $batches batches of $threads, each timed; a JVM's figure"
echo "is the median of its batches. The configurations alternate, $rounds rounds, a"
echo "different one first each round."
echo
echo "The JVMTI floor is a minimal agent (\`tests/bench/floor_agent.c\`). It"
echo "enables the ThreadStart and ThreadEnd events and reads each new thread's"
echo "name (GetThreadInfo), nothing else. Any agent that looks at thread names"
echo "and sees them end pays this much; numapin enables ThreadEnd only with"
echo "\`cpus=core|pu\` (with \`cpus=node\` a thread's end is seen as it exits)."
echo "numapin runs with \`groups=1\`: a matching thread is bound to the group's"
echo "CPUs and given its memory policy, read back, and logged."
echo "With \`threads=*\`, \`main\` is placed too, and the threads it creates"
echo "inherit its placement: numapin reads it back and, finding it right, sets"
echo "nothing. With \`threads=Bench-*\`, only the benchmark's threads match:"
echo "\`main\` is not placed, so each new thread is bound (CPUs and memory"
echo "policy set, then read back). With \`scope=jvm\` (the default with more"
echo "than one group; \`groups=1\` here, so that the JVM keeps both CPUs, as"
echo "binding a start and join loop to one CPU changes its speed whoever binds"
echo "it) the process is bound at load and every thread inherits the group's"
echo "placement: each \`Bench-*\` thread is read back, found placed, recorded"
echo "and its line queued for numapin's log thread (\`logsync\`: written by the"
echo "thread itself). With \`cpus=core\` besides, each gets a core of its own"
echo "(set without a read first, then read back), freed at its ThreadEnd: of the"
echo "least loaded cores, the one it runs on. The floor with \`pin=Bench-\` binds each \`Bench-*\` thread to"
echo "the CPU it runs on and does nothing else: what a thread bound to one CPU"
echo "costs, whoever binds it. On a one-node machine the group's CPUs"
echo "are all of them: the binding restricts no thread, and what is measured is"
echo "the cost of making and checking it."
echo
echo "Throughput is threads per second (wall clock). CPU is the process's CPU"
echo "time per thread started (all its threads, user and system), which waiting"
echo "for a busy machine's CPUs does not inflate (10 ms clock ticks: about"
echo "1.7 µs a thread here). Thread CPU is each new thread's own CPU time when"
echo "its run() begins (median over all timed threads): creating and starting"
echo "it, and the agent's ThreadStart callback, which runs there. It shows an"
echo "agent's cost per thread most precisely. A ratio is the median of the"
echo "per-round ratios to the no-agent run of the same round. The ratio to floor"
echo "is the same, to the floor run: what numapin adds above the floor. The"
echo "ratio of bests compares each configuration's best round with the no-agent"
echo "best, the least disturbed by other work. For throughput, higher is"
echo "better. The target is a throughput ratio to no agent of at least 0.97, and"
echo "to the floor of at least 0.98 with numapin's default placement and with"
echo "\`cpus=core\`."
echo
echo "| configuration | threads/s | throughput ratio | ratio to floor | best threads/s | ratio of bests | CPU µs/thread | CPU ratio (no agent / agent) | thread CPU µs at run() | added µs | RSS at end (MiB) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
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
        rr=$(ratios rate "$i" 0 0 | median)
        cr=$(ratios cpu "$i" 0 1 | median)
    fi
    if [ "$i" -eq 1 ]; then
        fr=1.000
    else
        fr=$(ratios rate "$i" 1 0 | median)
    fi
    br=$(awk -v x="$best0" -v y="$b_rate" 'BEGIN {printf "%.3f", y / x}')
    added=$(awk -v a="$m_self" -v b="$self0" 'BEGIN {printf "%+.1f", a - b}')
    printf '| %s | %.0f | %.3f | %.3f | %.0f | %s | %.1f | %.3f | %.1f | %s | %.0f |\n' "$name" "$m_rate" "$rr" "$fr" \
        "$b_rate" "$br" "$m_cpu" "$cr" "$m_self" "$added" "$(awk -v k="$m_rss" 'BEGIN {print k / 1024}')"
done
echo
echo "Per round (threads/s):"
echo
for i in $(seq 0 $((${#configs[@]} - 1))); do
    echo "- ${configs[$i]%%|*}: $(col rate "$i" | paste -sd' ' | sed 's/ /, /g')"
done
echo
# What numapin's JFR support costs a placed thread: without a recording
# (jfr=on against jfr=off), and with one (numapin's events, against the
# recording alone, above numapin's own cost without one).
diffs() { # diffs ARRAY A B: per-round A - B
    local -n a=$1
    for r in $(seq 1 "$rounds"); do awk -v x="${a[$2,$r]}" -v y="${a[$3,$r]}" 'BEGIN {printf "%.2f\n", x - y}'; done
}
jfr_idle=$(diffs self 4 5 | median)
jfr_rec=$(diffs self 7 6 | median)
numapin_self=$(diffs self 4 0 | median)
echo "JFR support (numapin, threads=Bench-*, log=warning): with no recording, jfr=on"
echo "against jfr=off is a throughput ratio of $(ratios rate 4 5 0 | median) and $(printf '%+.1f' "$jfr_idle") µs of"
echo "thread CPU at run() (medians of the per-round figures). With a recording"
echo "(\`-XX:StartFlightRecording\`, default settings), numapin adds $(printf '%.1f' "$jfr_rec") µs a placed"
echo "thread above the recording alone, against $(printf '%.1f' "$numapin_self") µs without one: its"
echo "numapin.Placement event, queued at its start and committed by numapin's JFR"
echo "thread, costs it about $(awk -v a="$jfr_rec" -v b="$numapin_self" 'BEGIN {printf "%.1f", a - b}') µs."
echo
# The JFR target, judged on the per-round throughput ratios with their 90%
# interval; the control is the floor spinning jfr_spin_us a thread against
# the floor, both with the recording: resolved when its interval is below 1.
jfr_line=$(paste -d' ' <(ratios rate 7 6 0) <(ratios rate 13 12 0) | awk -v target="$jfr_target" -f "$here/stats.awk" -f /dev/fd/3 3<<'AWK'
{ a[NR] = $1; c[NR] = $2 }
END {
    r = summary(a, NR); lo_r = ilo; hi_r = ihi
    k = summary(c, NR); resolved = ihi < 1
    if (!resolved) v = "not resolved on this run (the control is not)"
    else if (lo_r >= target) v = "met"
    else if (hi_r < target) v = "not met"
    else v = "not shown: the interval holds " target
    printf "%s|%s|%s|%s\n", r, k, resolved ? "resolved" : "**not resolved**", v
}
AWK
)
IFS='|' read -r jfr_ratio jfr_control jfr_control_v jfr_verdict <<<"$jfr_line"
echo "**JFR target: numapin's thread start+join with a recording at least $jfr_target of no"
echo "agent with the same recording.** Per-round throughput ratio (numapin with the"
echo "recording over the recording alone), median and 90% interval over $rounds rounds:"
echo "$jfr_ratio: **$jfr_verdict**. Control, the JVMTI floor spinning $jfr_spin_us µs a"
echo "thread against the floor, both with the recording: $jfr_control ($jfr_control_v)."
echo
echo "Machine: $cpu_model, $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo),"
echo "Linux $(uname -r); $jver; load average $(cut -d' ' -f1-3 /proc/loadavg) at the end."
echo "$(date -u +%Y-%m-%d)."
r3() { printf '%.3f' "$1"; }
pin_floor=$(r3 "$(ratios rate 10 1 0 | median)")
core_pin=$(r3 "$(ratios rate 9 10 0 | median)")
echo
echo "Binding each thread to one CPU and nothing else (the floor with \`pin=Bench-\`) is"
echo "$pin_floor of the floor; \`cpus=core\` is $core_pin of that."
# How far one round's ratio strays, against the target's 2% margin.
spread() { sort -g | awk '{v[NR] = $1} END {printf "%s to %s", v[1], v[NR]}'; }
echo "One round's ratio to the floor ranged from $(ratios rate 8 1 0 | spread) with"
echo "\`scope=jvm\` and from $(ratios rate 9 1 0 | spread) with \`cpus=core\`; the floor's to"
echo "no agent from $(ratios rate 1 0 0 | spread). The thread's own CPU time at run() is"
echo "steadier: numapin adds $(printf '%.1f' "$(diffs self 8 1 | median)") µs above the floor with \`scope=jvm\` and"
echo "$(printf '%.1f' "$(diffs self 9 1 | median)") µs with \`cpus=core\` (medians of the per-round differences)."

# The median of the ratios on stdin ("JVM RATIO" lines) and its 90%
# bootstrap interval, as "MEDIAN LOW HIGH". A resample draws as many JVMs
# as there are, with replacement, then as many pairs of each drawn JVM as it
# has: JVMs differ from each other by more than their pairs' interval, so
# pairs alone would give too narrow a one. Each resample counts how often
# it drew each value, so its median is found by walking the sorted values
# once.
median_interval() {
    sort -k2,2g | awk 'BEGIN {srand(13)}
    {v[NR] = $2; if (!($1 in nj)) {nj[$1] = 0; jv[++J] = $1}; at[$1, ++nj[$1]] = NR}
    END {
        n = NR; lo = int((n + 1) / 2); hi = int(n / 2) + 1
        printf "%.4f\n", (v[lo] + v[hi]) / 2
        for (b = 1; b <= 2000; b++) {
            split("", c)
            t = 0
            for (d = 1; d <= J; d++) {
                j = jv[1 + int(rand() * J)]
                for (i = 1; i <= nj[j]; i++) c[at[j, 1 + int(rand() * nj[j])]]++
                t += nj[j]
            }
            lo = int((t + 1) / 2); hi = int(t / 2) + 1
            s = 0; m = 0
            for (i = 1; i <= n && s < hi; i++) {
                s += c[i]
                if (m == 0 && s >= lo) m = v[i]
                if (s >= hi) m = (m + v[i]) / 2
            }
            printf "%.4f\n", m
        }
    }' | { read -r m; sort -g | sed -n '100p;1901p' | paste -sd' ' | sed "s/^/$m /"; }
}
# The lowest and highest of the JVMs' own medians in FILE ("JVM RATIO"
# lines), as "LOW HIGH".
jvm_range() {
    cut -d' ' -f1 "$1" | sort -un | while read -r j; do
        awk -v j="$j" '$1 == j {print $2}' "$1" | median
    done | sort -g | sed -n '1p;$p' | paste -sd' '
}
# verdict LOW HIGH TARGET CONTROL_HIGH: the control (the floor plus 1 µs a
# thread) resolved when its whole interval lies below 1
verdict() {
    awk -v lo="$1" -v hi="$2" -v t="$3" -v c="$4" 'BEGIN {
        if (c >= 1) print "not resolved on this run (the control is not)"
        else print (lo >= t) ? "met" : (hi < t) ? "not met" : "not shown: the interval holds " t }'
}
echo
echo "### The target"
echo
echo "Two JVMs on this machine, run one after the other, differ by several"
echo "percent whatever they run, so the target is judged in one JVM at a"
echo "time: the pair agent (\`tests/bench/pair_agent.c\`) loads two agents,"
echo "each with its own JVMTI environment, and lets one of them see the"
echo "thread starts at a time. ThreadBench starts $pair_block threads under one, then"
echo "$pair_block under the other, in an order drawn for each pair; a pair's ratio is"
echo "B's throughput over A's in those two neighbouring blocks, so what the"
echo "machine does meanwhile hits both. $npairs pairs in each of $pair_jvms JVMs, after 2000"
echo "untimed threads under each agent; a comparison's figure is the median of its pairs"
echo "(a few pairs stray far more than the rest, so the median rather than"
echo "the mean), with its 90% bootstrap interval. One JVM's median differs"
echo "from another's by more than its pairs' own interval, so the comparisons"
echo "take turns JVM by JVM, and a resample draws JVMs, then pairs of each; the"
echo "range of the JVMs' own medians is shown beside it. Every other JVM"
echo "loads B first and A second, its ratios turned back to B over A, so that"
echo "whatever favours the agent loaded first or second cancels out. Whatever"
echo "an agent does once per JVM (numapin binds the process at load and runs"
echo "its log and rescan threads) applies to both turns; what is compared is"
echo "the cost of each thread. The targets: at least 0.97 of the floor with"
echo "placements logged at info, 0.98 with \`log=warning\`; met when the whole"
echo "interval is at the target or above, not met when below. The first two"
echo "rows say what the method resolves: the floor plus 1 µs a thread is the"
echo "control, and where its interval reaches 1 the run resolves no verdict."
echo "The last two rows run with a JFR recording (\`-XX:StartFlightRecording\`,"
echo "default settings) in every JVM, both turns: the JFR target, numapin"
echo "against no agent (the floor's \`idle\`: a JVMTI environment enabling no"
echo "event) at least $jfr_target, beside its own control, the floor plus"
echo "$((jfr_pair_spin_ns / 1000)) µs a thread (about 2% of a thread's start and join with the"
echo "recording), as the recording's own work makes the blocks stray more."
echo "numapin's events are committed by its JFR thread, after the placed"
echo "thread's start: a block's last commits may fall in the next block, of"
echo "either agent, so the pairs charge numapin for its events' commits only"
echo "in part (the rounds above charge them whole)."
echo
echo "| B against A | A's threads/s (median) | ratio | 90% interval | the JVMs' own medians | target |"
echo "|---|---:|---:|---:|---:|---|"
declare -A iv
for k in "${!pairs[@]}"; do
    read -r m lo hi < <(median_interval <"$out/pairs-$k")
    read -r jlo jhi < <(jvm_range "$out/pairs-$k")
    iv[$k]="$lo $hi"
    v=
    # the control's interval, "LOW HIGH": its high end
    [ -z "${target[$k]:-}" ] || v=$(verdict "$lo" "$hi" "${target[$k]}" "${iv[${control[$k]}]#* }")
    printf '| %s | %.0f | %.3f | %.3f to %.3f | %.3f to %.3f | %s |\n' "${pairs[$k]%%|*}" \
        "$(median <"$out/rates-$k")" "$m" "$lo" "$hi" "$jlo" "$jhi" "$v"
done
echo
ctl_hi=$(echo "${iv[1]}" | cut -d' ' -f2)
# shellcheck disable=SC2086  # each iv is "LOW HIGH"
echo "The targets: with placements logged at info, \`scope=jvm\` $(verdict ${iv[2]} 0.97 "$ctl_hi"),"
# shellcheck disable=SC2086
echo "and with \`cpus=core\` besides, against the floor that binds, $(verdict ${iv[3]} 0.97 "$ctl_hi");"
# shellcheck disable=SC2086
echo "with \`log=warning\`, $(verdict ${iv[6]} 0.98 "$ctl_hi") and $(verdict ${iv[7]} 0.98 "$ctl_hi")."
# shellcheck disable=SC2086
echo "With a JFR recording, numapin against no agent (target $jfr_target): $(verdict ${iv[9]} "$jfr_target" \
    "${iv[${control[9]}]#* }"), its control being the floor plus $((jfr_pair_spin_ns / 1000)) µs a thread."
echo

# numapin's own work per thread, without a JVM: the options of the
# configurations above, with its log in this run's folder.
floor_us=$(median <"$out/rates-0" | awk '{printf "%.1f", 1e6 / $1}')
echo "numapin's own work, timed without a JVM (\`tests/bench/bench_callback.c\`):"
echo "20,000 fresh threads, started and joined one after another, each calling"
echo "what ThreadStart (and, with \`cpus=core\`, ThreadEnd) calls, with the options above, and reading"
echo "its own CPU time around the calls: numapin's work without the JVM, with"
echo "warmer caches than a new thread has inside one, so less than the pairs"
echo "measure (see below). A floor thread's start and join took"
echo "$floor_us µs of wall clock in the pairs above; the last column is the ratio"
echo "that cost alone would give."
echo
echo "| options | CPU µs a thread (median) | 10% to 90% | that cost alone, as a ratio |"
echo "|---|---:|---:|---:|"
"$callback" 20000 \
    "groups=1,scope=jvm,threads=Bench-*,log=info:$out/agent.log" \
    "groups=1,scope=jvm,cpus=core,threads=Bench-*,log=info:$out/agent.log" \
    "groups=1,scope=jvm,threads=Bench-*,log=info:$out/agent.log,logsync" \
    "groups=1,scope=jvm,threads=Bench-*,log=warning" |
    while read -r _ med p10 p90 _ opts; do
        opts=${opts#options=}
        # shellcheck disable=SC2016  # the backquotes are markdown
        printf '| `%s` | %s | %s to %s | %s |\n' "${opts//$out\/agent.log/FILE}" "${med#*=}" "${p10#*=}" \
            "${p90#*=}" "$(awk -v p="$floor_us" -v c="${med#*=}" 'BEGIN {printf "%.3f", p / (p + c)}')"
    done
echo
if commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null); then
    echo "Measured at commit $commit."
fi
echo
cat "$here/threads-notes.md"
