#!/usr/bin/env bash
# numapin demo: two JVMs share this machine as two groups, at the same time.
#
#   java-tests/demo.sh --agent /abs/build/libnumapin.so --jdk JDK_HOME
#
# Each JVM runs numapin.demo.Demo (fork-join pools Tier1, Tier2, Tier3 named
# by their factories, plus the common pool) with
#   -agentpath:libnumapin.so=groups=2,group=G,threads=Tier*|ForkJoinPool*
# for G = 0 and 1. numapin slices the machine (here: one node, 2 CPUs) so
# that group 0 gets CPU 0 and group 1 gets CPU 1. For each group this prints
# numapin's log lines, then a table of where each thread went, as the thread
# itself read it from /proc/thread-self/status, next to what numapin logged.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
agent=""
jdk=""
groups=2
while [ $# -gt 0 ]; do
    case "$1" in
        --agent) agent=${2:?--agent needs a path}; shift 2 ;;
        --jdk) jdk=${2:?--jdk needs a directory}; shift 2 ;;
        -h|--help) sed -n '2,12s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "demo.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
done
[ -n "$agent" ] && [ -n "$jdk" ] || { echo "usage: demo.sh --agent /abs/libnumapin.so --jdk JDK_HOME" >&2; exit 2; }
case "$agent" in /*) ;; *) agent="$PWD/$agent" ;; esac
[ -f "$agent" ] || { echo "demo.sh: no agent at $agent (run make first)" >&2; exit 2; }
jdk=$(cd "$jdk" && pwd)

out="$root/build/java/$(basename "$jdk")"
classes="$out/demo-classes"
rm -rf "$classes"
mkdir -p "$classes"
mapfile -t src < <(find "$here/src/main/java" -name '*.java' | sort)
"$jdk/bin/javac" --release 17 -d "$classes" "${src[@]}"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
threads='Tier*|ForkJoinPool*'

echo "numapin demo on $(nproc) CPUs, $(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l) NUMA node(s), $("$jdk/bin/java" -version 2>&1 | head -1)"
echo "starting $groups JVMs at once: -agentpath:$(basename "$agent")=groups=$groups,group=G,threads=$threads"
pids=()
for ((g = 0; g < groups; g++)); do
    # Unset what would change the topology or the JVM under the demo.
    env -u HWLOC_SYNTHETIC -u HWLOC_THISSYSTEM -u HWLOC_XMLFILE -u JAVA_TOOL_OPTIONS \
        timeout 60 "$jdk/bin/java" "-agentpath:$agent=groups=$groups,group=$g,threads=$threads" \
        -cp "$classes" numapin.demo.Demo >"$tmp/g$g.out" 2>"$tmp/g$g.err" &
    pids+=($!)
done
status=0
for ((g = 0; g < groups; g++)); do
    if ! wait "${pids[$g]}"; then
        status=1
        echo "demo.sh: the JVM of group $g failed" >&2
    fi
done

for ((g = 0; g < groups; g++)); do
    echo
    echo "=== group $g of $groups"
    echo "--- numapin's log"
    grep -F '][numapin]' "$tmp/g$g.out" | sed 's/^/  /' || true
    grep -F '][numapin]' "$tmp/g$g.err" | sed 's/^/  (stderr) /' || true
    echo "--- where each thread went (CPUs read back by the thread from /proc/thread-self/status)"
    awk '
        # numapin: placed "NAME" tid=N group=G node=N cpus=LIST mem=M
        /\]\[numapin\] (placed|would-place) "/ {
            verb = ($0 ~ /\] placed "/) ? "placed" : "would-place"
            s = substr($0, index($0, verb " \"") + length(verb) + 2)
            name = substr(s, 1, index(s, "\"") - 1)
            cpus = $0; sub(/.* cpus=/, "", cpus); sub(/ .*/, "", cpus)
            node = $0; sub(/.* node=/, "", node); sub(/ .*/, "", node)
            said[name] = verb " on cpus=" cpus " node=" node
            saidcpus[name] = cpus
            next
        }
        /^demo name="/ {
            s = substr($0, 12)
            name = substr(s, 1, index(s, "\"") - 1)
            tid = $0; sub(/.* tid=/, "", tid); sub(/ .*/, "", tid)
            cpus = $0; sub(/.* cpus=/, "", cpus)
            n++; names[n] = name; tids[n] = tid; got[n] = cpus
        }
        END {
            printf "  %-34s %8s  %-6s  %s\n", "THREAD", "TID", "CPUS", "NUMAPIN"
            for (i = 1; i <= n; i++) {
                nm = names[i]
                note = (nm in said) ? said[nm] : "not placed"
                if ((nm in saidcpus) && saidcpus[nm] != got[i] && said[nm] ~ /^placed/) {
                    note = note "  <-- MISMATCH"
                    bad = 1
                }
                printf "  %-34s %8s  %-6s  %s\n", nm, tids[i], got[i], note
            }
            if (n == 0) { print "  (the JVM reported no threads)"; bad = 1 }
            exit bad
        }
    ' "$tmp/g$g.out" || status=1
    if [ -s "$tmp/g$g.err" ] && grep -vqF '][numapin]' "$tmp/g$g.err"; then
        echo "--- stderr"
        sed 's/^/  /' "$tmp/g$g.err"
    fi
done
exit $status
