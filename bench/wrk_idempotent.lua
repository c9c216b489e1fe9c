-- SPDX-License-Identifier: Apache-2.0
-- wrk script for bench/bench_http.sh's idempotent batch case: every request
-- carries an Idempotency-Key of its own, so every one is a first request
-- (mint, save the batch in the authority, answer) and none is a replay. One
-- key names one batch in the whole store, so the key holds the run's prefix
-- (WRK_KEY_PREFIX, a new one per wrk run), the thread's number and a counter.
-- The result line and pacing are wrk_idmint.lua's (WRK_IDMINT_LUA names it).

dofile(os.getenv("WRK_IDMINT_LUA"))

local prefix = os.getenv("WRK_KEY_PREFIX") or tostring(os.time())
local threads = 0
local counter = 0

function setup(thread)
   threads = threads + 1
   thread:set("tid", threads)
end

function request()
   counter = counter + 1
   wrk.headers["Idempotency-Key"] = string.format("%s.%d.%d", prefix, tid or 0, counter)
   return wrk.format()
end
