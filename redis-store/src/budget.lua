-- The retry budget (recuo::RetryBudget's rule): retries in the last window_s seconds stay
-- within ratio × requests + floor × window. KEYS[1]: a hash of per-second counts
-- (q<second>, r<second>), pruned here. ARGV: op ('request' | 'withdraw' | 'counts'),
-- ratio_ppm, floor_milli_per_s, window_s, now_s ('' = the server's TIME).
-- Answers {done, requests, retries} (done: 1 when counted or withdrawn).
local ratio = tonumber(ARGV[2]) / 1e6
local floor = tonumber(ARGV[3]) / 1e3
local window = tonumber(ARGV[4])
local now
if ARGV[5] == '' then now = tonumber(redis.call('TIME')[1]) else now = tonumber(ARGV[5]) end
local all = redis.call('HGETALL', KEYS[1])
local req, ret = 0, 0
for i = 1, #all, 2 do
  local f = all[i]
  local sec = tonumber(string.sub(f, 2))
  if sec == nil or sec + window <= now or sec > now then
    redis.call('HDEL', KEYS[1], f)
  elseif string.sub(f, 1, 1) == 'q' then
    req = req + tonumber(all[i + 1])
  else
    ret = ret + tonumber(all[i + 1])
  end
end
local done = 0
if ARGV[1] == 'request' then
  redis.call('HINCRBY', KEYS[1], 'q' .. now, 1)
  req = req + 1
  done = 1
elseif ARGV[1] == 'withdraw' then
  if ret + 1 <= ratio * req + floor * window + 1e-9 then
    redis.call('HINCRBY', KEYS[1], 'r' .. now, 1)
    ret = ret + 1
    done = 1
  end
end
redis.call('EXPIRE', KEYS[1], window + 1)
return {done, req, ret}
