#!/usr/bin/env bash
# Runs numapin's JVM-facing tests (JUnit 5) against one or more JDKs.
#
#   tests/jvm/run.sh --agent /abs/build/libnumapin.so --jdk JDK_HOME [--jdk JDK_HOME ...]
#                     [--junit-jar JAR] [--out DIR] [-- extra console-launcher args]
#
# For each JDK: compiles tests/jvm/src with that JDK's javac (--release 17)
# into build/java/<jdk-name>/ (--out DIR: DIR/<jdk-name>/), then runs the JUnit console launcher with that
# JDK's java; the child JVMs the tests launch use that JDK's java too.
# Logs of failed tests' child JVMs are kept in build/java/<jdk-name>/runs/.
# Exits non-zero when any test fails on any JDK.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

agent=""
jdks=()
junit_jar=/usr/share/java/junit-platform-console-standalone.jar
extra=()
out_root=""

usage() {
    sed -n '2,12s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case "$1" in
        --agent) agent=${2:?--agent needs a path}; shift 2 ;;
        --jdk) jdks+=("${2:?--jdk needs a directory}"); shift 2 ;;
        --junit-jar) junit_jar=${2:?}; shift 2 ;;
        --out) out_root=${2:?--out needs a directory}; shift 2 ;;
        --) shift; extra=("$@"); break ;;
        -h|--help) usage ;;
        *) echo "run.sh: unknown argument: $1" >&2; usage ;;
    esac
done

[ -n "$agent" ] || { echo "run.sh: --agent is required" >&2; usage; }
[ ${#jdks[@]} -gt 0 ] || { echo "run.sh: at least one --jdk is required" >&2; usage; }
case "$agent" in /*) ;; *) agent="$PWD/$agent" ;; esac
# The child JVMs run in directories of their own: every path absolute.
case "$out_root" in /*|"") ;; *) out_root="$PWD/$out_root" ;; esac
[ -f "$agent" ] || { echo "run.sh: no agent at $agent (run make first)" >&2; exit 2; }
[ -f "$junit_jar" ] || { echo "run.sh: no JUnit console launcher at $junit_jar (apt-get install junit5)" >&2; exit 2; }

status=0
results=()
for jdk in "${jdks[@]}"; do
    jdk=$(cd "$jdk" && pwd)
    name=$(basename "$jdk")
    out="${out_root:-$root/build/java}/$name"
    echo "=== numapin JVM tests on $name ($jdk)"
    for tool in javac java; do
        [ -x "$jdk/bin/$tool" ] || { echo "run.sh: $jdk/bin/$tool not found" >&2; exit 2; }
    done
    rm -rf "$out/classes" "$out/test-classes" "$out/runs" "$out/reports"
    mkdir -p "$out/classes" "$out/test-classes" "$out/runs"

    mapfile -t main_src < <(find "$here/src/main/java" -name '*.java' | sort)
    mapfile -t test_src < <(find "$here/src/test/java" -name '*.java' | sort)
    "$jdk/bin/javac" --release 17 -Xlint:all -d "$out/classes" "${main_src[@]}"
    "$jdk/bin/javac" --release 17 -Xlint:all,-processing -d "$out/test-classes" \
        -cp "$out/classes:$junit_jar" "${test_src[@]}"

    set +e
    "$jdk/bin/java" \
        -Dnumapin.java="$jdk/bin/java" \
        -Dnumapin.agent="$agent" \
        -Dnumapin.child.cp="$out/classes" \
        -Dnumapin.repo="$root" \
        -Dnumapin.runs="$out/runs" \
        -jar "$junit_jar" \
        --disable-banner \
        --disable-ansi-colors \
        --fail-if-no-tests \
        --details=tree \
        --class-path "$out/test-classes:$out/classes" \
        --select-package numapin.tests \
        --reports-dir "$out/reports" \
        "${extra[@]}"
    rc=$?
    set -e
    if [ $rc -ne 0 ]; then
        status=1
        results+=("$name: FAILED (console launcher exit $rc; logs of failed tests in $out/runs)")
    else
        results+=("$name: passed")
    fi
done

echo "=== numapin JVM tests results"
printf '%s\n' "${results[@]}"
exit $status
