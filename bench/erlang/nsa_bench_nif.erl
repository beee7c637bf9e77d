%% nsa_bench_nif - stubs of bench_nif.c; each benchmark VM loads one build.
-module(nsa_bench_nif).
-export([init/1, churn/2, realloc_grow/2]).
-include("nsalloc_nif.hrl").

init(Path) -> erlang:load_nif(Path, #{}).

churn(_Iterations, _Seed) -> erlang:nif_error(nif_library_not_loaded).
realloc_grow(_Iterations, _Seed) -> erlang:nif_error(nif_library_not_loaded).
