#!/usr/bin/env bash
# check_exports.sh LIB: fails unless the dynamic symbol table of LIB defines
# exactly Agent_OnLoad and Agent_OnAttach (the JVMTI entry points; every
# other symbol must stay hidden, see agent/exports.map).  Run by
# `make test-unit` on build/libnumapin.so.
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 LIB" >&2
    exit 2
fi
lib=$1
if [ ! -f "$lib" ]; then
    echo "check_exports: $lib: no such file" >&2
    exit 1
fi

# Defined dynamic symbols: "VALUE TYPE NAME[@VERSION]" lines; keep NAME.
if ! table=$(nm -D --defined-only "$lib"); then
    echo "check_exports: nm -D --defined-only $lib failed" >&2
    exit 1
fi
actual=$(printf '%s\n' "$table" | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }' | LC_ALL=C sort -u)
expected=$(printf '%s\n' Agent_OnAttach Agent_OnLoad)

echo "check_exports: defined dynamic symbols of $lib:"
printf '%s\n' "${actual:-(none)}" | sed 's/^/  /'
if [ "$actual" != "$expected" ]; then
    echo "check_exports: FAIL: expected exactly Agent_OnLoad and Agent_OnAttach" >&2
    extra=$(LC_ALL=C comm -23 <(printf '%s\n' "$actual") <(printf '%s\n' "$expected") | sed '/^$/d' | tr '\n' ' ')
    missing=$(LC_ALL=C comm -13 <(printf '%s\n' "$actual") <(printf '%s\n' "$expected") | sed '/^$/d' | tr '\n' ' ')
    if [ -n "$extra" ]; then echo "  exported but should not be: $extra" >&2; fi
    if [ -n "$missing" ]; then echo "  missing: $missing" >&2; fi
    exit 1
fi
echo "check_exports: OK: exactly Agent_OnAttach, Agent_OnLoad"
