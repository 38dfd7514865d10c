# Shared by tests/servers/run.sh and tests/bench/servers.sh (sourced):
# reading the recipes of docs/harness/, free ports, running a recipe's
# commands under a time limit, and reading what wrk printed.
#
# Expects: srv_root (the repository), srv_build (the directory of
# libnumapin.so and numapin).

# srv_snippet DOC NAME [PORT [WRK_S]]: the fenced block after the line
# "<!-- test: NAME -->" of docs/harness/DOC, with this build's directory in
# place of /opt/numapin/, and, when given, PORT and PORT+1 in place of 8080
# and 8081 and "-dWRK_Ss" in place of wrk's -dNs.  Fails (status 1, a
# message) when the document has no such block.
srv_snippet() {
    local doc=$srv_root/docs/harness/$1 name=$2 port=${3:-} wrk_s=${4:-}
    local text
    text=$(awk -v name="$name" '
        $0 == "<!-- test: " name " -->" { want = 1; next }
        want == 1 && /^```/ { want = 2; next }
        want == 2 && /^```/ { exit }
        want == 2 { print }' "$doc")
    if [ -z "$text" ]; then
        echo "servers: no block <!-- test: $name --> in $doc" >&2
        return 1
    fi
    text=${text//\/opt\/numapin\//$srv_build/}
    if [ -n "$port" ]; then
        text=${text//8080/$port}
        text=${text//8081/$((port + 1))}
    fi
    [ -n "$wrk_s" ] && text=$(sed -E "s/ -d[0-9]+s / -d${wrk_s}s /g" <<<"$text")
    printf '%s\n' "$text"
}

# srv_free_ports N: a port P such that P .. P+N-1 are free on this machine
# (nothing listens there), below the kernel's range of ephemeral ports.
srv_free_ports() {
    local n=$1 p lo
    lo=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
    for _ in $(seq 1 100); do
        p=$(( 10000 + RANDOM % (lo - 10000 - n) ))
        if [ -z "$(ss -Htln "( sport >= :$p and sport <= :$((p + n - 1)) )" 2>/dev/null)" ]; then
            echo "$p"
            return 0
        fi
    done
    echo "servers: no $n free ports found" >&2
    return 1
}

# srv_run DIR LIMIT_S OUT SCRIPT: runs SCRIPT with /bin/sh in DIR, stdout
# and stderr to DIR/OUT, killed (with everything it started) after LIMIT_S
# seconds; whatever it left running is killed too.  The script is kept as
# DIR/OUT.sh.  Returns its status (124 on the time limit).
srv_run() {
    local dir=$1 limit=$2 out=$3 script=$4 rc
    printf '%s\n' "$script" > "$dir/$out.sh"
    # timeout runs the script in a process group of its own, whose id is
    # timeout's pid: the whole group goes at the end.
    (cd "$dir" && exec timeout -k 5 "$limit" /bin/sh "./$out.sh" > "$out" 2>&1 < /dev/null) &
    local t=$!
    wait "$t"
    rc=$?
    kill -KILL -- "-$t" 2>/dev/null
    return $rc
}

# srv_wrk_requests FILE: the number of requests wrk completed ("N requests in").
srv_wrk_requests() {
    sed -n 's/^ *\([0-9][0-9]*\) requests in .*/\1/p' "$1" | head -1
}

# srv_wrk_errors FILE: wrk's lines on failed requests (socket errors,
# non-2xx or 3xx responses), empty when every request got a good answer.
srv_wrk_errors() {
    grep -E 'Socket errors|Non-2xx or 3xx' "$1" || true
}

# srv_wrk_failed FILE: how many requests failed (the sum of wrk's socket
# errors, timeouts included, and non-2xx or 3xx responses).
srv_wrk_failed() {
    awk '/Socket errors:/ { for (i = 1; i <= NF; i++) if ($i ~ /^(connect|read|write|timeout)$/) n += $(i + 1) + 0 }
         /Non-2xx or 3xx responses:/ { n += $NF }
         END { print n + 0 }' "$1"
}

# srv_wrk_rate FILE: requests/s.  srv_wrk_latency FILE PCT: wrk's latency
# percentile (50, 75, 90, 99; needs --latency) in milliseconds.
srv_wrk_rate() {
    sed -n 's/^Requests\/sec: *\([0-9.]*\)/\1/p' "$1" | head -1
}
srv_wrk_latency() {
    awk -v p="$2%" '$1 == p {
        v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
        f = (u == "us") ? 0.001 : (u == "ms") ? 1 : (u == "s") ? 1000 : (u == "m") ? 60000 : -1
        if (f > 0) printf "%.3f\n", v * f
        exit }' "$1"
}

# srv_compile JDK OUT: compiles the stand-in servers into OUT, each against
# the classpath its recipe gives (the "classpath" block of jetty.md and
# netty.md, with APP=OUT).
srv_compile() {
    local jdk=$1 out=$2 doc cls cp
    mkdir -p "$out"
    for doc in jetty:HelloJetty netty:HelloNetty; do
        cls=${doc#*:}
        cp=$(APP=$out; eval "$(srv_snippet "${doc%%:*}.md" classpath)"; echo "$CP") || return 1
        "$jdk/bin/javac" --release 17 -Xlint:all -cp "$cp" -d "$out" \
            "$srv_root/tests/servers/src/numapin/servers/$cls.java" || return 1
    done
}
