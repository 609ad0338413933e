-- A concurrency limit with leases: KEYS[1] is a sorted set of owner tokens scored by their
-- lease's expiry (ms on the server's clock). Expired leases are pruned first, in the same
-- script, so a holder that died frees its slot when its lease runs out.
-- ARGV: max, lease_ms, token. Answers {1, in_flight} when the lease is taken, {0, wait_ms}
-- (until the earliest lease expires) when the limit is full.
local max = tonumber(ARGV[1])
local lease = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZCARD', KEYS[1])
if held >= max then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  local wait = 1
  if first[2] then wait = math.max(1, tonumber(first[2]) - now) end
  return {0, wait}
end
redis.call('ZADD', KEYS[1], now + lease, ARGV[3])
redis.call('PEXPIRE', KEYS[1], lease + 1000)
return {1, held + 1}
