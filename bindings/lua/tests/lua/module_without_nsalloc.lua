-- module_without_nsalloc.lua: under a state that does not run on nsalloc
-- (nsalloc-lua --alloc=system) the module loads and says so clearly.
local nsalloc = require "nsalloc"
for _, name in ipairs {"stats", "limit"} do
  local ok, err = pcall(nsalloc[name])
  assert(not ok, name .. " must fail")
  assert(err:find("this Lua state does not run on nsalloc", 1, true), err)
end
print("module without nsalloc: clear errors")
