-- table_churn.lua [SCALE]: tables whose array and hash parts grow and shrink
-- again and again (queues, sets, caches that are filled and emptied).
local scale = tonumber(arg and arg[1]) or 1
local checksum = 0
for round = 1, 60 * scale do
  local queue, set = {}, {}
  for i = 1, 3000 do
    queue[#queue + 1] = i
    set["k" .. (i % 700)] = i
  end
  while #queue > 100 do
    checksum = checksum + table.remove(queue)
  end
  for key in pairs(set) do set[key] = nil end
  for i = 1, 500 do set[i * 3] = {i} end
  local grown = {}
  for i = 1, 200 do
    grown[i] = {}
    for j = 1, i % 40 do grown[i][j] = j end
  end
  checksum = (checksum + #grown + #queue + round) % 1000000007
end
print("table_churn", checksum)
