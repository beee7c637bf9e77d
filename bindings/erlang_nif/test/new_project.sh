#!/bin/sh
# erlang.new_project.*: the steps of docs/erlang.md "A new NIF", literally: a
# fresh `rebar3 new lib demo` or `mix new demo`, then
# `new_nif.sh demo_nif demo`, then the project's own tests (`rebar3 eunit`,
# `mix test`), which load the library and call it and its nsalloc functions.
# Offline: empty rebar3 and mix homes, HEX_OFFLINE=1, nothing fetched.
#   mix_without_stubs  negative control: the generated Elixir module with
#                      `use NsallocNif` replaced by a bare on_load that loads
#                      the same library (the issue's Elixir module): mix test
#                      must fail, the load refused with {:bad_lib, ...
#                      nsalloc_stats/0}.
#   make               new_nif.sh into an absent DIR: a plain make project.
#   refusals           bad names, a non-project DIR and a second run are
#                      refused with a message, and nothing is written.
# Usage: new_project.sh rebar3|mix|mix_without_stubs|make|refusals SOURCE_ROOT WORK_DIR
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
make)
  "$root/bindings/erlang_nif/new_nif.sh" demo_nif demo
  make -C demo
  erl -noshell -pa demo/ebin -eval '
    <<"nsalloc in demo_nif">> = demo_nif:join([<<"nsalloc">>, <<" in ">>, <<"demo_nif">>]),
    #{prefix := <<"demo_nif_">>, in_use_blocks := 0} = demo_nif:nsalloc_stats(),
    io:format("make project: demo_nif works~n"), halt().' ;;
refusals)
  # Hostile input: each call fails with a message and writes nothing.
  refused() {
    if "$root/bindings/erlang_nif/new_nif.sh" "$@" 2>refusal.log; then
      echo "new_project.sh: new_nif.sh $* succeeded" >&2
      exit 1
    fi
    cat refusal.log
  }
  for bad in Demo 1demo demo-nif demo__nif 'demo;rm' "" demo_; do
    refused "$bad" fresh
    [ ! -e fresh ]
  done
  mkdir other && touch other/README
  refused demo_nif other
  [ "$(ls other)" = README ]
  # A project with a file new_nif.sh would write, or edits it cannot make.
  mkdir proj && printf '{deps, []}.\n' >proj/rebar.config && touch proj/Makefile
  refused demo_nif proj
  grep -q 'proj/Makefile exists; nothing written' refusal.log
  rm proj/Makefile && printf '{pre_hooks, []}.\n' >>proj/rebar.config
  refused demo_nif proj
  grep -q 'already has pre_hooks' refusal.log
  [ "$(ls proj)" = rebar.config ] && [ "$(wc -l <proj/rebar.config)" = 2 ]
  mkdir mixproj && printf '[\n  app: :demo,\n  compilers: [:x]\n]\n' >mixproj/mix.exs
  refused demo_nif mixproj
  grep -q 'already sets compilers' refusal.log
  [ "$(ls mixproj)" = mix.exs ] && [ "$(wc -l <mixproj/mix.exs)" = 4 ]
  echo "new_project.sh: every refusal wrote nothing" ;;
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
