-- closures.lua [SCALE]: closures with upvalues, iterator factories and
-- coroutines created and dropped at a high rate (callback-heavy code).
local scale = tonumber(arg and arg[1]) or 1
local function counter(start)
  local n = start
  return function(step) n = n + step; return n end
end
local function range(n)
  return coroutine.wrap(function() for i = 1, n do coroutine.yield(i) end end)
end
local total = 0
for round = 1, 150 * scale do
  local callbacks = {}
  for i = 1, 400 do callbacks[i] = counter(i) end
  for i = 1, #callbacks do total = total + callbacks[i](round) end
  for v in range(100) do total = total + v end
  local composed = function(x) return x end
  for i = 1, 50 do
    local inner = composed
    composed = function(x) return inner(x) + i end
  end
  total = (total + composed(round)) % 1000000007
end
print("closures", total)
