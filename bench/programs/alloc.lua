-- Allocation-heavy Lua workload: tables of strings, concatenation, sorting,
-- gsub and table churn. Usage: lua5.4 alloc.lua N. Prints a digest.
local n = tonumber(arg[1]) or 1000
local words, sum = {}, 0
for i = 1, n do
  words[i] = string.format("w%05d-%s", (i * 7919) % n, string.rep("x", i % 13))
end
for round = 1, 8 do
  local index = {}
  for i = 1, n do
    local w = words[i] .. ":" .. round
    local bucket = index[#w]
    if not bucket then bucket = {}; index[#w] = bucket end
    bucket[#bucket + 1] = w:upper():gsub("X", "y")
  end
  local keys = {}
  for k, bucket in pairs(index) do
    table.sort(bucket)
    keys[#keys + 1] = k
    sum = sum + #bucket[1] + #table.concat(bucket, ",", 1, math.min(#bucket, 16))
  end
  table.sort(keys)
  local queue = {}
  for i = 1, n do
    queue[#queue + 1] = {i, words[i], {round}}
    if #queue > 64 then table.remove(queue, 1) end
  end
  sum = sum + #queue + keys[1]
end
print(n, sum)
