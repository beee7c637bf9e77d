-- binary_trees.lua [SCALE]: allocate and walk many short-lived binary trees
-- next to one long-lived tree (the classic GC/allocator benchmark shape).
local scale = tonumber(arg and arg[1]) or 1
local max_depth = 12 + math.floor(math.log(scale, 2))

local function make(depth)
  if depth == 0 then return {} end
  depth = depth - 1
  return {make(depth), make(depth)}
end

local function check(tree)
  if tree[1] then return 1 + check(tree[1]) + check(tree[2]) end
  return 1
end

local long_lived = make(max_depth)
local total = 0
for depth = 4, max_depth, 2 do
  local iterations = 1 << (max_depth - depth + 4)
  for _ = 1, iterations do total = total + check(make(depth)) end
end
print("binary_trees", total, check(long_lived))
