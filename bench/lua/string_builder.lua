-- string_builder.lua [SCALE]: build text the ways programs do - buffers of
-- parts joined with table.concat, string.format, gsub rewriting, string.rep
-- and pack - so strings and buffers of every size come and go.
local scale = tonumber(arg and arg[1]) or 1
local total = 0
for round = 1, 40 * scale do
  local parts = {}
  for i = 1, 2000 do
    parts[#parts + 1] = string.format("%d:%s=%0.3f;", i, ("key"):rep(i % 5 + 1), i / 7)
  end
  local text = table.concat(parts)
  local rewritten = text:gsub("key", "K")
  local packed = {}
  for i = 1, 500 do packed[i] = string.pack("<i4 s1", i * round, ("v"):rep(i % 30)) end
  total = total + #text + #rewritten + #table.concat(packed) + #(("x"):rep(round * 100))
end
print("string_builder", total)
