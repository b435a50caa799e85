-- t/bench/report.lua: wrk done() hook used by t/bench/run.
-- Prints one machine-readable line; latencies are in microseconds.
-- summary.errors.status counts responses with status > 399 (wrk's "Non-2xx or 3xx").
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests":%d,"duration_us":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,' ..
    '"status":%d,"timeout":%d,"p50":%d,"p90":%d,"p99":%d,"p999":%d,"max":%d,"mean":%.1f}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write,
    e.status, e.timeout, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency:percentile(99.9), latency.max, latency.mean))
end
