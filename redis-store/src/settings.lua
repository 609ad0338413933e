-- Records the settings on first use and answers the settings in force.
-- KEYS[1]: the settings hash. ARGV: the settings' names and values, alternating. A setting
-- the key holds no value for yet (a key set up by an older version) is recorded too.
local names = {}
for i = 1, #ARGV, 2 do
  names[#names + 1] = ARGV[i]
  redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1])
end
return redis.call('HMGET', KEYS[1], unpack(names))
