%% nsa_demo - `make demo`'s BEAM scene: two NIF libraries, each bundling its
%% own nsalloc copy (prefixes nif_a_ and nif_b_), hammered together by 2000
%% processes on every normal and dirty scheduler; then each copy's stats map.
-module(nsa_demo).
-export([main/1]).

main([Dir]) ->
    Apis = [begin
                {module, M} = code:ensure_loaded(M),
                ok = M:init(filename:join([Dir, "priv", atom_to_list(M)]), #{}),
                M:api()
            end || M <- [nsa_t1, nsa_t3]],
    io:format("~p processes x ~p rounds over ~p normal, ~p dirty CPU and ~p dirty IO schedulers~n",
              [2000, 5, erlang:system_info(schedulers_online),
               erlang:system_info(dirty_cpu_schedulers_online),
               erlang:system_info(dirty_io_schedulers)]),
    Tally = nsa_workload:run(fun() -> Apis end, 2000, 5),
    io:format("results, each map checked term by term: ~p~n", [maps:without([first_errors], Tally)]),
    [io:format("~p stats: ~p~n", [Name, Stats()]) || #{name := Name, stats := Stats} <- Apis],
    %% Each thread keeps an empty page per size class it used: collect_all
    %% returns them, on every normal and dirty scheduler.
    [begin
         #{page_bytes := Before} = Stats(),
         Covered = CollectAll(true),
         #{page_bytes := After} = Stats(),
         io:format("~p collect_all on ~p: page_bytes ~p -> ~p~n", [Name, Covered, Before, After])
     end || #{name := Name, stats := Stats, collect_all := CollectAll} <- Apis],
    halt(case Tally of #{mismatch := 0, error := 0} -> 0; _ -> 1 end).
