#!/usr/bin/env bash
# Tests numapin's Debian package without installing it system-wide:
#
#   packaging/test-deb.sh FILE.deb
#
#  - its control fields, and Depends covering every library the binaries
#    name (readelf NEEDED, resolved with ldd and owned, per dpkg -S, by a
#    package Depends names);
#  - its files: the tool, the agent under /usr/lib/MULTIARCH/numapin, the
#    two man pages, the docs, the copyright; stripped binaries exporting
#    only Agent_OnLoad and Agent_OnAttach;
#  - the man pages render without a groff warning and name every agent
#    option (from the agent's own `help`) and every command of the tool;
#  - unpacked (dpkg-deb -x), the tool runs, and `numapin groups` finds the
#    agent installed beside it and places a JVM with it.
# Prints one line per check; exit status 0 when all pass.
set -uo pipefail

deb=${1:?usage: test-deb.sh FILE.deb}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root_dir=$(cd "$here/.." && pwd)
java=${JAVA:-$(command -v java)}
work=$(mktemp -d "${TMPDIR:-/tmp}/numapin-debtest.XXXXXX")
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
check() { # check NAME CONDITION-COMMAND...
    local name=$1; shift
    if "$@" >"$work/out" 2>&1; then
        echo "PASS $name"; passed=$((passed + 1))
    else
        echo "FAIL $name"; sed 's/^/    /' "$work/out" | head -20; failed=$((failed + 1))
    fi
}

multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
agent=usr/lib/$multiarch/numapin/libnumapin.so
field() { dpkg-deb --field "$deb" "$1"; }
version=$(cat "$root_dir/VERSION")

check "control: Package, Version, Architecture" test "$(field Package) $(field Version) $(field Architecture)" \
    = "numapin $version $(dpkg --print-architecture)"
check "control: Depends names libhwloc and libnuma" bash -c '[[ "$1" == *libhwloc* && "$1" == *libnuma* ]] || { echo "$1"; false; }' _ "$(field Depends)"

dpkg-deb -x "$deb" "$work/root"
covered() { # the libraries each binary names (NEEDED), not theirs
    local deps=$1; shift
    for bin in "$@"; do
        for so in $(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
            lib=$(ldd "$bin" | awk -v so="$so" '$1 == so && $3 ~ /^\// {print $3}')
            [ -n "$lib" ] || { echo "$bin: ldd does not resolve $so"; return 1; }
            pkg=$(dpkg -S "$(readlink -f "$lib")" 2>/dev/null | head -1 | cut -d: -f1)
            [ -z "$pkg" ] && pkg=$(dpkg -S "$lib" 2>/dev/null | head -1 | cut -d: -f1)
            [ -n "$pkg" ] || { echo "no package owns $lib"; return 1; }
            grep -qE "(^|, )$pkg( |,|$)" <<<"$deps" || { echo "$bin links $lib ($pkg), not in Depends: $deps"; return 1; }
        done
    done
}
check "Depends covers every linked library" covered "$(field Depends)" "$work/root/usr/bin/numapin" "$work/root/$agent"

expect_files() {
    local list; list=$(dpkg-deb --contents "$deb" | awk '{print $6}' | sed 's|^\./|/|')
    for f in /usr/bin/numapin "/$agent" /usr/share/man/man1/numapin.1.gz /usr/share/man/man7/numapin-agent.7.gz \
        /usr/share/doc/numapin/copyright /usr/share/doc/numapin/changelog.Debian.gz /usr/share/doc/numapin/README.md \
        /usr/share/doc/numapin/docs/options.md /usr/share/doc/numapin/docs/report.md; do
        grep -qx "$f" <<<"$list" || { echo "missing $f"; return 1; }
    done
    # root-owned, no build paths
    dpkg-deb --contents "$deb" | awk '$2 != "root/root" {print; bad=1} END {exit bad}'
}
check "files and owners" expect_files
check "binaries are stripped" bash -c '! file "$1" "$2" | grep -q "not stripped"' _ "$work/root/usr/bin/numapin" "$work/root/$agent"
exports() {
    local got; got=$(nm -D --defined-only "$work/root/$agent" | awk '{print $3}' | sort | tr '\n' ' ')
    [ "$got" = "Agent_OnAttach Agent_OnLoad " ] || { echo "exports: $got"; return 1; }
}
check "the agent exports only Agent_OnLoad and Agent_OnAttach" exports

check "numapin.1 renders without warnings" bash -c '[ -z "$(groff -man -ww -z "$1" 2>&1)" ] || groff -man -ww -z "$1"' _ "$root_dir/man/numapin.1"
check "numapin-agent.7 renders without warnings" bash -c '[ -z "$(groff -man -ww -z "$1" 2>&1)" ] || groff -man -ww -z "$1"' _ "$root_dir/man/numapin-agent.7"
check "man -l reads the installed pages" bash -c 'MANWIDTH=80 man -l "$1" | grep -q "numapin check" && MANWIDTH=80 man -l "$2" | grep -q "report=FILE"' _ \
    "$work/root/usr/share/man/man1/numapin.1.gz" "$work/root/usr/share/man/man7/numapin-agent.7.gz"

options_documented() {
    local keys
    keys=$("$java" "-agentpath:$work/root/$agent=help" -version 2>/dev/null | sed -n 's/^  \([a-z]*\)[= ].*/\1/p' | sort -u)
    [ "$(wc -l <<<"$keys")" -ge 14 ] || { echo "help lists: $keys"; return 1; }
    local page; page=$(MANWIDTH=200 man -l "$work/root/usr/share/man/man7/numapin-agent.7.gz" 2>/dev/null)
    for k in $keys; do
        grep -qE "^ +$k(=| |$)" <<<"$page" || { echo "numapin-agent(7) lacks option $k"; return 1; }
    done
}
check "numapin-agent(7) documents every option the agent's help lists" options_documented
commands_documented() {
    local page; page=$(MANWIDTH=200 man -l "$work/root/usr/share/man/man1/numapin.1.gz" 2>/dev/null)
    for c in $("$work/root/usr/bin/numapin" help | sed -n 's/^ *\(usage:\)\{0,1\} *numapin \([a-z]*\).*/\2/p' | sort -u); do
        grep -q "numapin $c" <<<"$page" || { echo "numapin(1) lacks command $c"; return 1; }
    done
}
check "numapin(1) documents every command" commands_documented

check "the unpacked tool runs" bash -c '[ "$("$1" --version)" = "numapin $2" ] && "$1" topo >/dev/null' _ "$work/root/usr/bin/numapin" "$version"
groups_uses_installed_agent() {
    (cd "$work" && "$work/root/usr/bin/numapin" groups --groups 1 --logs "$work/logs" -- "$java" -XX:+UseSerialGC -version) || return 1
    grep -q "\[info\]\[numapin\] plan group=0 groups=1" "$work/logs/group-0.log" || { cat "$work/logs/group-0.log"; return 1; }
}
check "numapin groups finds the agent installed beside it" groups_uses_installed_agent

echo "test-deb: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
