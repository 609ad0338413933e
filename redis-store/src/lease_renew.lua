-- Renews a lease of KEYS[1] (see lease_acquire.lua) for lease_ms more, if it is still held.
-- ARGV: lease_ms, token. Answers {1, 0} when renewed, {0, 0} when the lease had expired or
-- was released (it is not taken again: the slot may be someone else's by now).
local lease = tonumber(ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[2]) then return {0, 0} end
redis.call('ZADD', KEYS[1], 'XX', now + lease, ARGV[2])
redis.call('PEXPIRE', KEYS[1], lease + 1000)
return {1, 0}
