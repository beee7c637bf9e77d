#!/bin/sh
# erlang.new_project.*: the steps of docs/erlang.md "A new NIF", literally: a
# fresh `rebar3 new lib demo` or `mix new demo`, then
# `new_nif.sh demo_nif demo`, then the project's own tests (`rebar3 eunit`,
# `mix test`), which load the library and call it and its nsalloc functions.
# Offline: empty rebar3 and mix homes, HEX_OFFLINE=1, nothing fetched.
#   mix_without_stubs  negative control: the generated Elixir module with
#                      `use NsallocNif` replaced by a bare on_load that loads
#                      the same library (the Elixir module): mix test
#                      must fail, the load refused with {:bad_lib, ...
#                      nsalloc_stats/0}.
# Usage: new_project.sh rebar3|mix|mix_without_stubs SOURCE_ROOT WORK_DIR
set -eu
kind=$1 root=$2 work=$3
rm -rf "$work"
mkdir -p "$work/.home"
export REBAR_GLOBAL_CONFIG_DIR="$work/.home" REBAR_CACHE_DIR="$work/.home" MIX_HOME="$work/.home"
export HEX_OFFLINE=1 CFLAGS="-O2 -Wall -Wextra -Werror"
cd "$work"

case $kind in
rebar3)
  rebar3 new lib demo
  "$root/bindings/erlang_nif/new_nif.sh" demo_nif demo
  cd demo && rebar3 eunit ;;
mix)
  mix new demo
  "$root/bindings/erlang_nif/new_nif.sh" demo_nif demo
  cd demo && mix test ;;
mix_without_stubs)
  mix new demo
  "$root/bindings/erlang_nif/new_nif.sh" demo_nif demo
  cd demo
  sed -i 's/^  use NsallocNif, library: "demo_nif"$/  @on_load :load_nif\
  def load_nif, do: :erlang.load_nif(:filename.join(:code.priv_dir(:demo), ~c"demo_nif"), 0)/' \
    lib/demo_nif.ex
  grep -q 'def load_nif' lib/demo_nif.ex
  if mix test >../mix_test.log 2>&1; then
    cat ../mix_test.log
    echo "new_project.sh: mix test passed without the stubs of use NsallocNif" >&2
    exit 1
  fi
  cat ../mix_test.log
  grep -q 'bad_lib.*nsalloc_stats/0' ../mix_test.log
  echo "new_project.sh: without use NsallocNif the library is refused (bad_lib, nsalloc_stats/0)" ;;
*)
  echo "new_project.sh: unknown kind $kind" >&2
  exit 2 ;;
esac
