-- closures_coroutines.lua: closures with shared upvalues, generators,
-- coroutines passing values both ways, deep recursion and error unwinding.
local function counter()
  local n = 0
  return function() n = n + 1; return n end, function() return n end
end
local makers = {}
for i = 1, 5000 do
  local inc, get = counter()
  for _ = 1, i % 10 do inc() end
  makers[i] = get
end
local sum = 0
for i = 1, #makers do sum = sum + makers[i]() end
print("closures", sum)

local function compose(f, g) return function(x) return f(g(x)) end end
local f = function(x) return x end
for i = 1, 200 do
  local k = i
  f = compose(function(x) return x + k end, f)
end
print("composed", f(0))

local function generator(n)
  return coroutine.wrap(function()
    for i = 1, n do coroutine.yield(i * i) end
  end)
end
local total = 0
for round = 1, 200 do
  for v in generator(50) do total = total + v end
end
print("generators", total)

local echo = coroutine.create(function(a)
  local acc = a
  while true do
    local b = coroutine.yield(acc)
    if b == nil then return acc end
    acc = acc + b
  end
end)
local _, value = coroutine.resume(echo, 1)
for i = 2, 1000 do _, value = coroutine.resume(echo, i) end
print("two-way coroutine", value, select(2, coroutine.resume(echo)), coroutine.status(echo))

local threads = {}
for i = 1, 2000 do
  threads[i] = coroutine.create(function() coroutine.yield(i); return i * 2 end)
  coroutine.resume(threads[i])
end
local finished = 0
for i = 1, #threads do
  local ok, v = coroutine.resume(threads[i])
  if ok and v == i * 2 then finished = finished + 1 end
end
print("many coroutines", finished)

local function depth(n) if n == 0 then return 0 end return 1 + depth(n - 1) end
print("recursion", depth(10000))
local ok, err = pcall(function() local function loop() return 1 + loop() end return loop() end)
print("stack overflow caught", not ok, tostring(err):find("stack overflow") ~= nil)

local caught = 0
for i = 1, 2000 do
  local ok2 = pcall(error, {code = i})
  if not ok2 then caught = caught + 1 end
end
print("errors caught", caught)
local co = coroutine.create(function() error("inside") end)
local ok3, msg = coroutine.resume(co)
print("error in coroutine", ok3, msg:match("inside") ~= nil, (coroutine.close(co)))
