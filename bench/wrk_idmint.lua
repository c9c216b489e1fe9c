-- SPDX-License-Identifier: Apache-2.0
-- wrk script for bench/bench_http.sh: prints one machine-readable line at the
-- end, and paces each connection when WRK_INTERVAL_MS is set (wrk2 is not in
-- Debian, so this stands in for a fixed-rate load generator).

local interval_ms = tonumber(os.getenv("WRK_INTERVAL_MS") or "")

if interval_ms ~= nil and interval_ms > 0 then
   -- Seeded per thread state so connections do not fire in step.
   function init(args)
      math.randomseed(os.time() + math.floor(os.clock() * 1e6))
   end

   -- Exponential think time (so the 64 connections add up to roughly Poisson
   -- arrivals), rounded to whole milliseconds at random because wrk's timer
   -- takes whole milliseconds: the mean stays interval_ms. wrk times a
   -- request from when it is written, so the think time is not latency.
   function delay()
      local d = -interval_ms * math.log(1 - math.random())
      local whole = math.floor(d)
      if math.random() < d - whole then
         whole = whole + 1
      end
      return whole
   end
end

function done(summary, latency, requests)
   io.write(string.format(
      "WRK_RESULT requests=%d duration_us=%d status_errors=%d socket_errors=%d " ..
      "p50_us=%d p90_us=%d p99_us=%d p999_us=%d max_us=%d mean_us=%.1f\n",
      summary.requests, summary.duration, summary.errors.status,
      summary.errors.connect + summary.errors.read + summary.errors.write +
         summary.errors.timeout,
      latency:percentile(50), latency:percentile(90), latency:percentile(99),
      latency:percentile(99.9), latency.max, latency.mean))
end
