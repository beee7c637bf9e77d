#!/bin/sh
# make demo: show what nsalloc is for, one scene per component.
# Usage: scripts/demo.sh BUILD_DIR
set -eu
build=$(cd "${1:-build}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
scene() { printf '\n==== %s ====\n' "$1"; }

scene "Private copies in one process, a foreign pointer caught, stats"
"$build/tests/demo/nsalloc-demo" $(cat "$build/tests/demo/modules.txt")
# scenes
scene "CPython: nsalloc-python, a late install wrapping pymalloc, two copies chained"
"$build/bindings/python/nsalloc-python" "$root/bindings/python/demo.py" "$build/bindings/python/modules"
if [ -x "$build/bindings/erlang_nif/demo.sh" ]; then
  scene "BEAM: two NIF libraries, each bundling its own copy, hammering one VM; stats maps"
  "$build/bindings/erlang_nif/demo.sh"
fi
scene "Isolation: every artifact kind's exports, TLS model and verdict"
"$build/isolation_checks/isolation-summary.sh"
scene "Lua: a state on its own nsalloc heap hits its memory limit and recovers"
LUA_CPATH="$build/bindings/lua/modules/?.so" "$build/bindings/lua/nsalloc-lua" --limit=4M --stats \
  "$root/bindings/lua/demo.lua"
scene "nsalloc-audit: bundled allocators in the demo's artifacts and one unsafe fixture"
sh "$root/isolation_checks/audit/demo.sh" "$build"
