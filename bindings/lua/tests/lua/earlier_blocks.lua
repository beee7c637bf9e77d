-- earlier_blocks.lua lpeg LPEG_SO | earlier_blocks.lua buffer
-- Blocks allocated before `require "nsalloc"` began counting that Lua's own
-- count does not cover - C code's blocks taken through lua_getallocf - are
-- freed after it. Lua's count (where the accounting starts) never included
-- them, so they must not be subtracted from what was counted: `in_use` must
-- stay between 0 and Lua's count, large allocations must work, and a limit
-- must refuse only what it should. Run under nsalloc-lua (an untracked state
-- tracked at the require) and under lua5.4 / nsalloc-lua --alloc=system (a
-- state adopted at the require).
local mode = arg[1]
local nsalloc
-- in_use of a state whose accounting wrapped below zero reads as a huge
-- size_t, that is a negative lua_Integer.
local function check_in_use(when)
  local in_use, count = nsalloc.stats().in_use, collectgarbage("count") * 1024
  assert(in_use > 0 and in_use <= count,
         ("%s: in_use %d outside (0, Lua's count %d]"):format(when, in_use, count))
end

local function check_allocations_work(when)
  local ok, big = pcall(string.rep, "x", 16 << 20)
  assert(ok and #big == 16 << 20, when .. ": a 16 MiB string: " .. tostring(big))
  big = nil
  collectgarbage()
  -- A limit well above the state's size lets ordinary work through ...
  nsalloc.limit(nsalloc.stats().in_use + (32 << 20))
  local ok2, err = pcall(function()
    local t = {}
    for i = 1, 10000 do t[i] = {i, tostring(i)} end
    return t
  end)
  assert(ok2, when .. ": small allocations under a generous limit: " .. tostring(err))
  -- ... and still refuses what exceeds it.
  local ok3, err3 = pcall(string.rep, "y", 64 << 20)
  assert(not ok3 and err3 == "not enough memory", when .. ": the limit did not hold: " .. tostring(err3))
  nsalloc.limit(0)
end

-- LPeg: a compiled pattern's code is allocated through lua_getallocf, not
-- counted by Lua. Compile patterns, start counting, drop them.
local function lpeg_patterns(lpeg_so)
  local lpeg = assert(package.loadlib(lpeg_so, "luaopen_lpeg"))()
  local patterns = {}
  for i = 1, 300 do
    local p = lpeg.P(false)
    for j = 1, 40 do p = p + lpeg.P("k" .. i .. "_" .. j) * lpeg.R("09") ^ 1 end
    assert(p:match("k" .. i .. "_407") == #("k" .. i .. "_40") + 2) -- compiles it
    patterns[i] = p
  end
  nsalloc = require "nsalloc"
  check_in_use("LPeg patterns live")
  patterns = nil
  collectgarbage()
  collectgarbage()
  check_in_use("LPeg patterns dropped")
  check_allocations_work("LPeg patterns dropped")
end

-- A luaL_Buffer live across the require: string.gsub builds its result in a
-- box allocated through lua_getallocf. The require comes from a replacement
-- when the box has grown to megabytes; the box is then resized and freed.
local function buffer_across_require()
  local piece = ("z"):rep(1000)
  local n = 0
  local result = ("."):rep(6000):gsub(".", function()
    n = n + 1
    if n == 3000 then
      nsalloc = require "nsalloc"
      check_in_use("luaL_Buffer live")
    end
    return piece
  end)
  assert(#result == 6000 * 1000)
  result = nil
  collectgarbage()
  collectgarbage()
  check_in_use("luaL_Buffer freed")
  check_allocations_work("luaL_Buffer freed")
end

if mode == "lpeg" then
  lpeg_patterns(assert(arg[2], "usage: earlier_blocks.lua lpeg LPEG_SO"))
elseif mode == "buffer" then
  buffer_across_require()
else
  error("usage: earlier_blocks.lua lpeg LPEG_SO | earlier_blocks.lua buffer")
end
print("earlier blocks (" .. mode .. "): ok")
