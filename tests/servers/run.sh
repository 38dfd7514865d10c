#!/usr/bin/env bash
# Real Java servers under numapin, loaded by wrk: the recipes of
# docs/harness/jetty.md, tomcat.md and netty.md, run as they are written.
#
#   tests/servers/run.sh --agent LIB --jdk JDK_HOME [--jdk JDK_HOME ...]
#                        [--only NAME,...] [--wrk-seconds N] [--keep]
#
# Each recipe's blocks (the fenced block after "<!-- test: NAME -->") run
# with /bin/sh in a fresh directory, with this build's directory in place
# of /opt/numapin/, free ports in place of 8080 and 8081, wrk runs of
# --wrk-seconds (default 2) instead of the documents' 10, and the build
# directory (numapin) and the JDK's bin first on PATH.  Everything listens
# on 127.0.0.1 only.  A test is one scenario (jetty-dry-run, jetty-place,
# jetty-groups, tomcat-..., netty-...) on one JDK; the dry runs, which show
# what the servers' pools are called, run on the first JDK only.  --only
# runs the tests whose names contain one of the words given.  Ends with
# `servers: N passed, M failed`; a failed test's directory (commands,
# output, logs) is kept under build/servers/runs/ (every test's, with
# --keep).  Needs the Debian packages of scripts/install-deps.sh's
# "servers" set (make test-servers installs them).  Nothing here asserts a
# duration.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srv_root=$(cd "$here/../.." && pwd)
agent=
jdks=()
only=
wrk_s=2
keep=
while [ $# -gt 0 ]; do
    case "$1" in
        --agent) agent=$2; shift 2 ;;
        --jdk) jdks+=("$2"); shift 2 ;;
        --only) only=$2; shift 2 ;;
        --wrk-seconds) wrk_s=$2; shift 2 ;;
        --keep) keep=1; shift ;;
        -h|--help) sed -n '2,21s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "servers: unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -n "$agent" ] && [ ${#jdks[@]} -gt 0 ] || { echo "servers: --agent and --jdk are required" >&2; exit 2; }
case "$agent" in /*) ;; *) agent=$PWD/$agent ;; esac
srv_build=$(dirname "$agent")
for f in "$agent" "$srv_build/numapin"; do
    [ -e "$f" ] || { echo "servers: no $f (run make first)" >&2; exit 2; }
done
for t in wrk curl ss pgrep timeout; do
    command -v "$t" >/dev/null || { echo "servers: $t is not installed (scripts/install-deps.sh servers)" >&2; exit 2; }
done
# shellcheck source=lib.sh
. "$here/lib.sh"

# Nothing of the caller's reaches the servers: no fake topology, JVM
# options or group.
unset HWLOC_SYNTHETIC HWLOC_THISSYSTEM HWLOC_XMLFILE JAVA_TOOL_OPTIONS JDK_JAVA_OPTIONS _JAVA_OPTIONS \
    NUMAPIN_GROUP NUMAPIN_GROUPS CATALINA_OPTS JAVA_OPTS
runs=$srv_build/servers/runs
rm -rf "$runs"
mkdir -p "$runs"
# The CPUs an unplaced thread has: this process's.
all_cpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
# A scenario's time limit: generous, the machine is shared.
limit=$((90 + 4 * wrk_s))

passed=0
failed=0
problems=()

# ---- a test ----

begin() { # begin NAME [PORTS]: a new test, its directory in $dir, PORTS free ports from $port
    name=$1
    port=
    [ -z "${2:-}" ] || port=$(srv_free_ports "$2")
    problems=()
    started=$SECONDS
    dir=$runs/$jdk_name/$name
    mkdir -p "$dir"
}
expect() { # expect MESSAGE COMMAND...: a problem unless COMMAND succeeds
    local msg=$1
    shift
    "$@" || problems+=("$msg")
}
finish() {
    if [ ${#problems[@]} -eq 0 ]; then
        passed=$((passed + 1))
        echo "PASS $name ($jdk_name, $((SECONDS - started)) s)"
        [ -n "$keep" ] || rm -rf "$dir"
    else
        failed=$((failed + 1))
        echo "FAIL $name ($jdk_name, $((SECONDS - started)) s): logs in $dir"
        printf '  - %s\n' "${problems[@]}"
    fi
}
wanted() { # wanted NAME: is NAME selected by --only (dry runs: on the first JDK only)?
    [[ $1 == *-dry-run && $jdk_name != "$first_jdk" ]] && return 1
    [ -z "$only" ] && return 0
    local w
    for w in ${only//,/ }; do
        [[ $1 == *"$w"* ]] && return 0
    done
    return 1
}
blocks() { # blocks DOC PORT NAME...: the blocks' text, one after another
    local doc=$1 port=$2 n text out=
    shift 2
    for n in "$@"; do
        text=$(srv_snippet "$doc" "$n" "$port" "$wrk_s") || { problems+=("no block $n in $doc"); return 1; }
        out+=$text$'\n'
    done
    printf '%s' "$out"
}
run_blocks() { # run_blocks OUT DOC PORT NAME...: the blocks, as one script, in $dir
    local out=$1 doc=$2 port=$3 script
    shift 3
    script=$(blocks "$doc" "$port" "$@") || return 1
    run_script "$out" "$script"
}
run_script() { # run_script OUT SCRIPT: SCRIPT, with APP and TEMPLATE set, in $dir
    srv_run "$dir" "$limit" "$1" "APP=$classes
TEMPLATE=$here/tomcat
$2"
}

# ---- what the recipes printed ----

is() { [ "$1" = "$2" ]; }
ge() { [ -n "$1" ] && [ -n "$2" ] && [ "$1" -ge "$2" ]; }
has() { grep -qE -- "$2" "$1" 2>/dev/null; }
hasnt() { ! grep -qE -- "$2" "$1" 2>/dev/null; }

# Every request answered: wrk completed some, none failed.
answered() { # answered WRK_OUTPUT_FILE
    local n
    n=$(srv_wrk_requests "$1")
    expect "wrk completed no request ($1)" ge "${n:-0}" 1
    expect "wrk saw failed requests: $(srv_wrk_errors "$1" | tr '\n' ' ')" is "$(srv_wrk_errors "$1")" ""
}

# A recipe's run: it served until stopped by SIGTERM (its status 143, that
# of `wait` on the killed JVM), and every request wrk made was answered.
served() { # served STATUS WRK_OUTPUT_FILE
    expect "the server did not run until stopped (exit $1, not 143)" is "$1" 143
    answered "$2"
}
serve() { # serve DOC BLOCK...: the blocks, on $port, to out.txt, then served
    run_blocks out.txt "$1" "$port" "${@:2}"
    served $? "$dir/out.txt"
}

# A dry run placed nothing.
placed_nothing() { # placed_nothing LOG
    local w
    w=$(field "$1" summary would_place)
    expect "the dry run would have placed ${w:-?} threads, not 0" is "$w" 0
}

# The `thread "NAME" tid=T cpus=C ...` lines of numapin check's output (its
# first process, the one with pid PID, or all of them), as "tid cpus name".
check_threads() { # check_threads FILE [PID|all]
    awk -v pid="${2:-}" '
        /^process pid=/ { n++; split($2, a, "="); on = (pid == "all" || (pid == "" ? n == 1 : a[2] == pid)); next }
        on && /^thread "/ {
            name = $0; sub(/^thread "/, "", name); sub(/" tid=[0-9]+ cpus=.*/, "", name)
            match($0, /" tid=[0-9]+ /); tid = substr($0, RSTART + 6, RLENGTH - 7)
            match($0, / cpus=[^ ]+/); cpus = substr($0, RSTART + 6, RLENGTH - 6)
            print tid, cpus, name }' "$1"
}

# A field of numapin's last EVENT line in LOG ("plan", "summary").
field() { # field LOG EVENT KEY
    grep -E "\]\[numapin\] $2 " "$1" 2>/dev/null | tail -1 | tr ' ' '\n' | sed -n "s/^$3=//p"
}

# The agent's log is clean: no warning or error, but for the advice that
# placed threads outnumber the group's CPUs ("N placed threads are live on
# this group's M CPUs"): a request pool is meant to be larger than the CPU
# count, and the line's ForkJoinPool sizes do not apply to it.
clean_log() { # clean_log LOG
    local bad
    bad=$(grep -E '\]\[(warning|error)\]\[numapin\]' "$1" |
        grep -vE "\] advice: .*placed threads .*CPUs" | head -3)
    expect "the agent warned: $bad" is "$bad" ""
}

# The request threads of a placed JVM: numapin check lists at least MIN
# whose names match REGEX, every one on the plan's CPUs (fewer than the
# machine's), each with its `placed` line (same CPUs) in LOG; the summary
# counts the placed lines and no failure.
placed_threads() { # placed_threads CHECK_OUTPUT PID LOG REGEX MIN
    local out=$1 pid=$2 log=$3 re=$4 min=$5 plan tid cpus tname n=0 bad=0 unlogged=0
    plan=$(field "$log" plan cpus)
    expect "no plan line in $log" has "$log" '\]\[numapin\] plan '
    expect "the plan's CPUs ($plan) are all of the machine's ($all_cpus): nothing to tell placed from unplaced" \
        test "$plan" != "$all_cpus"
    while read -r tid cpus tname; do
        [[ $tname =~ $re ]] || continue
        n=$((n + 1))
        [ "$cpus" = "$plan" ] || { bad=$((bad + 1)); problems+=("\"$tname\" tid=$tid has cpus=$cpus, not the plan's $plan"); }
        grep -qE "\] placed \"[^\"]*\" tid=$tid group=[0-9]+ node=[0-9,-]+ cpus=$plan " "$log" ||
            unlogged=$((unlogged + 1))
    done < <(check_threads "$out" "$pid")
    expect "numapin check listed $n threads matching $re, fewer than $min" ge "$n" "$min"
    expect "$unlogged of the $n threads have no placed line with cpus=$plan in $log" is "$unlogged" 0
    expect "summary: failed=$(field "$log" summary failed), not 0" is "$(field "$log" summary failed)" 0
    expect "summary: mem_failed=$(field "$log" summary mem_failed), not 0" is "$(field "$log" summary mem_failed)" 0
    expect "summary: placed=$(field "$log" summary placed), not the $(grep -c '\] placed "' "$log") placed lines" \
        is "$(field "$log" summary placed)" "$(grep -c '\] placed "' "$log")"
}

# numapin groups' table: a row per group 0..N-1, stopped by SIGTERM (143),
# with KEY >= the wrk count of that group (wrk-G.txt) when KEY is given,
# and placed=K (K >= MIN) cpus=the group's plan CPUs mem_pages= mem_local=; the plan CPU sets
# disjoint; a total row when KEY is given.
groups_table() { # groups_table OUT LOGS N MIN [KEY]
    local out=$1 logs=$2 n=$3 min=$4 key=${5:-} g row cpus placed seen=
    for g in $(seq 0 $((n - 1))); do
        cpus=$(field "$logs/group-$g.log" plan cpus)
        expect "group $g's log has no plan line" test -n "$cpus"
        expect "groups $seen and $g share CPUs ($cpus)" test -z "$seen" -o "$(printf '%s\n' $seen | grep -cx "$cpus")" = 0
        seen="$seen $cpus"
        row=$(grep -E "^$g +143 " "$out")
        expect "no table row for group $g exiting 143 (SIGTERM)" test -n "$row"
        placed=$(sed -n 's/.* placed=\([0-9]*\) cpus=.*/\1/p' <<<"$row")
        expect "group $g: table says placed=$placed, fewer than $min" ge "${placed:-0}" "$min"
        local said
        said=$(sed -n 's/.* cpus=\([^ ]*\).*/\1/p' <<<"$row")
        expect "group $g: table says cpus=$said, its plan $cpus" is "$said" "$cpus"
        expect "group $g: no memory per node in the table ($row)" test -n "$(grep -E ' mem_pages=[0-9:,]+ mem_local=[0-9.]+%' <<<"$row")"
        if [ -n "$key" ]; then
            local v w
            v=$(awk '{printf "%d", $3}' <<<"$row")
            w=$(srv_wrk_requests "$dir/wrk-$g.txt")
            expect "group $g: $key=$v in the table, fewer than wrk's ${w:-0}" ge "${v:-0}" "${w:-1}"
        fi
    done
    [ -z "$key" ] || expect "no total row" has "$out" '^total '
}

# The shape of output lines (stdin): each line's words, with each field's
# value and each quoted string left out ("KEY=", ""), one a line; the
# lines "..." of a document's sample (more of the same) are left out.
shapes() {
    sed -E '/^ *\.\.\. *$/d; s/"([^"\\]|\\.)*"/""/g; s/=[^ ]*/=/g'
}

# numapin check's output for its first process in FILE: from its process
# line to its matched line.
check_output() { # check_output FILE
    awk '/^process pid=/ { n++ } n == 1 { print } n == 1 && /^matched threads=/ { exit }' "$1"
}

# The sample after "<!-- test: NAME -->" in DOC has the shape of what
# numapin check printed (in FILE): the same kinds of lines, with the same
# fields in the same order, in the same order (each kind where it first
# comes); the numbers may differ.  A placed thread the agent's marker does
# not list yet (it is written once a rescan period: docs/check.md) has no
# planned= drift=, and counts as the sample's placed thread.
sample_shape() { # sample_shape DOC NAME FILE
    local sample real
    sample=$(srv_snippet "$1" "$2" | shapes | awk '!seen[$0]++') || { problems+=("no block $2 in $1"); return; }
    real=$(check_output "$3" | shapes | awk -v sample="$sample" '
        BEGIN { n = split(sample, s, "\n"); for (i = 1; i <= n; i++) known[s[i]] = 1 }
        /^thread / && !($0 in known) && (($0 " planned= drift=") in known) { $0 = $0 " planned= drift=" }
        !seen[$0]++')
    expect "$1's sample $2 is not what numapin check printed: its lines' shapes
$sample
    and the output's
$real" is "$sample" "$real"
}

# CPU lists: the CPUs of "0-2,5" one a line; is A one part of B, not all of it?
cpus_of() {
    tr ',' '\n' <<<"$1" | awk -F- 'NF { for (c = $1; c <= (NF > 1 ? $2 : $1); c++) print c }'
}
one_core_of() { # one_core_of A B
    [ -n "$1" ] && [ "$1" != "$2" ] && [ -z "$(comm -23 <(cpus_of "$1" | sort) <(cpus_of "$2" | sort))" ]
}

# ---- the servers ----

jetty_tests() {
    if wanted jetty-dry-run; then
        begin jetty-dry-run 1
        serve jetty.md classpath dry-run
        run_blocks names.txt jetty.md "" thread-names
        expect "the names do not list qtp<hash>-* with 8 threads or more" \
            test -n "$(awk '$2 ~ /^qtp[0-9]+-\*$/ && $1 >= 8' "$dir/names.txt")"
        placed_nothing "$dir/dryrun.log"
        finish
    fi
    if wanted jetty-place; then
        begin jetty-place 1
        serve jetty.md classpath place
        local served
        served=$(sed -n 's/^result requests=\([0-9]*\)$/\1/p' "$dir/jetty.out")
        expect "the server counted ${served:-no} requests, fewer than wrk's" \
            ge "${served:-0}" "$(srv_wrk_requests "$dir/out.txt")"
        placed_threads "$dir/out.txt" "" "$dir/jetty-numapin.log" '^qtp[0-9]+-' 8
        sample_shape jetty.md check-output "$dir/out.txt"
        clean_log "$dir/jetty-numapin.log"
        finish
    fi
    if wanted jetty-groups; then
        begin jetty-groups 2
        run_blocks out.txt jetty.md "$port" classpath groups
        answered "$dir/wrk-0.txt"
        answered "$dir/wrk-1.txt"
        local g pid
        for g in 0 1; do
            pid=$(sed -n 's/^ready port=[0-9]* pid=\([0-9]*\)$/\1/p' "$dir/jetty-groups/group-$g.log")
            expect "group $g printed no ready line" test -n "$pid"
            [ -n "$pid" ] && placed_threads "$dir/out.txt" "$pid" "$dir/jetty-groups/group-$g.log" '^qtp[0-9]+-' 8
            clean_log "$dir/jetty-groups/group-$g.log"
        done
        groups_table "$dir/out.txt" "$dir/jetty-groups" 2 8 requests
        finish
    fi
}

# The Tomcat base of tomcat.md's "base" block, with bin/setenv.sh made of
# its "setenv" block and the blocks named, then the blocks of the step.
tomcat_script() { # tomcat_script PORT "SETENV-BLOCK..." STEP-BLOCK...
    local port=$1 setenv=$2 text
    shift 2
    text=$(blocks tomcat.md "$port" base) || return 1
    printf '%s\n' "$text"
    # shellcheck disable=SC2086 # the setenv blocks are words
    text=$(blocks tomcat.md "$port" setenv $setenv) || return 1
    printf "cat > \"\$CATALINA_BASE\"/bin/setenv.sh <<'SETENV'\n%s\nSETENV\n" "$text"
    blocks tomcat.md "$port" "$@"
}

tomcat_tests() {
    local script
    if wanted tomcat-dry-run; then
        begin tomcat-dry-run 1
        script=$(tomcat_script "$port" setenv-dry-run run) && run_script out.txt "$script"
        served $? "$dir/out.txt"
        run_script names.txt "export CATALINA_BASE=$dir/tomcat
$(blocks tomcat.md "" thread-names)"
        expect "the names do not list http-nio-127.0.0.1-$port-exec-* with 10 threads or more" \
            test -n "$(awk -v p="http-nio-127.0.0.1-$port-exec-*" '$2 == p && $1 >= 10' "$dir/names.txt")"
        placed_nothing "$dir/tomcat/logs/numapin.log"
        finish
    fi
    if wanted tomcat-place; then
        begin tomcat-place 1
        script=$(tomcat_script "$port" setenv-place run) && run_script out.txt "$script"
        served $? "$dir/out.txt"
        local log=$dir/tomcat/logs/numapin.log tid cpus tname others=0
        placed_threads "$dir/out.txt" "" "$log" '^http-nio-.*-exec-[0-9]+$' 10
        # The connector's own threads do not match the glob: not placed by
        # name, but on the group's CPUs with the rest of the JVM (scope=jvm,
        # the default with two groups).
        local plan
        plan=$(field "$log" plan cpus)
        while read -r tid cpus tname; do
            [[ $tname =~ -(Acceptor|Poller)$ ]] || continue
            others=$((others + 1))
            expect "\"$tname\" has cpus=$cpus, not the group's $plan" is "$cpus" "$plan"
            expect "\"$tname\" has a placed line" test -z "$(grep -F "] placed \"$tname\" " "$log")"
        done < <(check_threads "$dir/out.txt")
        expect "numapin check listed no Acceptor or Poller" ge "$others" 2
        sample_shape tomcat.md check-output "$dir/out.txt"
        clean_log "$log"
        finish
    fi
    if wanted tomcat-groups; then
        begin tomcat-groups 2
        script=$(tomcat_script "$port" "" groups) && run_script out.txt "$script"
        answered "$dir/wrk-0.txt"
        answered "$dir/wrk-1.txt"
        local g
        for g in 0 1; do
            # Group g's threads: the ones of its port (its pid is gone by now).
            placed_threads "$dir/out.txt" all "$dir/tomcat-groups/group-$g.log" \
                "^http-nio-127\\.0\\.0\\.1-$((port + g))-exec-[0-9]+\$" 10
            clean_log "$dir/tomcat-groups/group-$g.log"
        done
        groups_table "$dir/out.txt" "$dir/tomcat-groups" 2 10
        finish
    fi
}

netty_tests() {
    if wanted netty-dry-run; then
        begin netty-dry-run 1
        run_blocks out.txt netty.md "$port" classpath dry-run
        answered "$dir/out.txt"
        expect "the log lists no boss loop nioEventLoopGroup-N-1" has "$dir/out.txt" '^\] skipped "nioEventLoopGroup-[0-9]+-1"$'
        expect "the log lists no worker loop of a second pool" \
            test "$(sed -n 's/^\] skipped "nioEventLoopGroup-\([0-9]*\)-[0-9]*"$/\1/p' "$dir/out.txt" | sort -u | wc -l)" -ge 2
        placed_nothing "$dir/dryrun.log"
        finish
    fi
    if wanted netty-cores; then
        begin netty-cores 1
        serve netty.md classpath cores
        local log=$dir/netty-numapin.log plan slots tid cpus tname workers=() boss=
        plan=$(field "$log" plan cpus)
        slots=$(field "$log" plan slots)
        expect "plan: cpus_mode=$(field "$log" plan cpus_mode), not core" is "$(field "$log" plan cpus_mode)" core
        while read -r tid cpus tname; do
            if [[ $tname =~ ^nioEventLoopGroup-3-[0-9]+$ ]]; then
                workers+=("$cpus")
                expect "\"$tname\" has cpus=$cpus: not one core of the plan's $plan" one_core_of "$cpus" "$plan"
                expect "\"$tname\" tid=$tid has no placed line with cpus=$cpus" \
                    has "$log" "\] placed \"$tname\" tid=$tid .* cpus=$cpus "
            elif [[ $tname =~ ^nioEventLoopGroup-2-1$ ]]; then
                boss=$cpus
            fi
        done < <(check_threads "$dir/out.txt")
        expect "numapin check found ${#workers[@]} worker loops, not 2" is "${#workers[@]}" 2
        [ "${slots:-0}" -ge 2 ] && [ ${#workers[@]} -eq 2 ] &&
            expect "the two worker loops share cpus=${workers[0]} though the group has $slots cores" \
                test "${workers[0]}" != "${workers[1]}"
        expect "the boss loop has cpus=${boss:-?}, not the machine's $all_cpus" is "$boss" "$all_cpus"
        expect "summary: placed=$(field "$log" summary placed), not 2" is "$(field "$log" summary placed)" 2
        expect "summary: failed or mem_failed" is "$(field "$log" summary failed)/$(field "$log" summary mem_failed)" 0/0
        clean_log "$log"
        finish
    fi
}

total_start=$SECONDS
first_jdk=$(basename "$(cd "${jdks[0]}" && pwd)")
for jdk in "${jdks[@]}"; do
    jdk=$(cd "$jdk" && pwd)
    jdk_name=$(basename "$jdk")
    echo "=== servers on $jdk_name"
    export PATH="$srv_build:$jdk/bin:$PATH" JAVA_HOME=$jdk
    classes=$runs/$jdk_name/classes
    if ! srv_compile "$jdk" "$classes" > "$runs/$jdk_name.compile.txt" 2>&1; then
        cat "$runs/$jdk_name.compile.txt"
        echo "FAIL compiling the stand-in servers ($jdk_name)"
        failed=$((failed + 1))
        continue
    fi
    jetty_tests
    tomcat_tests
    netty_tests
done
echo "servers: $((SECONDS - total_start)) s"
echo "servers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
