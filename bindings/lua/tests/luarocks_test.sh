#!/bin/sh
# The rockspec as a Lua user runs it: `luarocks make` in a checkout (here a
# copy of the files the rock builds from, so the source tree stays clean)
# into a local tree, then the installed module under stock lua5.4 and the
# installed nsalloc-lua.
# Usage: luarocks_test.sh PROJECT_SOURCE_DIR
set -eu
project=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/bindings"
cp -r "$project/CMakeLists.txt" "$project/LICENSE" "$project/nsalloc-0.1.0-1.rockspec" \
  "$project/cmake" "$project/core" "$project/sdk" "$work/src/"
cp -r "$project/bindings/lua" "$work/src/bindings/"
rm -rf "$work/src/bindings/lua/build"* # nothing from a build of the checkout itself
# Debian's luarocks defaults to Lua 5.1.
if ! (cd "$work/src" && luarocks --lua-version 5.4 make --tree "$work/tree") > "$work/log" 2>&1; then
  cat "$work/log"
  exit 1
fi
tree=$work/tree
for file in lib/lua/5.4/nsalloc.so bin/nsalloc-lua; do
  [ -f "$tree/$file" ] || { echo "luarocks make did not install $file"; exit 1; }
done
# Only the module and the host: no SDK files in the rock tree.
if [ -e "$tree/include" ] || [ -e "$tree/share/nsalloc" ]; then
  echo "luarocks make installed the SDK into the rock tree"
  exit 1
fi
out=$(LUA_CPATH="$tree/lib/lua/5.4/?.so" lua5.4 -l nsalloc \
  -e 'local s = nsalloc.stats(); print(type(s) == "table" and s.in_use ~= nil)')
[ "$out" = "true" ] || { echo "lua5.4 -l nsalloc from the rock tree: '$out'"; exit 1; }
out=$("$tree/bin/nsalloc-lua" -e 'print(_VERSION)')
[ "$out" = "Lua 5.4" ] || { echo "nsalloc-lua from the rock tree: '$out'"; exit 1; }
echo "luarocks make: module and nsalloc-lua installed and working"
