-- demo.lua: a script that runs into its state's memory limit and recovers.
-- Run it as: nsalloc-lua --limit=4M --stats demo.lua
local nsalloc = require "nsalloc"

local function mib(bytes) return string.format("%.2f MiB", bytes / 1048576) end

local limit = nsalloc.limit()
print("state limit: " .. (limit > 0 and mib(limit) or "none") .. ", in use " .. mib(nsalloc.stats().in_use))

-- Keep filling a cache until the allocator refuses; the error is an ordinary
-- Lua error, caught by pcall.
local cache = {}
local ok, err = pcall(function()
  for i = 1, math.huge do cache[i] = ("entry %d "):format(i):rep(20) end
end)
assert(not ok and err:find("not enough memory"), "expected to hit the limit")
local entries = #cache

-- Recover: drop half the cache and collect (until then even a print could
-- fail: the state is at its limit), then go on.
for i = 1, #cache, 2 do cache[i] = nil end
collectgarbage()
print(("hit the limit after %d entries: %s"):format(entries, err))
local stats = nsalloc.stats()
print("recovered: in use " .. mib(stats.in_use) .. ", peak " .. mib(stats.peak) .. ", limit hits "
      .. stats.limit_hits)
local report = {}
for _, name in ipairs {"string", "table", "function", "userdata", "thread", "other"} do
  report[#report + 1] = ("%s %d"):format(name, stats.by_type[name].count)
end
print("objects allocated by type: " .. table.concat(report, ", "))
print("the state still works: " .. ("ok "):rep(3))
