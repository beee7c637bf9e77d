#!/bin/sh
# erlang.amalgamation_recipe: vendor the amalgamation and the glue into a copy
# of example/ exactly as docs/erlang.md tells a NIF author to, build it with
# its plain Makefile, check what the .so exports, and use it in a real VM.
# Usage: amalgamation_recipe.sh SOURCE_ROOT AMALGAMATION_DIR WORK_DIR ERL
set -eu
root=$1 amalgamation=$2 work=$3 erl=$4
binding=$root/bindings/erlang_nif
rm -rf "$work"
mkdir -p "$work"
cp -R "$binding/example/." "$work/"
mkdir -p "$work/c_src/nsalloc"
cp "$amalgamation/nsalloc.c" "$amalgamation/nsalloc.h" "$binding"/include/* "$binding"/src/*.c \
  "$binding"/src/*.h "$work/c_src/nsalloc/"
cp "$binding/src/nsalloc_nif.erl" "$work/src/"
make -C "$work" ERL="$erl" CFLAGS="-O2 -Wall -Wextra -Werror"

exports=$(nm -D --defined-only "$work/priv/nsalloc_example.so" | awk '{print $3}')
[ "$exports" = nif_init ] || { echo "unexpected exports: $exports" >&2; exit 1; }
grep -q "NSALLOC-ID:1 prefix=nsalloc_example_" "$work/priv/nsalloc_example.so"

"$erl" +SDio 4 -noshell -pa "$work/ebin" -eval '
try
    <<"nsalloc bundled from the amalgamation">> =
        nsalloc_example:join([<<"nsalloc">>, <<" bundled">>, <<" from the ">>, <<"amalgamation">>]),
    Big = binary:copy(<<"0123456789">>, 10000),
    Big = nsalloc_example:join([binary:part(Big, I * 100, 100) || I <- lists:seq(0, 999)]),
    #{prefix := <<"nsalloc_example_">>, in_use_blocks := 0} = nsalloc_example:nsalloc_stats(),
    #{normal := N} = nsalloc_nif:collect_all(nsalloc_example),
    N = erlang:system_info(schedulers_online),
    io:format("amalgamation recipe: ok~n"),
    halt(0)
catch Class:Reason:Stack ->
    io:format("~p~n", [{Class, Reason, Stack}]),
    halt(1)
end.'
