#!/usr/bin/env bash
# Builds numapin, installing the Debian packages it needs first.
#
#   ./build.sh            build build/libnumapin.so and build/numapin
#   ./build.sh demo       build, then run the two-group demo
#   ./build.sh test       build, then run every test (unit, JVM, QEMU multi-node)
#   ./build.sh TARGET...  any Makefile target
#
# As root, missing packages are installed (scripts/install-deps.sh);
# otherwise the one apt-get command to run is printed and the build stops.
set -euo pipefail
cd "$(dirname "$0")"

sets=(build fuzz)
# A JDK with jvmti.h: JDK 17 from Debian unless one is already there.
[ -f /usr/lib/jvm/java-17-openjdk-amd64/include/jvmti.h ] || sets+=(jdk)
scripts/install-deps.sh "${sets[@]}"

export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
jobs=$(nproc 2>/dev/null || echo 2)

if [ $# -eq 0 ]; then
    exec make -j"$jobs" all
fi
if [ "$1" != test ]; then
    exec make -j"$jobs" "$@"
fi

# `test`: run every suite even when one fails, then one closing tally of
# the counts each runner printed.
make -j"$jobs" all
log=build/test-output.log
: > "$log"
status=0
failed=()
for target in $(make -s print-test-targets); do
    echo "=== make $target"
    if ! make "$target" 2>&1 | tee -a "$log"; then
        echo "=== make $target FAILED"
        status=1
        failed+=("$target")
    fi
done
# The log without its colours, as the runners' counts are read from it.
plain_log() { sed 's/\x1b\[[0-9;]*m//g' "$log"; }
plain_log | awk '
    /Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+/ {
        match($0, /Checks: [0-9]+/); n = substr($0, RSTART + 8, RLENGTH - 8)
        match($0, /Failures: [0-9]+/); f = substr($0, RSTART + 10, RLENGTH - 10)
        match($0, /Errors: [0-9]+/); e = substr($0, RSTART + 8, RLENGTH - 8)
        pass += n - f - e; fail += f + e }
    /tests successful/ { match($0, /[0-9]+ tests successful/); pass += substr($0, RSTART, RLENGTH) + 0 }
    /tests failed/ { match($0, /[0-9]+ tests failed/); fail += substr($0, RSTART, RLENGTH) + 0 }
    /^(qemu-numa|test-deb|servers|containers): [0-9]+ passed, [0-9]+ failed$/ { pass += $2; fail += $4 }
    END { printf "tests: %d passed, %d failed\n", pass, fail }'
if [ $status -ne 0 ]; then
    # What failed, at the end where a truncated log still shows it: the
    # suites, then JUnit's failed tests (✘), the QEMU checks, the other
    # runners' FAIL lines, the fuzzers' and Check's failures (FILE.c:LINE:F:
    # or :E:).
    echo "build.sh: failed: ${failed[*]}" >&2
    plain_log | grep -aE '✘|^check FAIL|^FAIL |^fuzz_[a-z]+: FAILED|^fuzz: check failed|^[^ :]+\.c:[0-9]+:[EF]:' |
        cut -c1-400 | head -40 >&2
    echo "build.sh: some test suites failed (see above)" >&2
fi
exit $status
