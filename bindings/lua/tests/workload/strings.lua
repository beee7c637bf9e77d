-- strings.lua: building strings - concatenation, string.rep, string.format,
-- gsub, pack/unpack, table.concat - and many short interned strings.
local function hash(s)
  local h = 5381
  for i = 1, #s, 7 do h = (h * 33 + s:byte(i)) % 4294967296 end
  return h
end

local s = ""
for i = 1, 3000 do s = s .. tostring(i % 10) end
print("concat loop", #s, hash(s))

local parts = {}
for i = 1, 20000 do parts[#parts + 1] = string.format("%05d:%s;", i, ("ab"):rep(i % 7)) end
local joined = table.concat(parts)
print("format+concat", #joined, hash(joined))

local big = string.rep("0123456789", 100000)
print("rep", #big, hash(big))
local replaced, n = big:gsub("345", "<>")
print("gsub", #replaced, n, hash(replaced))
print("upper/sub", hash(big:sub(1000, 50000):upper()), #big:reverse())

local packed = {}
for i = 1, 5000 do packed[i] = string.pack("<i4 d s2", i, i / 3, ("x"):rep(i % 13)) end
local blob = table.concat(packed)
local pos, total, text = 1, 0, 0
for _ = 1, 5000 do
  local i, d, str
  i, d, str, pos = string.unpack("<i4 d s2", blob, pos)
  total = total + i + math.floor(d)
  text = text + #str
end
print("pack/unpack", #blob, total, text)

local interned = {}
for round = 1, 3 do
  for i = 1, 20000 do interned[i] = "short" .. (i % 997) .. round end
end
local distinct = {}
for i = 1, #interned do distinct[interned[i]] = true end
local count = 0
for _ in pairs(distinct) do count = count + 1 end
print("short strings", count)

local words = {}
for word in ("the quick brown fox jumps over the lazy dog "):rep(2000):gmatch("%a+") do
  words[word] = (words[word] or 0) + 1
end
print("gmatch", words.the, words.fox, words.dog)
print("utf8", utf8.len(("héllo wörld "):rep(100)), #utf8.char(72, 228, 8364, 128512))
