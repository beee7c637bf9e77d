-- working_set.lua [SCALE]: a long-lived working set (an LRU-like cache of
-- records) that is constantly replaced piece by piece, so the heap holds a
-- large live population while it churns.
local scale = tonumber(arg and arg[1]) or 1
local slots = 20000
local cache = {}
local seed = 7
local function random(n)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return (seed >> 8) % n + 1
end
for i = 1, slots do cache[i] = {id = i, name = "record " .. i, tags = {i % 3, i % 5}} end
local replaced = 0
for _ = 1, 60000 * scale do
  local slot = random(slots)
  local size = random(8)
  local record = {id = slot, name = "record " .. slot .. ("*"):rep(size), tags = {}}
  for t = 1, size do record.tags[t] = t end
  cache[slot] = record
  replaced = replaced + 1
end
local tags = 0
for i = 1, slots do tags = tags + #cache[i].tags end
print("working_set", replaced, tags)
