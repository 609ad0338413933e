-- GCRA on the server, in microseconds (Lua numbers are doubles: exact to 2^53 µs): the
-- same rule as recuo::Regulator (tests/vectors/gcra.json holds both to the same answers).
-- KEYS[1]: the arrival-time key. ARGV: interval_us, burst, cost, max_wait_us, now_us ('' =
-- the server's TIME). Answers {1, wait_us} when reserved, {0, wait_us} when not.
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local max_wait = tonumber(ARGV[4])
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
if wait > max_wait then return {0, tostring(wait)} end
local ttl = math.ceil((nxt - now) / 1000) + 1000
redis.call('SET', KEYS[1], string.format('%.0f', nxt), 'PX', ttl)
return {1, tostring(wait)}
