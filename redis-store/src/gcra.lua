-- GCRA on the server, in microseconds (Lua numbers are doubles: exact to 2^53 µs): the
-- same rule as recuo::Regulator (tests/vectors/gcra.json holds both to the same answers).
-- KEYS[1]: the arrival-time key; KEYS[2]: the interval in force, in ns (absent: the
-- configured one; adapt.lua keeps it). ARGV: interval_ns (the configured one), burst, cost,
-- max_wait_us, now_us ('' = the server's TIME). Answers integers: {1, wait_us, interval_ns}
-- when reserved, {0, wait_us, interval_ns} when not, interval_ns being the interval in force.
--
-- It is most of what an acquire costs the server (make bench-redis measures it beside
-- redis-cell), so it runs three commands (one MGET reads both keys, which share a slot; TIME;
-- SET), writes and answers its numbers without printf's float path (every one is a whole
-- number below 2^63: '%d', and integer replies) and reads max_wait only when there is a wait.
local base = tonumber(ARGV[1])
local got = redis.call('MGET', KEYS[1], KEYS[2])
local current = base
if got[2] then
  current = tonumber(got[2]) or base
  if current < base then current = base end
  if current > base * 64 then current = base * 64 end
end
local interval = math.floor(current / 1000)
if interval < 1 then interval = 1 end
local now
if ARGV[5] == '' then
  local t = redis.call('TIME')
  now = t[1] * 1000000 + t[2]
else
  now = tonumber(ARGV[5])
end
local tat = tonumber(got[1] or 0)
if tat < now then tat = now end
local nxt = tat + interval * ARGV[3]
local wait = nxt - interval * ARGV[2] - now
if wait < 0 then wait = 0 end
if wait > 0 and wait > tonumber(ARGV[4]) then return {0, wait, current} end
local ttl = math.ceil((nxt - now) / 1000) + 1000
redis.call('SET', KEYS[1], string.format('%d', nxt), 'PX', string.format('%d', ttl))
return {1, wait, current}
