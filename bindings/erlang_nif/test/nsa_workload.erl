%% nsa_workload - the incident's workload, interleaved over NIF libraries.
%%
%% Processes call every library at random on normal, dirty CPU and dirty IO
%% schedulers: build maps from realloc-grown term arrays (map_from_pairs),
%% grow 24-byte-element vectors from 48 bytes with pushes that each run on a
%% random kind of scheduler, then hand each vector to a fresh process that
%% turns it into a map and frees it (or drops it, leaving it to the resource
%% destructor) wherever it runs. Every map is compared term by term (=:=)
%% with the map built in Erlang.
-module(nsa_workload).
-export([run/3, start/3, stop/1, settle/1]).

-define(KINDS, {normal, dirty_cpu, dirty_io}).

%% run(ApiSource, Processes, Rounds) -> Tally (see tally/1).
%% ApiSource() runs in each worker and returns the library APIs (Module:api()
%% maps) it calls, so the caller never holds funs of an old module version.
run(ApiSource, Processes, Rounds) ->
    stop(start(ApiSource, Processes, Rounds)).

%% Workers run Rounds rounds (infinity: until stop/1). Returns once every
%% worker has obtained its APIs.
start(ApiSource, Processes, Rounds) ->
    Parent = self(),
    Workers = [spawn_monitor(fun() -> worker(Parent, ApiSource, Rounds) end)
               || _ <- lists:seq(1, Processes)],
    [receive {ready, Pid} -> ok end || {Pid, _} <- Workers],
    Workers.

stop(Workers) ->
    [Pid ! stop || {Pid, _} <- Workers],
    Results = [await_worker(Ref) || {_, Ref} <- Workers],
    Handoffs = lists:sum([maps:get(handoffs, R, 0) || R <- Results]),
    HandoffVerdicts = [receive {handoff, V} -> V after 30000 -> {error, handoff_lost} end
                       || _ <- lists:seq(1, Handoffs)],
    tally(lists:append([maps:get(verdicts, R) || R <- Results]) ++ HandoffVerdicts,
          lists:usort(lists:append([maps:get(schedulers, R, []) || R <- Results]))).

%% Once the workload is over: collect every copy on every scheduler, then wait
%% until the destructors of dropped vectors have run. Returns each copy's stats.
settle(Apis) ->
    [settle_one(Api, 100) || Api <- Apis].

settle_one(#{stats := Stats, collect_all := CollectAll} = Api, Tries) ->
    CollectAll(true),
    case Stats() of
        #{in_use_blocks := 0} = S -> S;
        S when Tries =:= 0 -> S;
        _ -> timer:sleep(50), settle_one(Api, Tries - 1)
    end.

await_worker(Ref) ->
    receive
        {'DOWN', Ref, process, _, #{verdicts := _} = Result} -> Result;
        {'DOWN', Ref, process, _, Crash} -> #{verdicts => [{error, {worker, Crash}}]}
    end.

worker(Parent, ApiSource, Rounds) ->
    Libs = list_to_tuple(ApiSource()),
    Parent ! {ready, self()},
    rounds(Parent, Libs, Rounds, [], 0, []).

%% A finite run ignores stop until its rounds are done; infinity runs until stop.
rounds(Parent, Libs, Rounds, Verdicts, Handoffs, Schedulers) ->
    case Rounds =:= 0 orelse (Rounds =:= infinity andalso stop_requested()) of
        true ->
            Rounds =:= infinity orelse receive stop -> ok end,
            exit(#{verdicts => Verdicts, handoffs => Handoffs, schedulers => Schedulers});
        false ->
            Api = element(rand:uniform(tuple_size(Libs)), Libs),
            Map = attempt(fun() -> map_round(Api) end),
            Vec = attempt(fun() -> vec_round(Parent, Api) end),
            {VecVerdicts, Handed} = case Vec of handed_off -> {[], 1}; _ -> {[Vec], 0} end,
            Scheduler = erlang:system_info(scheduler_id),
            rounds(Parent, Libs, decrement(Rounds), [Map | VecVerdicts ++ Verdicts],
                   Handoffs + Handed, lists:usort([Scheduler | Schedulers]))
    end.

stop_requested() ->
    receive stop -> true after 0 -> false end.

decrement(infinity) -> infinity;
decrement(N) -> N - 1.

%% 3..12 pairs: the term arrays start at 6 (48 bytes) and grow to 12 (96).
map_round(#{map_from_pairs := MapFromPairs}) ->
    Pairs = pairs(2 + rand:uniform(10)),
    verdict(MapFromPairs(Pairs, kind()), maps:from_list(Pairs)).

%% 3..12 pushes, each on a random kind of scheduler: 48 -> 96 -> 192 bytes.
vec_round(Parent, #{vec_new := New, vec_push := Push, vec_to_map := ToMap, vec_free := Free}) ->
    Salt = rand:uniform(1 bsl 30) bsl 8,
    KVs = [{Salt + I, rand:uniform(1 bsl 40)} || I <- lists:seq(1, 2 + rand:uniform(10))],
    Vec = New(kind()),
    [ok = Push(Vec, K, V, kind()) || {K, V} <- KVs],
    Expected = maps:from_list(KVs),
    spawn(fun() ->
                  Verdict = attempt(fun() ->
                                            V = verdict(ToMap(Vec, kind()), Expected),
                                            rand:uniform(2) =:= 1 andalso Free(Vec, kind()),
                                            V
                                    end),
                  Parent ! {handoff, Verdict}
          end),
    handed_off.

kind() -> element(rand:uniform(tuple_size(?KINDS)), ?KINDS).

%% Unique keys of several term types (immediate and boxed), mixed values.
pairs(N) ->
    Salt = rand:uniform(1 bsl 20),
    [{key(I rem 4, I, Salt), value(I rem 3, I, Salt)} || I <- lists:seq(1, N)].

key(0, I, _) -> I;
key(1, I, _) -> list_to_atom("key" ++ integer_to_list(I));
key(2, I, Salt) -> <<"key", I:8, Salt:32>>;
key(3, I, Salt) -> {I, Salt}.

value(0, I, Salt) -> [I, Salt];
value(1, _, Salt) -> <<Salt:64>>;
value(2, I, Salt) -> I * Salt.

verdict(Map, Expected) when is_map(Map) ->
    case Map =:= Expected of
        true -> ok;
        false -> mismatch
    end;
verdict({mismatch, _}, _) -> mismatch;
verdict(Other, _) -> {error, {unexpected, Other}}.

attempt(Fun) ->
    try Fun()
    catch Class:Reason -> {error, {Class, Reason}}
    end.

tally(Verdicts, Schedulers) ->
    Errors = [E || {error, E} <- Verdicts],
    #{ok => length([ok || ok <- Verdicts]),
      mismatch => length([m || mismatch <- Verdicts]),
      error => length(Errors),
      first_errors => lists:sublist(Errors, 3),
      schedulers => Schedulers}.
