-- host.lua HOST STOCK_LUA: nsalloc-lua's command line, run as a user would;
-- some cases side by side with Debian's lua5.4 (STOCK_LUA).
local host, stock = ...
assert(host and stock, "usage: host.lua HOST STOCK_LUA")
local tmp = os.tmpname()
local failures = 0

-- Runs `host ARGS` through the shell; returns exit code, stdout, stderr.
local function run(args, stdin, env, program)
  local command = (env and "env " .. env .. " " or "") .. (program or host) .. " " .. args .. " >" .. tmp ..
                  ".out 2>" .. tmp .. ".err"
  if stdin then command = "printf '%s' '" .. stdin .. "' | " .. command end
  local _, how, code = os.execute(command)
  local function slurp(path)
    local f = assert(io.open(path, "rb"))
    local text = f:read("a")
    f:close()
    return text
  end
  return how == "exit" and code or 128 + code, slurp(tmp .. ".out"), slurp(tmp .. ".err")
end

local function expect(name, args, want, stdin, env)
  local code, out, err = run(args, stdin, env)
  local problems = {}
  if want.code and code ~= want.code then problems[#problems + 1] = "exit " .. code end
  if want.out and out ~= want.out then problems[#problems + 1] = "stdout " .. string.format("%q", out) end
  for _, pattern in ipairs(want.err or {}) do
    if not err:find(pattern, 1, true) then problems[#problems + 1] = "stderr lacks " .. pattern end
  end
  if #problems > 0 then
    failures = failures + 1
    io.stderr:write("FAIL ", name, ": ", table.concat(problems, "; "), "\nstderr: ", err, "\n")
  else
    print("PASS " .. name)
  end
end

-- The drop-in promise: the same exit status, stdout and stderr as lua5.4
-- (the program name that starts a message aside).
local function same_as_stock(name, args, stdin)
  local code, out, err = run(args, stdin, nil, host)
  local stock_code, stock_out, stock_err = run(args, stdin, nil, stock)
  local function unnamed(text, program)
    return (text:gsub(program:gsub("%p", "%%%0") .. ": ", "PROGNAME: "))
  end
  err, stock_err = unnamed(err, host), unnamed(stock_err, stock)
  if code ~= stock_code or out ~= stock_out or err ~= stock_err then
    failures = failures + 1
    io.stderr:write(("FAIL %s (as lua5.4): exit %d, lua5.4 %d\nstdout %q\nlua5.4 %q\nstderr %q\nlua5.4 %q\n")
                    :format(name, code, stock_code, out, stock_out, err, stock_err))
  else
    print("PASS " .. name .. " (as lua5.4: exit " .. code .. ")")
  end
end

-- lua5.4 ignores the outcome of standard input run as the implicit script
-- (no script, no -e): an error is reported and the status is 0; "-" named as
-- the script is a script, whose error gives 1.
same_as_stock("error in implicit stdin", "", "local x = 1\nerror(\"x\")\n")
same_as_stock("syntax error in implicit stdin", "", "x =\n")
same_as_stock("error in - (stdin as the script)", "-", "error(\"x\")\n")
same_as_stock("syntax error in -", "-", "x =\n")
same_as_stock("error in implicit stdin after -W", "-W", "warn(\"hi\") error(\"y\")\n")

local script = tmp .. ".lua"
local f = assert(io.open(script, "w"))
f:write("print(select('#', ...), ..., arg[0] == '" .. script .. "', arg[1], arg[-1], arg[-2] ~= nil)\n")
f:close()

expect("-e", "-e 'print(1 + 1)'", {code = 0, out = "2\n"})
expect("-eCHUNK, in order", "-e'x = 5' -e 'print(x * 2)'", {code = 0, out = "10\n"})
expect("script and args", "--stats " .. script .. " a b",
       {code = 0, out = "2\ta\ttrue\ta\t--stats\ttrue\n"})
expect("- is stdin", "- a b", {code = 0, out = "stdin\ta\tb\n"}, "print(\"stdin\", ...)")
expect("no script: stdin", "", {code = 0, out = "read\n"}, "print(\"read\")")
expect("-- ends options", "-- " .. script .. " -x", {code = 0, out = "1\t-x\ttrue\t-x\t--\ttrue\n"})
expect("error: traceback, exit 1", "-e 'local function inner() error(\"boom\") end inner()'",
       {code = 1, out = "", err = {"nsalloc-lua: (command line):1: boom", "stack traceback:", "inner"}})
expect("error object", "-e 'error({})'", {code = 1, err = {"(error object is a table value)"}})
expect("error object with __tostring",
       "-e 'error(setmetatable({}, {__tostring = function() return \"described\" end}))'",
       {code = 1, err = {"described"}})
expect("syntax error", "-e 'x ='", {code = 1, err = {"nsalloc-lua: (command line):1: unexpected symbol"}})
expect("missing script", "/nonexistent/script.lua", {code = 1, err = {"cannot open /nonexistent/script.lua"}})
expect("os.exit", "-e 'os.exit(3)'", {code = 3})
expect("--limit", "--limit=1M -e 'print(pcall(string.rep, \"x\", 2 << 20))'",
       {code = 0, out = "false\tnot enough memory\n"})
expect("--limit keeps working", "--limit=1M -e 'pcall(string.rep, \"x\", 2 << 20) print(#(\"z\"):rep(1000))'",
       {code = 0, out = "1000\n"})
expect("--stats", "--limit=2M --stats -e 'pcall(string.rep, \"x\", 4 << 20)'",
       {code = 0, err = {"copy nslua_", "peak", "limit       2097152 bytes", "limit hits  1",
                         "string", "after lua_close: in use 0 bytes, heap blocks 0 bytes"}})
expect("--alloc=system", "--alloc=system -e 'print(#(\"a\"):rep(10))'", {code = 0, out = "10\n"})
expect("--alloc=system refuses --limit", "--alloc=system --limit=1M -e ''",
       {code = 1, err = {"--limit needs"}})
expect("bad limit", "--limit=12Q -e ''", {code = 1, err = {"bad byte count"}})
expect("unknown option", "--frobnicate", {code = 1, err = {"unrecognized option '--frobnicate'", "usage:"}})
expect("options are whole arguments", "-iv", {code = 1, err = {"unrecognized option '-iv'"}})
expect("-h is lua5.4's: unknown", "-h", {code = 1, err = {"unrecognized option '-h'"}})
expect("-e without chunk", "-e", {code = 1, err = {"'-e' needs argument"}})
expect("-l without module", "-l", {code = 1, err = {"'-l' needs argument"}})
expect("-v", "-v", {code = 0, out = "Lua 5.4.4  Copyright (C) 1994-2022 Lua.org, PUC-Rio\n"})
expect("--version", "--version", {code = 0, err = {}})
expect("--help", "--help", {code = 0})
expect("-l mod and -l g=mod", "-l string '-lm=math' -e 'print(string == m and 1, m == math)'",
       {code = 0, out = "false\ttrue\n"})
expect("-l error", "-l no_such_module_x", {code = 1, err = {"module 'no_such_module_x' not found"}})
expect("LUA_INIT", "-e 'print(X)'", {code = 0, out = "7\n"}, nil, "LUA_INIT='X = 7'")
expect("LUA_INIT_5_4 first", "-e 'print(X)'", {code = 0, out = "8\n"}, nil,
       "LUA_INIT='X = 7' LUA_INIT_5_4='X = 8'")
expect("LUA_INIT error", "-e ''", {code = 1, err = {"LUA_INIT:1: init failed"}}, nil,
       "LUA_INIT='error(\"init failed\")'")
expect("-E ignores LUA_INIT and LUA_PATH", "-E -e 'print(X, package.path:find(\"nowhere\"))'",
       {code = 0, out = "nil\tnil\n"}, nil, "LUA_INIT='X = 7' LUA_PATH='nowhere/?.lua'")
expect("generational GC, as lua5.4", "-e 'print(collectgarbage(\"incremental\"))'",
       {code = 0, out = "generational\n"})
-- readline echoes the line when standard input is not a terminal (so does lua5.4)
expect("-i on a pipe", "-i", {code = 0, out = "Lua 5.4.4  Copyright (C) 1994-2022 Lua.org, PUC-Rio\n" ..
                                         "> 1 + 2\n3\n> \n"}, "1 + 2\n")
expect("warnings: off by default", "-e 'warn(\"hidden\")'", {code = 0, out = ""})
expect("warnings: -W", "-W -e 'warn(\"shown\", \" in pieces\")'", {code = 0, err = {"Lua warning: shown in pieces"}})

os.remove(tmp)
os.remove(tmp .. ".out")
os.remove(tmp .. ".err")
os.remove(script)
print(string.format("host: %s", failures == 0 and "all passed" or failures .. " failed"))
if failures > 0 then os.exit(1) end
