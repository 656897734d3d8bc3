-- Plain (non-pipelined) runs: there is no `request` function, so wrk sends its prebuilt
-- request without calling into Lua per request and spends its core on the wire, not in the
-- interpreter. `done` runs once, after the measured window.

-- One machine-readable line for run.sh. Percentiles in microseconds, after wrk's own
-- coordinated-omission correction, exactly as `wrk --latency` prints them. wrk 4.1 files some
-- of its correction samples below the recorded minimum, where percentile() never looks: when
-- that leaves a rank unreachable it returns 0, which run.sh shows as n/a. It happens with
-- pipelining, where wrk's expected interval (runtime / responses per connection) is shorter
-- than any batch's latency.
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "WRKRESULT requests=%d duration_us=%d p50_us=%d p99_us=%d errors=%d\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.status + e.timeout))
end
