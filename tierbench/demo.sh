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
# results table.
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
rm -rf "$logs"
echo "numapin demo: TierBench as $groups JVM groups on $(nproc) CPUs, $(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l) NUMA node(s)"
"$root/build/numapin" plan --groups "$groups"
echo
echo "running $groups TierBench JVMs at once for about $duration s ..."
status=0
env -u HWLOC_SYNTHETIC -u HWLOC_THISSYSTEM -u HWLOC_XMLFILE -u JAVA_TOOL_OPTIONS \
    timeout $((duration * 4 + 60)) "$root/build/numapin" groups --groups "$groups" \
    --options 'threads=Tier*' --logs "$logs" -- \
    "$jdk/bin/java" -cp "$classes:$hdr" numapin.tierbench.TierBench \
    --duration-s "$duration" --working-set-mb 64 >"$logs.table" || status=$?

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
exit $status
