-- GCRA on the server, in microseconds (Lua numbers are doubles: exact to 2^53 µs): the
-- same rule as recuo::Regulator (tests/vectors/gcra.json holds both to the same answers).
-- KEYS[1]: the arrival-time key; KEYS[2]: the interval in force, in ns (absent: the
-- configured one; adapt.lua keeps it). ARGV: interval_ns (the configured one), burst, cost,
-- max_wait_us, now_us ('' = the server's TIME). Answers {1, wait_us, interval_ns} when
-- reserved, {0, wait_us, interval_ns} when not, interval_ns being the interval in force.
local base = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local max_wait = tonumber(ARGV[4])
local current = tonumber(redis.call('GET', KEYS[2]) or ARGV[1]) or base
if current < base then current = base end
if current > base * 64 then current = base * 64 end
local shown = string.format('%.0f', current)
local interval = math.floor(current / 1000)
if interval < 1 then interval = 1 end
local now
if ARGV[5] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
else
  now = tonumber(ARGV[5])
end
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local nxt = tat + interval * cost
local wait = nxt - interval * burst - now
if wait < 0 then wait = 0 end
if wait > max_wait then return {0, tostring(wait), shown} end
local ttl = math.ceil((nxt - now) / 1000) + 1000
redis.call('SET', KEYS[1], string.format('%.0f', nxt), 'PX', ttl)
return {1, tostring(wait), shown}
