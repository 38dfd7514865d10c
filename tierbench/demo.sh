#!/usr/bin/env bash
# numapin demo: TierBench run as two JVM groups on this machine at once.
#
#   tierbench/demo.sh [--jdk JDK_HOME] [--groups N] [--duration-s S]
#
# `numapin groups` starts one TierBench JVM per group with
# -agentpath:build/libnumapin.so=group=G,groups=N,threads=Tier*; numapin places
# each JVM's tier threads on its group's CPUs (on a one-node machine, a slice
# of the node: with 2 CPUs, group 0 gets CPU 0 and group 1 CPU 1). For each
# group this shows numapin's plan and where every tier thread went, as
# numapin logged it and as the thread itself read it back, then the merged
# results table. It ends by writing the pictures and the page of the run
# and printing their paths: the plan drawn on this machine
# (`numapin plan --svg`), each group's JVM drawn while it runs
# (`numapin check PID --svg`), and the page of the groups' reports
# (`numapin groups --html`), all in build/tierbench/demo-view/.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jdk=/usr/lib/jvm/java-17-openjdk-amd64
groups=2
duration=15
while [ $# -gt 0 ]; do
    case "$1" in
        --jdk) jdk=${2:?--jdk needs a directory}; shift 2 ;;
        --groups) groups=${2:?--groups needs a count}; shift 2 ;;
        --duration-s) duration=${2:?--duration-s needs seconds}; shift 2 ;;
        -h|--help) sed -n '2,12s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "demo.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
done
hdr=/usr/share/java/hdrhistogram.jar
[ -f "$hdr" ] || { echo "demo.sh: $hdr is missing (Debian package libhdrhistogram-java; ./build.sh installs it)" >&2; exit 2; }
[ -x "$root/build/numapin" ] || { echo "demo.sh: build/numapin is missing: run make first" >&2; exit 2; }

classes="$root/build/tierbench/classes"
[ -f "$classes/numapin/tierbench/TierBench.class" ] || { echo "demo.sh: TierBench is not built: run make tierbench" >&2; exit 2; }

logs="$root/build/tierbench/demo-logs"
view="$root/build/tierbench/demo-view"
rm -rf "$logs" "$view"
mkdir -p "$view"
echo "numapin demo: TierBench as $groups JVM groups on $(nproc) CPUs, $(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l) NUMA node(s)"
"$root/build/numapin" plan --groups "$groups" --svg "$view/plan.svg"
echo
echo "running $groups TierBench JVMs at once for about $duration s ..."
status=0
env -u HWLOC_SYNTHETIC -u HWLOC_THISSYSTEM -u HWLOC_XMLFILE -u JAVA_TOOL_OPTIONS \
    timeout $((duration * 4 + 60)) "$root/build/numapin" groups --groups "$groups" \
    --options 'threads=Tier*' --logs "$logs" --html "$view/run.html" -- \
    "$jdk/bin/java" -cp "$classes:$hdr" numapin.tierbench.TierBench \
    --duration-s "$duration" --working-set-mb 64 >"$logs.table" &
runner=$!

# Each group's JVM drawn while it runs: once its tier threads run (the
# capacity line), found among the children of `numapin groups`.
children() { cat /proc/"$1"/task/*/children 2>/dev/null || true; }
pictures=()
for ((g = 0; g < groups; g++)); do
    for ((i = 0; i < 600; i++)); do
        grep -q '^capacity:' "$logs/group-$g.log" 2>/dev/null && break
        kill -0 "$runner" 2>/dev/null || break
        sleep 0.1
    done
    for tool in $(children "$runner"); do
        for jvm in $(children "$tool"); do
            if tr '\0' '\n' <"/proc/$jvm/environ" 2>/dev/null | grep -qx "NUMAPIN_GROUP=$g" &&
                "$root/build/numapin" check "$jvm" --svg "$view/group-$g.svg" 2>>"$view/check.log"; then
                pictures+=("$view/group-$g.svg")
            fi
        done
    done
done
wait "$runner" || status=$?

for ((g = 0; g < groups; g++)); do
    log="$logs/group-$g.log"
    echo
    echo "=== group $g: $(grep -o 'plan .*' "$log" | cut -d' ' -f2-8)"
    printf '  %-16s %-22s %s\n' "thread" "numapin placed on" "the thread read back"
    awk '
        /\]\[numapin\] placed "/ {
            s = substr($0, index($0, "placed \"") + 8); name = substr(s, 1, index(s, "\"") - 1)
            cpus = $0; sub(/.* cpus=/, "", cpus); sub(/ .*/, "", cpus)
            placed[name] = "cpus=" cpus
        }
        /^placement:$/ { inplace = 1; next }
        inplace && /^  / { name = $1; back[name] = $3; order[++n] = name; next }
        { inplace = 0 }
        END { for (i = 1; i <= n; i++) printf "  %-16s %-22s %s\n", order[i], placed[order[i]] ? placed[order[i]] : "(not placed)", back[order[i]] }
    ' "$log"
    grep -F '][numapin] summary' "$log" | sed 's/.*\] /  /' || true
done
echo
cat "$logs.table"
echo
echo "pictures: $view/plan.svg ${pictures[*]}"
exit $status
