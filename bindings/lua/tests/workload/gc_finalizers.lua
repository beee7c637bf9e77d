-- gc_finalizers.lua: full and generational collection cycles, finalizers on
-- tables and on C userdata (hammer_a buffers, file handles), resurrection,
-- ephemerons, and collection while lots of garbage is made.
local hammer = require "hammer_a"

local finalized = 0
for i = 1, 5000 do setmetatable({i}, {__gc = function() finalized = finalized + 1 end}) end
collectgarbage()
collectgarbage()
print("table finalizers", finalized)

local buffers = {}
for i = 1, 2000 do
  local b = hammer.new(48 + i % 200, i)
  if i % 2 == 0 then b:resize(96 + i % 300) end
  buffers[i] = b
end
local intact = 0
for i = 1, #buffers do if buffers[i]:check() then intact = intact + 1 end end
buffers = nil
collectgarbage()
collectgarbage()
print("userdata buffers intact", intact, "blocks left", hammer.stats().blocks)

local files = 0
for _ = 1, 50 do
  local f = io.tmpfile()
  f:write(("data"):rep(100))
  files = files + 1
end
collectgarbage()
print("file handles collected", files)

local saved
do
  local t = setmetatable({value = "resurrected"}, {__gc = function(o) saved = o end})
  t = nil
end
collectgarbage()
collectgarbage()
print("resurrection", saved and saved.value)

local keys = {}
local ephemeron = setmetatable({}, {__mode = "k"})
for i = 1, 1000 do
  local k = {}
  ephemeron[k] = {k} -- the value refers to its own key
  if i % 10 == 0 then keys[#keys + 1] = k end
end
collectgarbage()
local left = 0
for _ in pairs(ephemeron) do left = left + 1 end
print("ephemerons left", left)

for _, mode in ipairs {"generational", "incremental"} do
  collectgarbage(mode)
  local survivors = {}
  for i = 1, 100000 do
    local garbage = {i, tostring(i)}
    if i % 100 == 0 then survivors[#survivors + 1] = garbage end
  end
  collectgarbage()
  local sum = 0
  for _, s in ipairs(survivors) do sum = sum + s[1] end
  print(mode, #survivors, sum)
end
collectgarbage("step", 0)
print("done")
