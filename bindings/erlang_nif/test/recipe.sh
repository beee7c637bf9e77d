#!/bin/sh
# erlang.recipe.*: builds a clean copy of example/ with one of the recipes of
# docs/erlang.md, exactly as a NIF author runs it, uses the library in a real
# VM, then checks its shape with iso-shape (only nif_init exported, the copy's
# ID record matching its prefix, visibility and TLS model).
# Usage: recipe.sh make|rebar3|mix|cmake SOURCE_ROOT AMALGAMATION_DIR WORK_DIR ERL ISO_SHAPE
# The make recipe compiles with $CC.
set -eu
recipe=$1 root=$2 amalgamation=$3 work=$4 erl=$5 iso_shape=$6
binding=$root/bindings/erlang_nif
rm -rf "$work"
mkdir -p "$work"
cp -R "$binding/example/." "$work/"
# Offline: empty rebar3 and mix homes, no hex. The example has no dependency,
# so a recipe that tried to fetch one would fail here.
export REBAR_GLOBAL_CONFIG_DIR="$work/.home" REBAR_CACHE_DIR="$work/.home" MIX_HOME="$work/.home"
export HEX_OFFLINE=1 CFLAGS="-O2 -Wall -Wextra -Werror"

# What the Makefile recipes vendor: the amalgamation and the glue.
vendor() {
  mkdir -p "$work/c_src/nsalloc"
  cp "$amalgamation/nsalloc.c" "$amalgamation/nsalloc.h" "$binding"/include/* "$binding"/src/*.c \
    "$binding"/src/*.h "$binding"/src/*.exs "$work/c_src/nsalloc/"
  cp "$binding/src/nsalloc_nif.erl" "$work/src/"
}

case $recipe in
make)
  vendor
  make -C "$work" ERL="$erl"
  app=$work ;;
rebar3)
  vendor
  (cd "$work" && rebar3 compile)
  app=$work/_build/default/lib/nsalloc_example ;;
mix)
  vendor
  (cd "$work" && mix compile)
  app=$work/_build/dev/lib/nsalloc_example ;;
cmake)
  cmake -S "$work" -B "$work/build" -DNSALLOC_DIR="$root" -DCMAKE_C_FLAGS="$CFLAGS"
  cmake --build "$work/build"
  app=$work/build ;;
*)
  echo "recipe.sh: unknown recipe $recipe" >&2
  exit 2 ;;
esac

"$erl" +SDio 4 -noshell -pa "$app/ebin" -eval '
try
    <<"nsalloc bundled in a NIF">> =
        nsalloc_example:join([<<"nsalloc">>, <<" bundled">>, <<" in a ">>, <<"NIF">>]),
    Big = binary:copy(<<"0123456789">>, 10000),
    Big = nsalloc_example:join([binary:part(Big, I * 100, 100) || I <- lists:seq(0, 999)]),
    #{prefix := <<"nsalloc_example_">>, in_use_blocks := 0} = nsalloc_example:nsalloc_stats(),
    #{normal := N} = nsalloc_nif:collect_all(nsalloc_example),
    N = erlang:system_info(schedulers_online),
    io:format("~s recipe: the library works in the VM~n", [hd(init:get_plain_arguments())]),
    halt(0)
catch Class:Reason:Stack ->
    io:format("~p~n", [{Class, Reason, Stack}]),
    halt(1)
end.' -extra "$recipe"

"$iso_shape" --kind module --prefix nsalloc_example_ --entry nif_init "$app/priv/nsalloc_example.so"
