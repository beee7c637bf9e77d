-- run.lua BUILD_DIR [--rounds N] [--doc FILE]: the Lua allocation benchmark.
-- Every script in this directory runs under nsalloc-lua (BUILD_DIR's; as it
-- runs by default, untracked, and with --stats, counting) and under Debian's
-- stock lua5.4 with glibc and with Debian's mimalloc, jemalloc and tcmalloc
-- preloaded, plus the newest mimalloc builds in ../shared/peers when present.
-- Both interpreters run the same Lua 5.4.4 with generational GC. Per script
-- and allocator it measures whole-program instructions (callgrind), wall-clock
-- time (median of N interleaved rounds, as a ratio to nsalloc) and peak RSS
-- (/usr/bin/time -v). Prints a Markdown table; with --doc it also replaces the
-- table between the "<!-- bench:lua:begin -->" and "<!-- bench:lua:end -->"
-- lines of FILE. Run with Debian's interpreter: lua5.4 bench/lua/run.lua build
local build = assert(arg[1], "usage: run.lua BUILD_DIR [--rounds N] [--doc FILE]")
local rounds, doc = 5, nil
for i = 2, #arg, 2 do
  if arg[i] == "--rounds" then rounds = assert(tonumber(arg[i + 1]), "--rounds N")
  elseif arg[i] == "--doc" then doc = arg[i + 1]
  else error("unknown argument " .. arg[i]) end
end
local here = arg[0]:match("^(.*)/[^/]*$") or "."
local host = build .. "/bindings/lua/nsalloc-lua"
local tmp = os.tmpname()

local function shell(command)
  local ok = os.execute(command)
  return ok
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("a")
  f:close()
  return text
end

local function library(name)
  for _, dir in ipairs {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib"} do
    local path = dir .. "/" .. name
    if io.open(path) then return path end
  end
  error("missing " .. name .. " (scripts/lua-deps.txt installs it)")
end

local allocators = {
  {name = "nsalloc", program = host},
  {name = "nsalloc --stats", program = host .. " --stats"},
  {name = "glibc", program = "lua5.4"},
  {name = "mimalloc", program = "lua5.4", preload = library("libmimalloc.so.2")},
  {name = "jemalloc", program = "lua5.4", preload = library("libjemalloc.so.2")},
  {name = "tcmalloc", program = "lua5.4", preload = library("libtcmalloc_minimal.so.4")},
}
-- The newest mimalloc releases, kept outside the repository.
local peers = here .. "/../../../shared/peers"
local notes = {}
for _, peer in ipairs {{"mimalloc 2.4.1", "mimalloc-2.4.1/libmimalloc.so.2.4"},
                       {"mimalloc 3.4.3", "mimalloc-3.4.3/libmimalloc.so.3.4"}} do
  local path = peers .. "/" .. peer[2]
  if io.open(path) then
    allocators[#allocators + 1] = {name = peer[1], program = "lua5.4", preload = path}
  else
    notes[#notes + 1] = "- " .. peer[1] .. " skipped: " .. path .. " is absent"
  end
end

local scripts = {}
for name in io.popen("ls " .. here .. "/*.lua"):lines() do
  if not name:match("/run%.lua$") then scripts[#scripts + 1] = name end
end
table.sort(scripts)

local function command(allocator, script, wrapper)
  local env = allocator.preload and ("LD_PRELOAD=" .. allocator.preload .. " ") or ""
  return env .. wrapper .. " " .. allocator.program .. " " .. script .. " >/dev/null"
end

local function instructions(allocator, script)
  assert(shell(command(allocator, script,
                       "valgrind --tool=callgrind --callgrind-out-file=/dev/null") .. " 2>" .. tmp),
         "callgrind failed: " .. read(tmp))
  return tonumber(read(tmp):match("Collected : (%d+)"))
end

-- One timed run: wall seconds and peak RSS in KiB.
local function timed(allocator, script)
  assert(shell(command(allocator, script, "/usr/bin/time -v") .. " 2>" .. tmp), read(tmp))
  local text = read(tmp)
  local h, m, s = text:match("Elapsed %(wall clock%) time %(h:mm:ss or m:ss%): (%d+):(%d+):([%d.]+)")
  if not s then m, s = text:match("Elapsed %(wall clock%) time %(h:mm:ss or m:ss%): (%d+):([%d.]+)") end
  local seconds = (tonumber(h) or 0) * 3600 + tonumber(m) * 60 + tonumber(s)
  return seconds, tonumber(text:match("Maximum resident set size %(kbytes%): (%d+)"))
end

local function median(values)
  table.sort(values)
  local n = #values
  return n % 2 == 1 and values[(n + 1) / 2] or (values[n / 2] + values[n / 2 + 1]) / 2
end

local lines = {
  "| script | allocator | instructions | vs nsalloc | wall (median) | wall vs nsalloc | peak RSS |",
  "|---|---|---:|---:|---:|---:|---:|",
}
local verdicts = {}
for _, script in ipairs(scripts) do
  local name = script:match("([^/]+)%.lua$")
  local results = {}
  for i, allocator in ipairs(allocators) do
    results[i] = {instructions = instructions(allocator, script), walls = {}, rss = 0}
  end
  for round = 1, rounds do -- interleaved, starting with a different allocator each round
    for k = 0, #allocators - 1 do
      local i = (round + k - 1) % #allocators + 1
      local wall, rss = timed(allocators[i], script)
      table.insert(results[i].walls, wall)
      results[i].rss = math.max(results[i].rss, rss)
    end
  end
  local base = results[1]
  base.wall = median(base.walls)
  for i, allocator in ipairs(allocators) do
    local r = results[i]
    r.wall = median(r.walls)
    lines[#lines + 1] = string.format("| %s | %s | %d | %.3f | %.3f s | %.2f | %.1f MiB |", name,
                                      allocator.name, r.instructions,
                                      r.instructions / base.instructions, r.wall,
                                      r.wall / base.wall, r.rss / 1024)
  end
  -- The target: nsalloc-lua at most 1.00x stock lua5.4 with Debian's mimalloc.
  local mimalloc = results[4].instructions
  verdicts[#verdicts + 1] = string.format("- %s: nsalloc %s (%.3fx stock lua5.4 + mimalloc; %.3fx with --stats)",
                                          name, base.instructions <= mimalloc and "meets the target" or "misses the target",
                                          base.instructions / mimalloc, results[2].instructions / mimalloc)
  io.stderr:write("done ", name, "\n")
end
os.remove(tmp)

for _, note in ipairs(notes) do verdicts[#verdicts + 1] = note end
local report = table.concat(lines, "\n") .. "\n\n" .. table.concat(verdicts, "\n") .. "\n\n" ..
               string.format("Command: `lua5.4 bench/lua/run.lua %s --rounds %d`; %s; %d cores, load average %s.\n",
                             build, rounds, io.popen("uname -srm"):read("l"),
                             tonumber(io.popen("nproc"):read("l")),
                             io.popen("cut -d' ' -f1-3 /proc/loadavg"):read("l"))
io.write(report)

if doc then
  local text = read(doc)
  local first, last = text:find("<!%-%- bench:lua:begin %-%->\n.-<!%-%- bench:lua:end %-%->")
  assert(first, doc .. " has no bench:lua markers")
  local replaced = text:sub(1, first - 1) .. "<!-- bench:lua:begin -->\n" .. report ..
                   "<!-- bench:lua:end -->" .. text:sub(last + 1)
  local f = assert(io.open(doc, "wb"))
  f:write(replaced)
  f:close()
end
