-- tables.lua: arrays and hashes growing and shrinking, sorting, nesting,
-- weak tables, table.move/insert/remove/concat.
local function checksum(t, n)
  local sum = 0
  for i = 1, n do sum = (sum * 31 + (t[i] or 0)) % 1000000007 end
  return sum
end

-- Arrays grow, shrink and regrow.
local a = {}
for round = 1, 5 do
  for i = 1, 20000 * round do a[i] = i * round end
  for i = #a, 1000, -1 do a[i] = nil end
end
print("array after regrowth", #a, checksum(a, #a))

-- Hash parts with integer and string keys, deleted and refilled.
local h = {}
for i = 1, 30000 do h["k" .. i] = i end
for i = 1, 30000, 3 do h["k" .. i] = nil end
local count, sum = 0, 0
for _, v in pairs(h) do count, sum = count + 1, sum + v end
print("hash after deletes", count, sum)
for i = 1, 30000, 3 do h["k" .. i] = -i end
count, sum = 0, 0
for _, v in pairs(h) do count, sum = count + 1, sum + v end
print("hash refilled", count, sum)

-- Sorting records.
local records = {}
local seed = 42
for i = 1, 20000 do
  seed = (seed * 1103515245 + 12345) % 2147483648
  records[i] = {key = seed % 100000, id = i}
end
table.sort(records, function(x, y) return x.key < y.key or (x.key == y.key and x.id < y.id) end)
local ordered = true
for i = 2, #records do ordered = ordered and records[i - 1].key <= records[i].key end
print("sorted", ordered, records[1].key, records[#records].key, records[10000].id)

-- insert/remove in the middle, move, concat.
local q = {}
for i = 1, 2000 do table.insert(q, 1, i) end
for _ = 1, 1000 do table.remove(q, 500) end
local moved = table.move(q, 1, #q, 3, {})
print("insert/remove/move", #q, q[1], q[#q], #moved, moved[3])
local words = {}
for i = 1, 5000 do words[i] = tostring(i) end
print("concat length", #table.concat(words, ","))

-- Nested tables, a tree of depth 12.
local function tree(depth)
  if depth == 0 then return {} end
  return {tree(depth - 1), tree(depth - 1), depth = depth}
end
local function size(t) return t[1] and 1 + size(t[1]) + size(t[2]) or 1 end
print("tree nodes", size(tree(12)))

-- Weak tables lose their collectable entries in a full collection.
local weak = setmetatable({}, {__mode = "v"})
local strong = {}
for i = 1, 1000 do
  local v = {i}
  weak[i] = v
  if i % 4 == 0 then strong[#strong + 1] = v end
end
collectgarbage()
local alive = 0
for i = 1, 1000 do if weak[i] then alive = alive + 1 end end
print("weak values alive", alive)
