#!/usr/bin/env bash
# Puts the heap table of the last `make test-numa` (build/qemu/heap-table.md,
# written by tests/qemu/run.sh from the heap scenarios) into docs/heap.md,
# between its "heap-table" markers. `make heap-doc` runs the heap scenarios
# first.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
table=${1:-$root/build/qemu/heap-table.md}
doc=$root/docs/heap.md
[ -s "$table" ] || { echo "heap-doc: no $table (run make test-numa first)" >&2; exit 1; }
grep -q '^<!-- heap-table begin -->$' "$doc" && grep -q '^<!-- heap-table end -->$' "$doc" ||
    { echo "heap-doc: $doc has no heap-table markers" >&2; exit 1; }
tmp=$(mktemp "$doc.XXXXXX")
awk -v table="$table" '
    /^<!-- heap-table begin -->$/ { print; while ((getline l < table) > 0) print l; skip = 1; next }
    /^<!-- heap-table end -->$/ { skip = 0 }
    !skip { print }
' "$doc" >"$tmp"
mv "$tmp" "$doc"
echo "heap-doc: $doc updated from $table"
