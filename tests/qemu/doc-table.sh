#!/usr/bin/env bash
# Puts a table of the last `make test-numa` into its page: build/qemu/NAME.md
# (written by tests/qemu/run.sh) into DOC, between DOC's "NAME begin" and
# "NAME end" markers. `make heap-doc` and `make access-doc` run the
# scenarios behind their table first.
#
#   bash tests/qemu/doc-table.sh heap-table docs/heap.md
#   bash tests/qemu/doc-table.sh access-table docs/access.md
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[ $# -eq 2 ] || { echo "usage: bash tests/qemu/doc-table.sh NAME DOC" >&2; exit 2; }
name=$1 doc=$2
table=${NUMAPIN_QEMU_BUILD:-$root/build/qemu}/$name.md
[ -s "$table" ] || { echo "doc-table: no $table (run make test-numa first)" >&2; exit 1; }
grep -q "^<!-- $name begin -->\$" "$doc" && grep -q "^<!-- $name end -->\$" "$doc" ||
    { echo "doc-table: $doc has no $name markers" >&2; exit 1; }
tmp=$(mktemp "$doc.XXXXXX")
awk -v table="$table" -v begin="<!-- $name begin -->" -v end="<!-- $name end -->" '
    $0 == begin { print; while ((getline l < table) > 0) print l; skip = 1; next }
    $0 == end { skip = 0 }
    !skip { print }
' "$doc" >"$tmp"
mv "$tmp" "$doc"
echo "doc-table: $doc updated from $table"
