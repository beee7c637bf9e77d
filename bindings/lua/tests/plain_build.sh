#!/bin/sh
# plain_build.sh SRC_ROOT WORKDIR LUA_INCLUDE_DIR [EXTRA_SOURCE...]
# Builds the Lua module `nsalloc` the way a LuaRocks builtin rockspec or a
# user would - one plain `cc -shared -fPIC`, none of the project's flags (no
# prefix, no -fvisibility=hidden, no NSALLOC_PRIVATE) - and checks that its
# dynamic symbol table defines luaopen_nsalloc and nothing else: the sources
# themselves must keep every other name hidden. Then stock lua5.4 loads it.
# EXTRA_SOURCE: compiled in too (the negative control adds a file exporting
# a helper, which must be reported as "unexpected export: <name>").
set -u
root=$1 work=$2 lua_include=$3
shift 3
cc=${CC:-cc}
mkdir -p "$work" || exit 1
module=$work/nsalloc.so
rm -f "$module"
if ! "$cc" -shared -fPIC -I"$root/sdk/include" -I"$root/bindings/lua/include" \
    -I"$root/bindings/lua/src" -I"$lua_include" "$root/core/nsalloc.c" \
    "$root"/bindings/lua/src/*.c "$root/bindings/lua/module/nsalloc_module.c" "$@" \
    -o "$module" -lpthread; then
  echo "FAIL: the plain build did not compile"
  exit 1
fi
exports=$(nm -D --defined-only "$module" | awk '{print $3}' | sort)
status=0
for name in $exports; do
  [ "$name" = luaopen_nsalloc ] || { echo "unexpected export: $name"; status=1; }
done
echo "$exports" | grep -qx luaopen_nsalloc || { echo "FAIL: luaopen_nsalloc is not exported"; status=1; }
[ $status -eq 0 ] || exit 1
echo "exports: $exports"
# The plainly built module works: it adopts a stock lua5.4 state.
if ! lua5.4 -e "package.cpath = '$work/?.so'
  local nsalloc = require 'nsalloc'
  local t = {} for i = 1, 10000 do t[i] = tostring(i) end
  assert(nsalloc.stats().in_use > 0 and nsalloc.stats().allocations >= 10000)
  print('loaded by lua5.4: copy ' .. nsalloc.module_copy)"; then
  echo "FAIL: lua5.4 could not use the plainly built module"
  exit 1
fi
