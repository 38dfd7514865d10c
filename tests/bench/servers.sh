#!/usr/bin/env bash
# Real servers under load, with and without numapin: embedded Jetty 9
# (tests/servers/src/numapin/servers/HelloJetty.java, Debian's
# libjetty9-java) and Tomcat 10 (Debian's tomcat10-common, the base of
# docs/harness/tomcat.md) driven by wrk on 127.0.0.1.  Prints a markdown
# section on stdout (make bench appends it to docs/performance.md); each
# measurement's line goes to stderr as it finishes.
#
#   tests/bench/servers.sh [--jdk JDK_HOME] [--agent LIB] [--sets N]
#                          [--rounds N] [--rate-rounds N] [--seconds S]
#                          [--warmup S] [--connections N] [--fraction F]
#                          [--spin-us US] [--spin-period-us US]
#                          [--servers "jetty tomcat"] [--smoke]
#
# Each option also has an environment variable (SERVERS_SETS,
# SERVERS_ROUNDS, SERVERS_RATE_ROUNDS, SERVERS_SECONDS, SERVERS_WARMUP,
# SERVERS_CONNECTIONS, SERVERS_FRACTION, SERVERS_SPIN_US,
# SERVERS_SPIN_PERIOD_US, SERVERS_LIST, SERVERS_SMOKE=1); an option wins.
#
# A set is three JVMs of one server, started together and alive at once,
# each on its own port: no agent (A), numapin on the whole machine (B), and
# the control (C): no agent, measured while a process busy-waits SPIN_US of
# every SPIN_PERIOD_US (a known share of the CPU taken from the machine
# while C is measured).  Each JVM gets WARMUP s of wrk, not counted.  Then
# ROUNDS rounds at saturation, a window of SECONDS s for each JVM in an
# order drawn for the round (wrk -t2 -cCONNECTIONS, one JVM loaded at a
# time), then RATE_ROUNDS rounds at a fixed request rate
# (tests/bench/servers.lua): FRACTION of A's requests/s at saturation, the
# median of the server's first set.  A set's ratio is the median over its
# rounds of B's (C's) figure over A's in the same round; a comparison's
# figure is the median of the sets' ratios, with its 90% interval
# (tests/bench/stats.awk: order statistics, a set the unit, as JVMs differ
# from each other).  The servers' sets take turns.  The control is
# resolved when its interval excludes 1.  The target, numapin at least 0.98
# of no agent's requests/s at saturation, is met when the whole interval is
# at or above it, not met when all of it is below, not shown otherwise, and
# not resolved on this run when the server's control is not resolved.
# Defaults (about 22 minutes): 12 sets, 3 rounds at saturation and 2 at the
# fixed rate, windows of 2 s, 7 s of warm-up, 32 connections, a fraction of
# 0.5, 2 ms of busy wait every 20 ms; --smoke: 2 sets, 1 round of each, 1 s
# windows.  Nothing here asserts a number.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srv_root=$(cd "$here/../.." && pwd)
jdk=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
agent=$srv_root/build/libnumapin.so
sets=${SERVERS_SETS:-12}
rounds=${SERVERS_ROUNDS:-3}
rate_rounds=${SERVERS_RATE_ROUNDS:-2}
seconds=${SERVERS_SECONDS:-2}
warmup=${SERVERS_WARMUP:-7}
conns=${SERVERS_CONNECTIONS:-32}
fraction=${SERVERS_FRACTION:-0.5}
spin_us=${SERVERS_SPIN_US:-2000}
spin_period_us=${SERVERS_SPIN_PERIOD_US:-20000}
servers=${SERVERS_LIST:-jetty tomcat}
smoke=${SERVERS_SMOKE:-0}
target=0.98
while [ $# -gt 0 ]; do
    case "$1" in
        --jdk) jdk=$2; shift 2 ;;
        --agent) agent=$2; shift 2 ;;
        --sets) sets=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --rate-rounds) rate_rounds=$2; shift 2 ;;
        --seconds) seconds=$2; shift 2 ;;
        --warmup) warmup=$2; shift 2 ;;
        --connections) conns=$2; shift 2 ;;
        --fraction) fraction=$2; shift 2 ;;
        --spin-us) spin_us=$2; shift 2 ;;
        --spin-period-us) spin_period_us=$2; shift 2 ;;
        --servers) servers=$2; shift 2 ;;
        --smoke) smoke=1; shift ;;
        -h|--help) sed -n '2,41s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "bench-servers: unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ "$smoke" = 1 ]; then
    sets=2 rounds=1 rate_rounds=1 seconds=1 warmup=1
fi
case "$agent" in /*) ;; *) agent=$PWD/$agent ;; esac
srv_build=$(dirname "$agent")
numapin=$srv_build/numapin
catalina_home=/usr/share/tomcat10
for f in "$agent" "$numapin" "$jdk/bin/java"; do
    [ -e "$f" ] || { echo "bench-servers: no $f" >&2; exit 2; }
done
for t in wrk curl ss setsid; do
    command -v "$t" >/dev/null || { echo "bench-servers: $t is not installed (scripts/install-deps.sh servers build)" >&2; exit 2; }
done
case " $servers " in *" tomcat "*)
    [ -x "$catalina_home/bin/catalina.sh" ] ||
        { echo "bench-servers: no $catalina_home/bin/catalina.sh (scripts/install-deps.sh servers)" >&2; exit 2; } ;;
esac
# shellcheck source=../servers/lib.sh
. "$srv_root/tests/servers/lib.sh"
unset HWLOC_SYNTHETIC HWLOC_THISSYSTEM HWLOC_XMLFILE JAVA_TOOL_OPTIONS JDK_JAVA_OPTIONS _JAVA_OPTIONS \
    NUMAPIN_GROUP NUMAPIN_GROUPS NUMAPIN_BENCH_RATE CATALINA_OPTS JAVA_OPTS CATALINA_PID

out=$(mktemp -d "${TMPDIR:-/tmp}/numapin-bench-servers.XXXXXX")
pids=()   # what runs in the background: the set's JVMs and the spinner
cleanup() {
    local p
    for p in "${pids[@]}"; do
        kill -CONT "$p" 2>/dev/null || true
        kill "$p" 2>/dev/null || true
    done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$out"
}
trap cleanup EXIT
srv_compile "$jdk" "$out/classes" >&2
# shellcheck disable=SC2034 # APP is read by the eval
cp=$(APP=$out/classes; eval "$(srv_snippet jetty.md classpath)"; echo "$CP")
start=$(date +%s)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

heap=(-Xms256m -Xmx256m)
declare -A glob=([jetty]='qtp*' [tomcat]='http-nio-*-exec-*')
names=("no agent" "numapin" "control")

# The control's cost: a process in a session of its own that busy-waits
# spin_us, sleeps the rest of spin_period_us, and again; stopped (SIGSTOP)
# except while the control is measured.
mkfifo "$out/never"
cat > "$out/spin.sh" <<EOF
exec 3<>"$out/never"
while :; do
    end=\$(( \${EPOCHREALTIME/./} + $spin_us ))
    while (( \${EPOCHREALTIME/./} < end )); do :; done
    read -r -t $(awk -v s="$spin_us" -v p="$spin_period_us" 'BEGIN { printf "%.6f", (p - s) / 1e6 }') -u 3 _ || :
done
EOF
setsid bash "$out/spin.sh" &
spid=$!
pids+=("$spid")
kill -STOP "$spid"

# start_jvm SERVER CONFIG PORT: starts a JVM in a session of its own, in the
# background (its files in $out/SERVER-CONFIG), its pid in the global
# started.
start_jvm() {
    local srv=$1 cfg=$2 port=$3 dir=$out/$1-$2 ap='' cmd
    [ "$cfg" = 1 ] && ap="-agentpath:$agent=groups=1,threads=${glob[$srv]},log=warning"
    rm -rf "$dir"
    mkdir -p "$dir"
    if [ "$srv" = jetty ]; then
        # shellcheck disable=SC2206 # ap is one word or none
        cmd=("$jdk/bin/java" "${heap[@]}" $ap -cp "$cp" numapin.servers.HelloJetty "$port")
    else
        mkdir -p "$dir/base/bin" "$dir/base/logs" "$dir/base/temp" "$dir/base/work"
        cp -R "$srv_root/tests/servers/tomcat/conf" "$srv_root/tests/servers/tomcat/webapps" "$dir/base/"
        # catalina.sh starts Java through eval: the agent's argument is quoted again.
        # shellcheck disable=SC2016 # the single quotes are for that eval
        cmd=(env JAVA_HOME="$jdk" CATALINA_HOME="$catalina_home" CATALINA_BASE="$dir/base"
             CATALINA_OPTS="${heap[*]} -Dhttp.port=$port${ap:+ '$ap'}" "$catalina_home/bin/catalina.sh" run)
    fi
    # A background job of this script is no process group leader, so setsid
    # makes the session without a fork: $! is the JVM (catalina.sh ends in
    # exec java).
    setsid "${cmd[@]}" > "$dir/out" 2>&1 &
    started=$!
}
# ready PID PORT DIR: waits (up to 60 s) until the server answers.
ready() {
    local i
    for i in $(seq 1 600); do
        curl -sf -o /dev/null "http://127.0.0.1:$2/" && return 0
        kill -0 "$1" 2>/dev/null || break
        sleep 0.1
    done
    echo "bench-servers: the server in $3 did not start" >&2
    cat "$3/out" >&2
    exit 1
}
# shuffle N: 0 .. N-1 in a random order, one a line.
shuffle() { local i; for i in $(seq 0 $(($1 - 1))); do echo "$RANDOM $i"; done | sort -n | cut -d' ' -f2; }
hz=$(getconf CLK_TCK)
# cpu_ns JVM SPINNER: the JVM's CPU time (every thread's, those that
# ended included; counted in clock ticks), then the spinner's (one thread),
# in ns, one a line.
cpu_ns() {
    awk -v hz="$hz" '{ printf "%.0f\n", ($14 + $15) * 1e9 / hz }' "/proc/$1/stat"
    cut -d' ' -f1 "/proc/$2/schedstat"
}

declare -A rate_of placed
: > "$out/data"
# measure SRV SET PHASE ROUND CFG SECONDS RATE: one JVM under wrk (the
# spinner running for the control); its line goes to $out/data.
measure() {
    local srv=$1 set=$2 phase=$3 round=$4 cfg=$5 secs=$6 rate=$7 res
    local -a c0 c1
    mapfile -t c0 < <(cpu_ns "${jpids[cfg]}" "$spid")
    [ "$cfg" != 2 ] || kill -CONT "$spid"
    NUMAPIN_BENCH_RATE=$rate setsid wrk -t2 -c"$conns" -d"${secs}s" --timeout 10s -s "$here/servers.lua" \
        "http://127.0.0.1:${ports[cfg]}/" > "$out/wrk" 2>&1 || true
    [ "$cfg" != 2 ] || kill -STOP "$spid"
    mapfile -t c1 < <(cpu_ns "${jpids[cfg]}" "$spid")
    res=$(grep '^result ' "$out/wrk") ||
        res="result requests=0 duration_us=1 p50_us=0 p90_us=0 p99_us=0 max_us=0 failed=-1"
    # srv set phase round cfg requests duration_us p50 p90 p99 max failed cpu_ns spin_ns
    echo "$srv $set $phase $round $cfg $(tr ' ' '\n' <<<"${res#result }" | cut -d= -f2 | paste -sd' ')" \
        "$((c1[0] - c0[0]))" "$((c1[1] - c0[1]))" >> "$out/data"
    echo "bench-servers: $srv set $set $phase $round ${names[$cfg]}: ${res#result } cpu_ms=$(( (c1[0] - c0[0]) / 1000000 ))" >&2
}

# one_set SERVER SET: the three JVMs, their warm-up and windows.
one_set() {
    local srv=$1 set=$2 cfg port r
    local -a ports=() jpids=()
    port=$(srv_free_ports 3)
    for cfg in $(shuffle 3); do
        ports[cfg]=$((port + cfg))
        start_jvm "$srv" "$cfg" "${ports[cfg]}"
        jpids[cfg]=$started
        pids+=("$started")
    done
    for cfg in 0 1 2; do ready "${jpids[cfg]}" "${ports[cfg]}" "$out/$srv-$cfg"; done
    for cfg in $(shuffle 3); do
        setsid wrk -t2 -c"$conns" -d"${warmup}s" --timeout 10s "http://127.0.0.1:${ports[cfg]}/" > /dev/null || true
    done
    for r in $(seq 1 "$rounds"); do
        for cfg in $(shuffle 3); do measure "$srv" "$set" sat "$r" "$cfg" "$seconds" ""; done
    done
    if [ -z "${rate_of[$srv]:-}" ]; then
        # shellcheck disable=SC2016 # an awk program
        rate_of[$srv]=$(awk -v s="$srv" -v f="$fraction" -f "$here/stats.awk" -f <(echo '
            $1 == s && $3 == "sat" && $5 == 0 { v[++n] = $6 / $7 * 1e6 }
            END { sort(v, n); printf "%d", med(v, n) * f }') "$out/data")
    fi
    for r in $(seq 1 "$rate_rounds"); do
        for cfg in $(shuffle 3); do measure "$srv" "$set" rate "$r" "$cfg" "$seconds" $((rate_of[$srv] / 2)); done
    done
    if [ -z "${placed[$srv]:-}" ]; then
        "$numapin" check "${jpids[1]}" --threads "${glob[$srv]}" > "$out/$srv.check" 2>&1 || true
        placed[$srv]=$(awk '/^numapin / { for (i = 1; i <= NF; i++) if ($i ~ /^placed=/) { sub(/placed=/, "", $i); p = $i } }
            /^thread "/ { n++ } END { printf "%s of %d", p == "" ? "?" : p, n }' "$out/$srv.check")
    fi
    for cfg in 0 1 2; do kill "${jpids[cfg]}" 2>/dev/null || true; done
    for cfg in 0 1 2; do wait "${jpids[cfg]}" 2>/dev/null || true; done
    pids=("$spid")
}

for s in $(seq 1 "$sets"); do
    for srv in $servers; do one_set "$srv" "$s"; done
done
wall=$(( $(date +%s) - start ))
spin_nominal=$(awk -v s="$spin_us" -v p="$spin_period_us" 'BEGIN { printf "%.1f", 100 * s / p }')

echo
echo "## Real servers: Jetty and Tomcat under wrk"
echo
echo "Embedded Jetty 9 (\`HelloJetty\`, one servlet answering each GET with a"
echo "line of text) and Tomcat 10 (the base of [harness/tomcat.md](harness/tomcat.md),"
echo "a static page) on 127.0.0.1, each JVM \`-Xms256m -Xmx256m\`, loaded by wrk"
echo "(\`-t2 -c$conns\`; \`tests/bench/servers.sh\`). numapin runs on the whole machine"
echo "(\`groups=1,log=warning\`) and places the request pool: \`threads=qtp*\`"
echo "for Jetty, \`threads=http-nio-*-exec-*\` for Tomcat. A set is three JVMs"
echo "of one server, started together and alive at once: no agent (A), numapin"
echo "(B), and the control (C): no agent, measured while a process busy-waits"
echo "$spin_us µs of every $spin_period_us µs (${spin_nominal}% of one CPU, taken from the machine while"
echo "C is measured). Each JVM gets $warmup s of load first, not counted; then $rounds rounds"
echo "at saturation and $rate_rounds at a fixed rate, a window of $seconds s for each JVM, one"
echo "JVM loaded at a time, in an order drawn for each round. A set's ratio is"
echo "the median over its rounds of B's (C's) figure over A's in the same"
echo "round; each cell is the median of $sets sets' ratios with its 90% interval"
echo "(order statistics, \"-\" below 5 sets), the servers' sets taking turns."
echo "**Target: numapin at least $target of no agent's requests/s** at saturation:"
echo "met when the whole interval is at or above it, not met when all of it"
echo "is below, not shown when it holds $target, and not resolved on this run when"
echo "the server's control is not resolved (its interval holding 1)."
echo
awk -v sets="$sets" -v target="$target" -v servers="$servers" \
    -v jetty_rate="${rate_of[jetty]:-0}" -v tomcat_rate="${rate_of[tomcat]:-0}" \
    -v jetty_placed="${placed[jetty]:-}" -v tomcat_placed="${placed[tomcat]:-}" \
    -f "$here/stats.awk" -f /dev/fd/3 3<<'EOF' "$out/data"
# srv set phase round cfg requests duration_us p50 p90 p99 max failed cpu_ns spin_ns
$12 >= 0 {
    k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4
    rps[k, $5] = $6 / $7 * 1e6; eff[k, $5] = ($13 > 0) ? $6 / $13 : 0
    cpu[k, $5] = $13; p50[k, $5] = $8; p99[k, $5] = $10
    if ($5 == 2) { spin[k] = $14; dur[k] = $7 }
    failed[$1, $3, $5] += $12
    if ($4 > nround[$1, $2, $3]) nround[$1, $2, $3] = $4
    j = ++all_n[$1, $3, $5]
    all_rps[$1, $3, $5, j] = rps[k, $5]; all_p50[$1, $3, $5, j] = $8; all_p99[$1, $3, $5, j] = $10
}
$12 < 0 { failed[$1, $3, $5] += 1; lost++ }
# The median over one set's windows of CFG's figure over A's.
function set_ratio(arr, s, set, phase, cfg,   r, n, v, k) {
    n = 0
    for (r = 1; r <= nround[s, set, phase]; r++) {
        k = s SUBSEP set SUBSEP phase SUBSEP r
        if ((k, 0) in arr && (k, cfg) in arr && arr[k, 0] > 0 && arr[k, cfg] > 0)
            v[++n] = arr[k, cfg] / arr[k, 0]
    }
    if (n == 0) return -1
    sort(v, n)
    return med(v, n)
}
# "median (lo to hi)" over the sets; sets ilo and ihi.
function over_sets(arr, s, phase, cfg,   set, n, v, x) {
    n = 0
    for (set = 1; set <= sets; set++) { x = set_ratio(arr, s, set, phase, cfg); if (x > 0) v[++n] = x }
    if (n == 0) { ilo = 0; ihi = 1e9; return "-" }
    return summary(v, n)
}
# The median of every window's figure of CFG.
function median_of(arr, s, phase, cfg,   i, n, v) {
    n = all_n[s, phase, cfg]
    for (i = 1; i <= n; i++) v[i] = arr[s, phase, cfg, i]
    sort(v, n)
    return med(v, n)
}
# The spinner's CPU time over the wall time of the control's windows (of
# one CPU).
function spin_share(s, phase,   k, t, w) {
    for (k in spin) { split(k, f, SUBSEP); if (f[1] == s && f[3] == phase) { t += spin[k]; w += dur[k] * 1000 } }
    return w > 0 ? t / w : 0
}
# The median over the windows of CFG's CPU time over A's in the same round.
function cpu_ratio(s, phase, cfg,   k, n, v) {
    n = 0
    for (k in spin) {
        split(k, f, SUBSEP)
        if (f[1] == s && f[3] == phase && cpu[k, 0] > 0) v[++n] = cpu[k, cfg] / cpu[k, 0]
    }
    sort(v, n)
    return n ? med(v, n) : 0
}
function title(s) { return s == "jetty" ? "Jetty" : "Tomcat" }
# What a latency interval resolves, given whether the control's did.
function what(ctl, from, to) {
    if (!ctl) return "not resolved on this run"
    if (from > 1) return "slower"
    if (to < 1) return "faster"
    return "no difference resolved"
}
END {
    nsrv = split(servers, srv, " ")
    print "At saturation (a ratio below 1 is fewer requests):"
    print ""
    print "| server | B or C against A | A's requests/s (median) | requests/s, ratio | requests per CPU second, ratio | CPU, ratio | failed requests | verdict |"
    print "|---|---|---:|---|---|---:|---:|---|"
    for (i = 1; i <= nsrv; i++) {
        s = srv[i]
        c = over_sets(rps, s, "sat", 2); resolved[s] = ihi < 1
        ce = over_sets(eff, s, "sat", 2)
        b = over_sets(rps, s, "sat", 1); blo = ilo; bhi = ihi
        be = over_sets(eff, s, "sat", 1)
        if (!resolved[s]) v = "not resolved on this run"
        else if (blo >= target) v = "**met**"
        else if (bhi < target) v = "**not met**"
        else v = "not shown: the interval holds " target
        a = median_of(all_rps, s, "sat", 0)
        printf "| %s | numapin (placed in the first set: %s) | %.0f | %s | %s | %.3f | %d, %d | %s |\n", title(s),
            s == "jetty" ? jetty_placed : tomcat_placed, a, b, be, cpu_ratio(s, "sat", 1),
            failed[s, "sat", 0], failed[s, "sat", 1], v
        printf "| %s | control (the spinner: %.1f%% of one CPU) | %.0f | %s | %s | %.3f | %d, %d | %s |\n", title(s),
            100 * spin_share(s, "sat"), a, c, ce, cpu_ratio(s, "sat", 2), failed[s, "sat", 0], failed[s, "sat", 2],
            resolved[s] ? "resolved" : "**not resolved**"
    }
    print ""
    print "At a fixed rate, latency (a ratio above 1 is slower answers):"
    print ""
    print "| server | B or C against A | rate asked, req/s (share of A's saturation) | achieved by A, B, C | A's p50 / p99 ms (median) | p50, ratio | p99, ratio | what it resolves (p50; p99) |"
    print "|---|---|---:|---:|---:|---|---|---|"
    for (i = 1; i <= nsrv; i++) {
        s = srv[i]
        rate = s == "jetty" ? jetty_rate : tomcat_rate
        sat = median_of(all_rps, s, "sat", 0)
        c50 = over_sets(p50, s, "rate", 2); r50 = ilo > 1 || ihi < 1
        c99 = over_sets(p99, s, "rate", 2); r99 = ilo > 1 || ihi < 1
        b50 = over_sets(p50, s, "rate", 1); b50lo = ilo; b50hi = ihi
        b99 = over_sets(p99, s, "rate", 1); b99lo = ilo; b99hi = ihi
        printf "| %s | numapin | %d (%.2f) | %.0f, %.0f, %.0f | %.3f / %.3f | %s | %s | %s; %s |\n", title(s),
            rate, (sat > 0) ? rate / sat : 0,
            median_of(all_rps, s, "rate", 0), median_of(all_rps, s, "rate", 1), median_of(all_rps, s, "rate", 2),
            median_of(all_p50, s, "rate", 0) / 1000, median_of(all_p99, s, "rate", 0) / 1000,
            b50, b99, what(r50, b50lo, b50hi), what(r99, b99lo, b99hi)
        printf "| %s | control (the spinner: %.1f%% of one CPU) | | | | %s | %s | p50 %s; p99 %s |\n", title(s),
            100 * spin_share(s, "rate"), c50, c99, r50 ? "resolved" : "**not resolved**", r99 ? "resolved" : "**not resolved**"
    }
    if (lost) printf "\n%d wrk windows gave no result line (counted as failed).\n", lost
}
EOF
echo
echo "Machine: $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) CPUs,"
echo "$(awk '/^MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), NUMA nodes: $(numactl --hardware 2>/dev/null | sed -n 's/^available: //p'), Linux $(uname -r);"
echo "$("$jdk/bin/java" -version 2>&1 | head -1); Jetty $(dpkg-query -W -f='${Version}' libjetty9-java 2>/dev/null);"
echo "Tomcat $(dpkg-query -W -f='${Version}' tomcat10-common 2>/dev/null); $(wrk -v 2>&1 | head -1 | sed 's/ Copyright.*//');"
echo "numapin $(git -C "$srv_root" rev-parse --short HEAD 2>/dev/null || echo '(no git)'); $(date -u +%Y-%m-%d); the run took $wall s."
echo "Load average $load_before before the run and $(cut -d' ' -f1-3 /proc/loadavg) after it."
echo
cat "$here/servers-notes.md"
