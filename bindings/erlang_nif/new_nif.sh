#!/bin/sh
# new_nif.sh NAME DIR - add a NIF library that bundles a private nsalloc copy to
# a project, everything named after NAME (docs/erlang.md, "A new NIF"):
#   DIR with mix.exs       (mix new): Elixir module lib/NAME.ex (NAME in
#                          CamelCase, `use NsallocNif`), test/NAME_test.exs;
#                          mix.exs gets the nsalloc_nif compiler.
#   DIR with rebar.config  (rebar3 new lib|app): Erlang module src/NAME.erl,
#                          test/NAME_tests.erl (eunit); rebar.config gets the
#                          pre_hooks entry that runs `make nif`.
#   DIR absent or empty    a plain project built by `make`: src/NAME.erl.
# In each: c_src/NAME_nif.c (the example's join/1: edit it), the Makefile
# (NIF_NAME := NAME; the prefix NAME_ and the library priv/NAME.so follow),
# and the vendored nsalloc: the amalgamation and the glue in c_src/nsalloc/,
# nsalloc_nif.erl in src/, nsalloc_nif.hrl in include/ (Erlang) or
# nsalloc_nif.ex in lib/ (Elixir). Nothing is overwritten: the script checks
# every file it would write (and every edit) before writing any.
set -eu
usage() {
  echo "usage: new_nif.sh NAME DIR  (NAME: lower case letters, digits and _, e.g. my_nif)" >&2
  exit 2
}
[ $# -eq 2 ] || usage
name=$1 dir=$2
binding=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$(dirname "$binding")")
example=$binding/example

# NAME is an Erlang atom, a C identifier part, a file name and (camelized) an
# Elixir alias: words of lower case letters and digits joined by single _.
if ! printf '%s\n' "$name" | grep -Eq '^[a-z][a-z0-9]*(_[a-z0-9]+)*$' || [ ${#name} -gt 64 ]; then
  echo "new_nif.sh: bad NAME '$name'" >&2
  usage
fi
fail() {
  echo "new_nif.sh: $*; nothing written" >&2
  exit 1
}

if [ -f "$dir/mix.exs" ]; then
  kind=mix
elif [ -f "$dir/rebar.config" ]; then
  kind=rebar3
elif [ ! -e "$dir" ] || [ -z "$(ls -A "$dir")" ]; then
  kind=make
else
  fail "$dir has neither mix.exs nor rebar.config and is not empty"
fi
module=$name
if [ $kind = mix ]; then
  module=$(printf '%s\n' "$name" | awk -F_ '{ for (i = 1; i <= NF; i++) printf "%s", toupper(substr($i, 1, 1)) substr($i, 2) }')
fi

# What will be written, checked first.
files="Makefile c_src/${name}_nif.c c_src/nsalloc src/nsalloc_nif.erl"
case $kind in
mix) files="$files lib/$name.ex lib/nsalloc_nif.ex test/${name}_test.exs" ;;
rebar3) files="$files src/$name.erl include/nsalloc_nif.hrl test/${name}_tests.erl" ;;
make) files="$files src/$name.erl include/nsalloc_nif.hrl" ;;
esac
for file in $files; do
  [ ! -e "$dir/$file" ] || fail "$dir/$file exists"
done
case $kind in
mix)
  [ "$(grep -c '^ *app: :[a-z0-9_]*,$' "$dir/mix.exs")" = 1 ] ||
    fail "$dir/mix.exs: no single 'app: :name,' line to add the compiler after"
  ! grep -q 'compilers:' "$dir/mix.exs" ||
    fail "$dir/mix.exs already sets compilers: add [:nsalloc_nif] to them by hand"
  ;;
rebar3)
  ! grep -q pre_hooks "$dir/rebar.config" ||
    fail "$dir/rebar.config already has pre_hooks: add {compile, \"make nif\"} by hand"
  ;;
esac

mkdir -p "$dir/c_src/nsalloc" "$dir/src"
cmake -DCORE_DIR="$root/core" -DINCLUDE_DIR="$root/sdk/include" -DOUT_DIR="$dir/c_src/nsalloc" \
  -P "$root/cmake/Amalgamate.cmake"
cp "$binding"/include/*.h "$binding"/src/*.c "$binding"/src/*.h "$dir/c_src/nsalloc/"
cp "$binding/src/nsalloc_nif.erl" "$dir/src/"
sed "s/^NIF_NAME       := nsalloc_example$/NIF_NAME       := $name/" "$example/Makefile" >"$dir/Makefile"
# ERL_NIF_INIT names the module: NAME, or Elixir.<alias> for an Elixir module.
erl_module=$module
[ $kind != mix ] || erl_module=Elixir.$module
sed -e "s/^ERL_NIF_INIT(nsalloc_example,/ERL_NIF_INIT($erl_module,/" -e "s/nsalloc_example/$name/g" \
  "$example/c_src/nsalloc_example_nif.c" >"$dir/c_src/${name}_nif.c"

if [ $kind = mix ]; then
  cp "$binding/src/nsalloc_nif_compiler.exs" "$dir/c_src/nsalloc/"
  mkdir -p "$dir/lib" "$dir/test"
  cp "$binding/src/nsalloc_nif.ex" "$dir/lib/"
  sed -i -e '1i Code.require_file("c_src/nsalloc/nsalloc_nif_compiler.exs", __DIR__)\n' \
    -e 's/^\( *\)\(app: :[a-z0-9_]*,\)$/\1\2\n\1compilers: [:nsalloc_nif] ++ Mix.compilers(),/' \
    "$dir/mix.exs"
  cat >"$dir/lib/$name.ex" <<EOF
defmodule $module do
  @moduledoc "A NIF library (c_src/${name}_nif.c) bundling a private nsalloc copy."
  use NsallocNif, library: "$name"

  @doc "Concatenates binaries in a buffer grown with nsalloc_realloc."
  @spec join([binary()]) :: binary()
  def join(_parts), do: :erlang.nif_error(:nif_library_not_loaded)
end
EOF
  cat >"$dir/test/${name}_test.exs" <<EOF
defmodule ${module}Test do
  use ExUnit.Case

  test "the NIF library is loaded and uses its own nsalloc copy" do
    assert $module.join(["nsalloc", " in ", "$name"]) == "nsalloc in $name"
    big = :binary.copy("0123456789", 10_000)
    assert $module.join(for i <- 0..999, do: :binary.part(big, i * 100, 100)) == big
    assert %{prefix: "${name}_", in_use_blocks: 0} = $module.nsalloc_stats()
    assert %{normal: normal} = $module.nsalloc_collect_all(true)
    assert normal == :erlang.system_info(:schedulers_online)
  end
end
EOF
else
  mkdir -p "$dir/include"
  cp "$binding/include/nsalloc_nif.hrl" "$dir/include/"
  sed "s/nsalloc_example/$name/g" "$example/src/nsalloc_example.erl" >"$dir/src/$name.erl"
fi
if [ $kind = rebar3 ]; then
  # A newline first: rebar3 new writes the file without a final one.
  printf '\n%s\n' '{pre_hooks, [{compile, "make nif"}]}.' >>"$dir/rebar.config"
  mkdir -p "$dir/test"
  cat >"$dir/test/${name}_tests.erl" <<EOF
-module(${name}_tests).
-include_lib("eunit/include/eunit.hrl").

join_test() ->
    ?assertEqual(<<"nsalloc in $name">>, $name:join([<<"nsalloc">>, <<" in ">>, <<"$name">>])),
    Big = binary:copy(<<"0123456789">>, 10000),
    ?assertEqual(Big, $name:join([binary:part(Big, I * 100, 100) || I <- lists:seq(0, 999)])).

stats_test() ->
    ?assertMatch(#{prefix := <<"${name}_">>, in_use_blocks := 0}, $name:nsalloc_stats()),
    #{normal := Normal} = nsalloc_nif:collect_all($name),
    ?assertEqual(erlang:system_info(schedulers_online), Normal).
EOF
fi
echo "new_nif.sh: $kind project $dir: NIF $name (module $module, prefix ${name}_, priv/$name.so)"
