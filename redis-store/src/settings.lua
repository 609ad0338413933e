-- Records the settings on first use and answers the settings in force.
-- KEYS[1]: the settings hash. ARGV: the settings' names and values, alternating.
local names = {}
for i = 1, #ARGV, 2 do names[#names + 1] = ARGV[i] end
local cur = redis.call('HMGET', KEYS[1], unpack(names))
if not cur[1] then
  redis.call('HSET', KEYS[1], unpack(ARGV))
  local values = {}
  for i = 2, #ARGV, 2 do values[#values + 1] = ARGV[i] end
  return values
end
return cur
