%% nsalloc_nif - operator helpers for NIF libraries that bundle nsalloc.
%%
%% A copy caches memory per scheduler thread. Scheduler threads live as long
%% as the VM, so memory a scheduler's cache holds (pages whose blocks other
%% schedulers freed after work moved) is reclaimed only when that scheduler
%% allocates in the same size class again or collects. collect_all/1,3 run
%% the collection on every normal scheduler and every dirty scheduler.
-module(nsalloc_nif).
-export([collect_all/1, collect_all/3, stats/1]).

%% Collect (forced) the current version of Module's copy everywhere.
-spec collect_all(module()) -> #{normal | dirty_cpu | dirty_io => non_neg_integer()}.
collect_all(Module) -> Module:nsalloc_collect_all(true).

%% Returns how many threads of each kind were collected.
collect_all(Collect, CollectDirty, Force) ->
    #{normal => on_normal_schedulers(Collect, Force),
      dirty_cpu => on_dirty_schedulers(CollectDirty, Force, dirty_cpu,
                                       erlang:system_info(dirty_cpu_schedulers_online)),
      dirty_io => on_dirty_schedulers(CollectDirty, Force, dirty_io,
                                      erlang:system_info(dirty_io_schedulers))}.

-spec stats(module()) -> map().
stats(Module) -> Module:nsalloc_stats().

%% One process bound to each online scheduler ({scheduler, Id} is an
%% undocumented spawn option, hence the check that the call really ran there).
on_normal_schedulers(Collect, Force) ->
    Monitors = [spawn_opt(fun() -> exit(bound_collect(Collect, Force, Id)) end,
                          [{scheduler, Id}, monitor])
                || Id <- lists:seq(1, erlang:system_info(schedulers_online))],
    length([Ref || {_, Ref} <- Monitors, await(Ref) =:= collected]).

bound_collect(Collect, Force, Id) ->
    ok = Collect(Force),
    case erlang:system_info(scheduler_id) of
        Id -> collected;
        _ -> elsewhere
    end.

%% Count calls that wait for each other inside the NIF, so they occupy Count
%% distinct dirty threads; each reports how many had met.
on_dirty_schedulers(_CollectDirty, _Force, _Kind, 0) ->
    0;
on_dirty_schedulers(CollectDirty, Force, Kind, Count) ->
    Round = {erlang:unique_integer([positive]), Count},
    Monitors = [spawn_monitor(fun() -> exit(CollectDirty(Force, Kind, Round)) end)
                || _ <- lists:seq(1, Count)],
    lists:max([joined(await(Ref)) || {_, Ref} <- Monitors]).

joined({ok, Joined}) -> Joined;
joined(Other) -> erlang:error({collect_failed, Other}).

await(Ref) ->
    receive
        {'DOWN', Ref, process, _, Reason} -> Reason
    end.
