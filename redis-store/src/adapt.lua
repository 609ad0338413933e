-- The adaptive rule on the server, in nanoseconds: the same arithmetic, in the same order on
-- doubles, as recuo::adapted_interval_ns (tests/vectors/gcra.json holds both to the same
-- answers). A 429 doubles the interval in force, up to 64 times the configured one; a
-- success gives back 1/16 of the configured rate (1/next = 1/current + 1/(16 base)),
-- rounded to the nearest nanosecond (halves away from zero), down to the configured one.
-- KEYS[1]: the settings hash (its 'adaptive' field says whether the key adapts);
-- KEYS[2]: the interval in force, ns (absent: the configured one).
-- ARGV: '1' for a 429, '0' for a success; the configured interval, ns.
-- Answers {interval_ns}, the interval in force after the report.
local base = tonumber(ARGV[2])
local slowest = base * 64
local current = tonumber(redis.call('GET', KEYS[2]) or ARGV[2]) or base
if current < base then current = base end
if current > slowest then current = slowest end
if redis.call('HGET', KEYS[1], 'adaptive') ~= '1' then
  return {string.format('%.0f', current)}
end
local nxt
if ARGV[1] == '1' then
  nxt = current * 2
  if nxt > slowest then nxt = slowest end
elseif current <= base then
  return {string.format('%.0f', current)}
else
  local x = (current * 16 * base) / (16 * base + current)
  nxt = math.floor(x)
  if x - nxt >= 0.5 then nxt = nxt + 1 end
  if nxt < base then nxt = base end
  if nxt > slowest then nxt = slowest end
end
if nxt <= base then
  redis.call('DEL', KEYS[2])
else
  redis.call('SET', KEYS[2], string.format('%.0f', nxt))
end
return {string.format('%.0f', nxt)}
