-- Releases a lease of KEYS[1] (see lease_acquire.lua). ARGV: token. Answers {1, in_flight}
-- when it was held, {0, in_flight} when not (released twice, or expired): harmless.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local removed = redis.call('ZREM', KEYS[1], ARGV[1])
return {removed, redis.call('ZCARD', KEYS[1])}
