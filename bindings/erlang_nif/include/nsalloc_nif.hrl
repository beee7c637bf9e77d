%% nsalloc_nif.hrl - for a module whose NIF library bundles nsalloc (C side:
%% NSALLOC_NIF_FUNCS in its ErlNifFunc table). Defines the NIF stubs and
%% nsalloc_collect_all/1, so include it after the module's attributes.
-export([nsalloc_stats/0, nsalloc_collect/1, nsalloc_collect_dirty/3, nsalloc_collect_all/1]).

nsalloc_stats() -> erlang:nif_error(nif_library_not_loaded).
nsalloc_collect(_Force) -> erlang:nif_error(nif_library_not_loaded).
nsalloc_collect_dirty(_Force, _Kind, _RoundCount) -> erlang:nif_error(nif_library_not_loaded).

%% Collect the copy's caches on every scheduler. The funs are local: called
%% from a process still running an old version of the module, they reach the
%% old version's library (drain it before purging the old code).
nsalloc_collect_all(Force) ->
    nsalloc_nif:collect_all(fun nsalloc_collect/1, fun nsalloc_collect_dirty/3, Force).
