-- wrk script of tests/bench/servers.sh: one line of results, and with
-- NUMAPIN_BENCH_RATE set, a fixed request rate.
--
--   NUMAPIN_BENCH_RATE=R wrk -tT -cC -dDs -s servers.lua URL
--
-- R is the rate of each wrk thread (requests/s): the thread keeps a
-- schedule of one request every 1/R s, and each of its connections, once
-- free, takes the next time on it and waits for it (wrk's delay(), in whole
-- milliseconds: a request may go up to 1 ms early).  When no connection is
-- free at a request's time, it goes late, and the schedule goes on from
-- then: no burst makes up for it.  Its latency, as wrk measures it, starts
-- when it is sent.  Without NUMAPIN_BENCH_RATE every connection sends its
-- next request as soon as it has the answer (saturation).
--
-- At the end (done()) one line on stdout:
--   result requests=N duration_us=D p50_us=.. p90_us=.. p99_us=.. max_us=.. failed=F
-- failed: socket errors (timeouts included) and non-2xx or 3xx answers.

local rate = tonumber(os.getenv("NUMAPIN_BENCH_RATE") or "")

if rate and rate > 0 then
    local ffi = require("ffi")
    ffi.cdef [[
        typedef struct { long tv_sec; long tv_nsec; } numapin_bench_timespec;
        int clock_gettime(int clock, numapin_bench_timespec *tp);
    ]]
    local ts = ffi.new("numapin_bench_timespec")
    local CLOCK_MONOTONIC = 1
    local function now_ms()
        ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
        return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
    end
    local interval = 1000 / rate
    local slot -- the time of this thread's next request, in ms

    function delay()
        local t = now_ms()
        if slot == nil or slot < t then slot = t end
        local wait = slot - t
        slot = slot + interval
        return math.floor(wait)
    end
end

function done(summary, latency, requests)
    local e = summary.errors
    io.write(string.format(
        "result requests=%d duration_us=%d p50_us=%d p90_us=%d p99_us=%d max_us=%d failed=%d\n",
        summary.requests, summary.duration, latency:percentile(50), latency:percentile(90),
        latency:percentile(99), latency.max,
        e.connect + e.read + e.write + e.status + e.timeout))
end
