#!/bin/sh
# runtime_hosts.sh TOOL FIXTURES WORK
#
# Roles and families from strong evidence. An executable that embeds a
# language runtime (it defines luaopen_*, PyInit_* or nif_init itself) is a
# host, not an extension module; names a program gives its own helpers
# (redis's mallctl_int) are no allocator's signature. First on a fixture
# shaped like Debian's redis-server (always built), with the same code as a
# shared object as the control that modules are still recognised; then on
# the Debian executables and libraries that embed runtimes, each skipped
# when it is not installed: no high finding where nothing is duplicated,
# while two modules that do bundle jemalloc are still a high finding.
set -u
. "$(dirname "$0")/checks.sh"
tool=$1 fixtures=$2 work=$3

rm -rf "$work"
mkdir -p "$work"
cd "$fixtures" || exit 1

"$tool" host_embeds_lua >"$work/host.txt" 2>&1
status=$?
expect_status 0 "a redis-like host loading libjemalloc.so.2: exit 0"
expect_no_match "$work/host.txt" "host VM:" "an executable defining luaopen_base is no Lua module"
expect_no_match "$work/host.txt" "^  \[high\]" "no high finding"
# The first "allocators:" line is the host's own; libjemalloc.so.2 follows.
expect_match "$work/host.txt" "  allocators via DT_NEEDED: jemalloc, interposer" \
  "jemalloc is what it loads through DT_NEEDED"
sed -n '2,/^$/p' "$work/host.txt" >"$work/host-own.txt"
expect_line "$work/host-own.txt" "  allocators: none" "mallctl_int and mallctl_string are not jemalloc"

# Controls: the same code as a shared object is a Lua module, and two
# modules bundling jemalloc are still a high finding.
"$tool" lua_module_mallctl.so >"$work/module.txt" 2>&1
expect_line "$work/module.txt" "  host VM: Lua module (entry point luaopen_base)" \
  "control: the same code as a shared object is a Lua module"
"$tool" host_embeds_lua nif_jemalloc_a.so nif_jemalloc_b.so >"$work/duplicated.txt" 2>&1
expect_match "$work/duplicated.txt" "  \[high\] duplicate-family: jemalloc is bundled in [0-9]+ artifacts: .*" \
  "control: a real duplicate beside the host is a high finding"

# Debian's runtime hosts and the modules they load, audited together with
# what they need through DT_NEEDED.
corpus=""
for path in /usr/bin/redis-check-rdb /usr/bin/redis-cli /usr/bin/redis-benchmark \
  /usr/lib/postgresql/*/bin/postgres /usr/lib/postgresql/*/lib/plpgsql.so \
  /usr/lib/postgresql/*/lib/plpython3.so /usr/sbin/nginx /usr/bin/python3.[0-9]* \
  /usr/lib/python3.*/lib-dynload /usr/lib/erlang/erts-*/bin/beam.smp \
  /usr/lib/erlang/lib/crypto-*/priv/lib/crypto.so /usr/bin/lua5.4 \
  /usr/lib/x86_64-linux-gnu/lua/5.4 /usr/bin/node /usr/bin/vim.basic; do
  if [ -e "$path" ]; then
    corpus="$corpus $path"
  else
    echo "skip: $path is not installed"
  fi
done
if [ -n "$corpus" ]; then
  # shellcheck disable=SC2086
  "$tool" $corpus >"$work/corpus.txt" 2>&1
  expect_no_match "$work/corpus.txt" "^  \[high\]" "Debian's runtime hosts:$corpus: no high finding"
  "$tool" $corpus nif_jemalloc_a.so nif_jemalloc_b.so >"$work/corpus-control.txt" 2>&1
  expect_match "$work/corpus-control.txt" "  \[high\] duplicate-family: jemalloc .*" \
    "control: the same corpus plus two jemalloc NIFs has a high finding"
else
  echo "skip: none of Debian's runtime hosts is installed"
fi
checks_done
