-- module_adopt.lua: `require "nsalloc"` in a state that does not run on
-- nsalloc (stock lua5.4, nsalloc-lua --alloc=system) moves the state onto the
-- module's copy: blocks made before keep working and are freed through the
-- previous allocator, new ones come from nsalloc, Lua's own count and the
-- binding's agree, and the limit and statistics work.
local function value(tag, i) return (tag):rep(i % 7) .. i end
local before = {}
for i = 1, 20000 do before[i] = value("pre", i) end

local nsalloc = require "nsalloc"
local stats = nsalloc.stats()
assert(stats.copy == "nslmod_", "the module's own copy serves the state: " .. tostring(stats.copy))
assert(stats.allocations < 100, "counting starts at the switch")
assert(stats.heap_bytes < stats.in_use, "old blocks are not the heap's")

local after = {}
for i = 1, 20000 do after[i] = value("post", i) end
assert(nsalloc.stats().allocations >= 20000 and nsalloc.stats().heap_bytes > 0)
for i = 1, 20000, 3 do before[i] = before[i] .. "+" end -- old and new blocks mixed
before[#before + 1] = {} -- resize the old table's array
before = nil
collectgarbage()
collectgarbage()
local kb = collectgarbage("count")
assert(math.abs(kb - nsalloc.stats().in_use / 1024) < 1e-6,
       ("Lua counts %.3f KiB, the binding %.3f KiB"):format(kb, nsalloc.stats().in_use / 1024))

assert(nsalloc.limit(4 << 20) == 0)
local ok, err = pcall(string.rep, "x", 8 << 20)
assert(not ok and err == "not enough memory", tostring(err))
assert(nsalloc.stats().limit_hits >= 1)
assert(nsalloc.limit(0) == 4 << 20)
for i = 1, 20000 do assert(after[i] == value("post", i)) end
assert(package.loaded.nsalloc == nsalloc and require "nsalloc" == nsalloc)
print("module adopts the state: ok")
