-- two_copies.lua MODULE... : C modules that each bundle a private nsalloc copy,
-- used heavily side by side in one interpreter. Buffers are created, resized
-- (the 48 -> 96 byte shape first) and freed in every module in turn, their
-- bytes move between modules through Lua strings, and every live buffer is
-- checked over and over. Any lost or mixed-up content fails the run.
local names = {...}
assert(#names >= 2, "usage: two_copies.lua MODULE MODULE...")
local modules = {}
for i, name in ipairs(names) do modules[i] = {name = name, m = require(name)} end

local rng = 12345
local function random(n) -- deterministic LCG, 1..n (its low bits cycle: use the high ones)
  rng = (rng * 1103515245 + 12345) % 2147483648
  return (rng >> 16) % n + 1
end

local function verify(entry, where)
  if not entry.buffer:check() then
    error(string.format("%s: buffer contents lost after resize (%s, %d bytes)",
                        entry.module.name, where, entry.buffer:size()), 0)
  end
end

local live = {}
local sizes = {48, 96, 16, 24, 100, 1000, 4096, 70000}
for round = 1, 20000 do
  local module = modules[random(#modules)]
  local action = random(6)
  if #live > 300 or (action == 5 and #live > 8) then
    table.remove(live, random(#live)) -- freed by __gc, in its own copy
  elseif action <= 2 or #live < 8 then
    local seed = round
    local buffer = module.m.new(48, seed)
    live[#live + 1] = {module = module, buffer = buffer, seed = seed}
    buffer:resize(96) -- the incident's shape
    verify(live[#live], "48 -> 96")
  elseif action == 3 then
    local entry = live[random(#live)]
    entry.buffer:resize(sizes[random(#sizes)])
    verify(entry, "resize")
  elseif action == 4 then -- bytes travel to another module's copy
    local entry = live[random(#live)]
    local target = modules[random(#modules)]
    local copy = target.m.from(entry.buffer:bytes(), entry.seed)
    local moved = {module = target, buffer = copy, seed = entry.seed}
    verify(moved, "copied from " .. entry.module.name)
    live[#live + 1] = moved
  else
    verify(live[random(#live)], "spot check")
  end
  if round % 250 == 0 then
    for _, entry in ipairs(live) do verify(entry, "sweep") end
    collectgarbage()
  end
end
for _, entry in ipairs(live) do verify(entry, "final") end

live = nil
collectgarbage()
collectgarbage()
local copies = {}
for _, module in ipairs(modules) do
  local stats = module.m.stats()
  if stats.foreign ~= 0 or stats.invalid ~= 0 or stats.blocks ~= 0 then
    error(string.format("%s (copy %s): foreign %d, invalid %d, live blocks %d after all frees",
                        module.name, module.m.copy, stats.foreign, stats.invalid, stats.blocks), 0)
  end
  copies[#copies + 1] = module.name .. "=" .. module.m.copy
end
print("two_copies: " .. table.concat(copies, " ") .. ": contents intact, no foreign pointers")
