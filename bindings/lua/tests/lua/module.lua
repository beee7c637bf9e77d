-- module.lua: require "nsalloc" in a state that runs on nsalloc (nsalloc-lua).
local nsalloc = require "nsalloc"

local function check(condition, message)
  if not condition then error(message or "check failed", 2) end
end

-- Without --stats the state starts counting at the require: make one object
-- of each type after it.
local made = {"str" .. os.time(), {1, 2, 3}, function() return made end, io.tmpfile(),
              coroutine.create(print)}
local stats = nsalloc.stats()
check(stats.copy == "nslua_", "statistics come from the host's copy, got " .. tostring(stats.copy))
check(nsalloc.module_copy == "nslmod_", "the module has its own copy")
check(stats.in_use > 0 and stats.peak >= stats.in_use)
check(stats.heap_bytes >= stats.in_use, "heap blocks hold at least what Lua counts")
check(stats.limit == 0 and stats.allocation_limit == 0 and stats.limit_hits == 0)
for _, name in ipairs {"string", "table", "function", "userdata", "thread", "other"} do
  check(stats.by_type[name].count > 0, name .. " objects were counted")
  check(stats.by_type[name].bytes > 0)
end

-- Counters follow what the program does.
local before = nsalloc.stats()
local keep = {}
for i = 1, 100 do keep[i] = {tostring(i) .. "x", function() return i end} end
local after = nsalloc.stats()
check(after.by_type.table.count - before.by_type.table.count >= 100)
check(after.by_type.string.count - before.by_type.string.count >= 100)
check(after.by_type["function"].count - before.by_type["function"].count >= 100)
check(after.allocations - before.allocations >= 300)
keep = nil

-- The limit: set, hit (a catchable error), the state goes on, raise it.
collectgarbage()
local in_use = nsalloc.stats().in_use
check(nsalloc.limit() == 0)
check(nsalloc.limit(in_use + 256 * 1024) == 0, "limit returns the previous limit")
check(nsalloc.limit() == in_use + 256 * 1024)
local ok, err = pcall(string.rep, "x", 1024 * 1024)
check(not ok and err:find("not enough memory"), tostring(err))
check(nsalloc.stats().limit_hits >= 1)
check(#string.rep("y", 1000) == 1000, "the state goes on under the limit")
check(nsalloc.limit(0) == in_use + 256 * 1024)
check(#string.rep("x", 1024 * 1024) == 1024 * 1024, "no limit any more")
check(nsalloc.stats().peak > 1024 * 1024)

local bad = pcall(nsalloc.limit, -1)
check(not bad, "a negative limit is refused")
print("module: ok")
