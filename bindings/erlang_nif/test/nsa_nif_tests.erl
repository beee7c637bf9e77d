%% nsa_nif_tests - EUnit tests of NIF libraries bundling nsalloc, in a real VM.
%% Run one with `erl ... -nsa_dir <build dir> -run nsa_run main <name>`
%% (ctest does, with 4 normal, 4 dirty CPU and 4 dirty IO schedulers).
-module(nsa_nif_tests).
-export([load_bad_options/0]).
-include_lib("eunit/include/eunit.hrl").

-define(MIB, (1 bsl 20)).

%% ---- the incident's workload over several copies ---------------------------

two_same_prefix_test_() ->
    {timeout, 60, fun() -> interleave([nsa_t1, nsa_t2], 2000, 10) end}.

two_distinct_prefix_test_() ->
    {timeout, 60, fun() -> interleave([nsa_t1, nsa_t3], 2000, 10) end}.

eight_test_() ->
    {timeout, 115, fun() -> interleave([nsa_t1, nsa_t2, nsa_t3, nsa_t4, nsa_t5, nsa_t6, nsa_t7,
                                        nsa_t8], 2000, 16) end}.

interleave(Modules, Processes, Rounds) ->
    Apis = [load(M, #{}) || M <- Modules],
    Tally = nsa_workload:run(fun() -> Apis end, Processes, Rounds),
    ?debugFmt("~p libraries: ~p", [length(Modules), Tally]),
    ?assertMatch(#{mismatch := 0, error := 0}, Tally),
    ?assertEqual(2 * Processes * Rounds, maps:get(ok, Tally)),
    ?assertEqual(lists:seq(1, erlang:system_info(schedulers_online)), maps:get(schedulers, Tally)),
    %% Every copy was used on every normal and dirty scheduler thread: it has
    %% one heap per thread that allocated.
    Threads = erlang:system_info(schedulers_online) +
        erlang:system_info(dirty_cpu_schedulers_online) + erlang:system_info(dirty_io_schedulers),
    [?assertEqual(Threads, Heaps) || #{heaps := Heaps} <- [(maps:get(stats, Api))() || Api <- Apis]],
    Settled = nsa_workload:settle(Apis),
    [?assertMatch(#{in_use_blocks := 0, foreign_pointers := 0, invalid_pointers := 0}, S)
     || S <- Settled],
    Prefixes = [P || #{prefix := P} <- Settled],
    ?debugFmt("prefixes ~p, peak page bytes ~p",
              [Prefixes, [P || #{peak_page_bytes := P} <- Settled]]).

%% The same workload, same parameters, against two libraries built with the
%% incident's allocator (incident_standin.c: private block registries, one
%% shared TLS slot) must find corrupted vectors - and against two nsalloc
%% copies none. Proves the workload can fail.
negative_control_test_() ->
    {timeout, 60, fun negative_control/0}.

negative_control() ->
    Broken = [load(M, #{}) || M <- [nsa_x1, nsa_x2]],
    BrokenTally = nsa_workload:run(fun() -> Broken end, 500, 10),
    ?debugFmt("incident allocator: ~p", [BrokenTally]),
    ?assert(maps:get(mismatch, BrokenTally) > 0),
    ?assertMatch(#{error := 0}, BrokenTally),
    Sound = [load(M, #{}) || M <- [nsa_t1, nsa_t2]],
    SoundTally = nsa_workload:run(fun() -> Sound end, 500, 10),
    ?debugFmt("nsalloc copies: ~p", [SoundTally]),
    ?assertMatch(#{mismatch := 0, error := 0, ok := 10000}, SoundTally).

%% ---- lifecycle: hot upgrade, purge, unload, reload ---------------------------

upgrade_test_() ->
    {timeout, 60, fun upgrade/0}.

upgrade() ->
    Base = erlang:memory(system),
    %% v1 (nsa_up_v1.so), with resources and processes that keep using it.
    load_upgrade_beam(1),
    ok = nsa_up:init(upgrade_so(v1), info(sink(v1))),
    V1Workers = nsa_workload:start(fun() -> [nsa_up:api()] end, 200, infinity),
    {Session, Holder} = v1_session(),
    %% v2: another file (another copy, same prefix) while v1 keeps running.
    load_upgrade_beam(2),
    ok = nsa_up:init(upgrade_so(v2), info(sink(v2))),
    ?assertEqual(2, nsa_up:vsn()),
    ?assertMatch(#{mismatch := 0, error := 0, ok := 2000},
                 nsa_workload:run(fun() -> [nsa_up:api()] end, 500, 2)),
    %% A v1 resource is not v2's: resource types are private to a file.
    Holder ! {try_current, self()},
    ?assertEqual({error, badarg}, receive {tried, R} -> R end),
    V1Tally = nsa_workload:stop(V1Workers),
    ?debugFmt("v1 processes during the upgrade: ~p", [V1Tally]),
    ?assertMatch(#{mismatch := 0, error := 0}, V1Tally),
    ?assert(maps:get(ok, V1Tally) > 0),
    %% Drain v1's caches from old code, then purge: unload waits for v1's
    %% resources (their destructor is v1's code), then gives everything back.
    Session ! {drain, self()},
    ?assertMatch(#{normal := 4, dirty_cpu := 4, dirty_io := 4},
                 receive {drained, Covered} -> Covered end),
    ?assert(code:soft_purge(nsa_up)),
    ?assertEqual(none, unloaded(v1, 300)),
    Holder ! release,
    ?assertMatch(#{in_use_blocks := 0, retained_bytes := 0}, unloaded(v1, 5000)),
    %% v3 loads v2's file again: the same copy, shared by two instances.
    load_upgrade_beam(3),
    ok = nsa_up:init(upgrade_so(v2), info(sink(v3))),
    ?assert(code:soft_purge(nsa_up)),
    ?assertEqual(none, unloaded(v3, 300)),
    ?assertMatch(#{mismatch := 0, error := 0, ok := 2000},
                 nsa_workload:run(fun() -> [nsa_up:api()] end, 500, 2)),
    delete_upgrade_module(),
    ?assertMatch(#{in_use_blocks := 0, retained_bytes := 0}, unloaded(v3, 5000)),
    %% Reload v1's file: a fresh copy.
    load_upgrade_beam(1),
    ok = nsa_up:init(upgrade_so(v1), info(sink(v4))),
    ?assertMatch(#{mismatch := 0, error := 0, ok := 2000},
                 nsa_workload:run(fun() -> [nsa_up:api()] end, 500, 2)),
    delete_upgrade_module(),
    ?assertMatch(#{in_use_blocks := 0, retained_bytes := 0}, unloaded(v4, 5000)),
    Growth = memory_growth_settled(Base, 8 * ?MIB, 50),
    ?debugFmt("erlang:memory(system) growth over the whole upgrade test: ~p bytes", [Growth]),
    ?assert(Growth < 8 * ?MIB).

%% 30 hot upgrades under source => beam, alternating the two files, each copy
%% used on every kind of scheduler and then purged: VmRSS must come back near
%% where it started. Each freed segment is an ERTS carrier that mseg_alloc
%% keeps in its cache, invisible to erlang:memory(); before the glue dropped
%% the segment's pages on free, 30 upgrades left VmRSS about 22 MiB higher
%% (200 upgrades: 35 MiB), against 3 to 6 MiB now, as under mmap.
upgrade_rss_test_() ->
    {timeout, 120, fun upgrade_rss/0}.

upgrade_rss() ->
    Before = vm_rss(),
    lists:foreach(fun(I) ->
                          load_upgrade_beam(1 + I rem 3),
                          File = lists:nth(1 + I rem 2, [v1, v2]),
                          ok = nsa_up:init(upgrade_so(File), #{nsalloc => #{source => beam}}),
                          ?assertMatch(#{mismatch := 0, error := 0},
                                       nsa_workload:run(fun() -> [nsa_up:api()] end, 100, 2)),
                          #{hold := Hold, release := Release} = nsa_up:api(),
                          Release(Hold(2000, 1000, normal), normal),
                          true = code:soft_purge(nsa_up)
                  end, lists:seq(1, 30)),
    delete_upgrade_module(),
    erlang:garbage_collect(),
    Growth = vm_rss() - Before,
    ?debugFmt("VmRSS growth after 30 upgrades under source => beam: ~p KiB", [Growth div 1024]),
    ?assert(Growth < 12 * ?MIB).

vm_rss() ->
    {ok, Status} = file:read_file("/proc/self/status"),
    {match, [KiB]} = re:run(Status, "VmRSS:\\s+(\\d+) kB", [{capture, all_but_first, binary}]),
    binary_to_integer(KiB) * 1024.

%% A process running v1 code: makes v1 vectors and hands them to a holder
%% (which keeps only the resources, no v1 code), then drains v1 on request.
v1_session() ->
    Self = self(),
    spawn(fun() ->
                  #{vec_new := New, vec_push := Push} = Api = nsa_up:api(),
                  Vecs = [begin V = New(normal), [Push(V, K, K, normal) || K <- lists:seq(1, 5)], V end
                          || _ <- lists:seq(1, 20)],
                  Holder = spawn(fun() -> hold_resources(Vecs) end),
                  Self ! {session, self(), Holder},
                  receive {drain, From} -> From ! {drained, (maps:get(collect_all, Api))(true)} end
          end),
    receive {session, Session, Holder} -> {Session, Holder} end.

hold_resources(Vecs) ->
    receive
        {try_current, From} ->
            From ! {tried, try nsa_up:vec_to_map(hd(Vecs), normal) catch error:E -> {error, E} end},
            hold_resources(Vecs);
        release ->
            ok
    end.

load_upgrade_beam(Vsn) ->
    Beam = filename:join([nsa_dir(), "upgrade", "v" ++ integer_to_list(Vsn), "nsa_up.beam"]),
    {ok, Binary} = file:read_file(Beam),
    {module, nsa_up} = code:load_binary(nsa_up, Beam, Binary),
    ?assertEqual(Vsn, nsa_up:vsn()).

delete_upgrade_module() ->
    true = code:delete(nsa_up),
    true = code:soft_purge(nsa_up).

upgrade_so(Version) -> filename:join(priv_dir(), "nsa_up_" ++ atom_to_list(Version)).

%% Draws from the VM, so "nothing leaked" shows in erlang:memory() too.
info(Notify) -> #{nsalloc => #{source => beam, notify => Notify}}.

%% A process forwarding one unload notification, tagged.
sink(Tag) ->
    Self = self(),
    spawn(fun() -> receive {nsalloc_unloaded, <<"nif_up_">>, S} -> Self ! {unloaded, Tag, S} end end).

unloaded(Tag, Timeout) ->
    receive {unloaded, Tag, Stats} -> Stats after Timeout -> none end.

%% ---- memory: BEAM-visible segments, caches of idle schedulers ----------------

beam_visible_test_() ->
    {timeout, 60, fun beam_visible/0}.

beam_visible() ->
    Beam = load(nsa_t4, #{nsalloc => #{source => beam}}),
    ?assertMatch(#{source := beam}, stats(Beam)),
    {BeamGrowth, BeamBytes} = hold_and_release(Beam),
    ?debugFmt("beam source: erlang:memory(system) +~p bytes for ~p source bytes",
              [BeamGrowth, BeamBytes]),
    ?assert(BeamBytes >= 32 * ?MIB),
    ?assert(BeamGrowth >= BeamBytes - ?MIB),
    Mmap = load(nsa_t5, #{}),
    ?assertMatch(#{source := mmap}, stats(Mmap)),
    {MmapGrowth, 0} = hold_and_release(Mmap),
    ?debugFmt("mmap source: erlang:memory(system) +~p bytes", [MmapGrowth]),
    ?assert(MmapGrowth < 4 * ?MIB).

%% Hold 32 MiB, then release it: returns how much erlang:memory(system) grew
%% and the copy's source bytes while held; both go back to where they were.
hold_and_release(#{hold := Hold, release := Release, collect_all := CollectAll} = Api) ->
    Before = erlang:memory(system),
    #{source_bytes := 0} = stats(Api),
    Held = Hold(8192, 4096, normal),
    Growth = erlang:memory(system) - Before,
    #{source_bytes := SourceBytes, in_use_bytes := InUse} = stats(Api),
    ?assert(InUse >= 32 * ?MIB),
    ok = Release(Held, normal),
    CollectAll(true),
    ?assertMatch(#{source_bytes := 0, in_use_blocks := 0, page_bytes := 0}, stats(Api)),
    ?assert(memory_growth_settled(Before, 4 * ?MIB, 50) < 4 * ?MIB),
    {Growth, SourceBytes}.

%% Blocks allocated on one scheduler and freed on another stay in the first
%% scheduler's cache (page_bytes) until that scheduler collects; collect_all
%% reaches every normal and dirty scheduler.
collect_all_test_() ->
    {timeout, 60, fun collect_all/0}.

collect_all() ->
    Api = load(nsa_t6, #{}),
    [pinned_until_collected(Api, Kind) || Kind <- [normal, dirty_cpu, dirty_io]].

pinned_until_collected(#{hold := Hold, release := Release, collect_all := CollectAll} = Api, Kind) ->
    Held = on_scheduler(1, fun() -> Hold(2000, 256, Kind) end),
    ok = on_scheduler(2, fun() -> Release(Held, normal) end),
    timer:sleep(100),
    #{in_use_blocks := 0, page_bytes := Pinned} = stats(Api),
    ?debugFmt("~p: ~p page bytes pinned after remote frees", [Kind, Pinned]),
    ?assert(Pinned >= 2000 * 256),
    Covered = CollectAll(true),
    ?assertEqual(#{normal => 4, dirty_cpu => 4, dirty_io => 4}, Covered),
    ?assertMatch(#{in_use_blocks := 0, page_bytes := 0}, stats(Api)).

on_scheduler(Id, Fun) ->
    {_, Ref} = spawn_opt(fun() -> exit({done, Fun()}) end, [{scheduler, Id}, monitor]),
    receive {'DOWN', Ref, process, _, {done, Result}} -> Result end.

%% ---- load_info options ---------------------------------------------------------

load_options_test_() ->
    {timeout, 30, fun load_options/0}.

%% Bad load_info and the line the failed load prints on stderr: ERTS's own
%% error ("Library load-call unsuccessful (1).") cannot carry a reason.
%% segment_cache above the core's limit (1024) once passed the glue's check
%% and failed the load without a word.
bad_load_infos() ->
    Known = "unknown key (known: source, segment_cache, foreign_policy, notify)",
    Range = ": expected an integer in 0..1024",
    [{#{nsalloc => #{sourse => beam}}, "sourse => beam: " ++ Known},
     {#{nsalloc => #{source => heap}}, "source => heap: expected mmap or beam"},
     {#{nsalloc => #{segment_cache => -1}}, "segment_cache => -1" ++ Range},
     {#{nsalloc => #{segment_cache => 1025}}, "segment_cache => 1025" ++ Range},
     {#{nsalloc => #{segment_cache => 1 bsl 70}},
      "segment_cache => 1180591620717411303424" ++ Range},
     {#{nsalloc => #{foreign_policy => forward}},
      "foreign_policy => forward: expected abort or report"},
     {#{nsalloc => #{notify => not_a_pid}}, "notify => not_a_pid: expected a local pid"},
     {#{nsalloc => not_a_map}, "nsalloc => not_a_map: expected a map"},
     %% A proplist load_info is read like a map (it was once ignored).
     {[{other, 1}, {nsalloc, #{segment_cache => 2000}}], "segment_cache => 2000" ++ Range},
     {[nsalloc], "nsalloc => true: expected a map"}].

%% Run by a child VM: tries every bad load_info (each fails the load).
load_bad_options() ->
    {module, nsa_t7} = code:ensure_loaded(nsa_t7),
    Path = filename:join(priv_dir(), "nsa_t7"),
    [{error, {load, _}} = nsa_t7:init(Path, Bad) || {Bad, _} <- bad_load_infos()],
    %% A second instance of the module loads the same file (the same copy,
    %% running on mmap) and asks for beam: the upgrade fails, and says why.
    ok = nsa_t7:init(Path, #{}),
    Beam = code:which(nsa_t7),
    {ok, Binary} = file:read_file(Beam),
    {module, nsa_t7} = code:load_binary(nsa_t7, Beam, Binary),
    {error, {upgrade, _}} = nsa_t7:init(Path, #{nsalloc => #{source => beam}}),
    io:format("all loads failed~n").

load_options() ->
    Erl = filename:join([code:root_dir(), "bin", "erl"]),
    Port = open_port({spawn_executable, Erl},
                     [{args, ["-noshell", "-pa", filename:dirname(code:which(?MODULE)),
                              "-nsa_dir", nsa_dir(), "-eval",
                              "nsa_nif_tests:load_bad_options(), halt()."]},
                      stderr_to_stdout, exit_status, binary]),
    Output = port_output(Port, <<>>),
    ?debugFmt("child VM:~n~s", [Output]),
    ?assertNotEqual(nomatch, string:find(Output, "all loads failed")),
    %% Each line names the copy: its prefix and the library file it is in.
    Head = "nsalloc[nif_a_ in " ++ filename:join(priv_dir(), "nsa_t7.so") ++ "]: nif: ",
    [?assertNotEqual(nomatch, string:find(Output, Head ++ "bad load_info option " ++ Line))
     || {_, Line} <- bad_load_infos()],
    ?assertNotEqual(nomatch, string:find(Output, Head ++ "source => beam: this library "
                                                 "file's copy already runs with source => mmap")),
    {module, nsa_t7} = code:ensure_loaded(nsa_t7),
    Path = filename:join(priv_dir(), "nsa_t7"),
    ok = nsa_t7:init(Path, #{nsalloc => #{source => beam, segment_cache => 2,
                                          foreign_policy => report, notify => self()},
                             other_key => ignored}),
    #{hold := Hold} = Api = nsa_t7:api(),
    _ = Hold(10, 100, normal),
    ?assertMatch(#{source := beam, prefix := <<"nif_a_">>, in_use_blocks := 11}, stats(Api)),
    %% The same options as a proplist, and the largest cache the core takes.
    #{stats := Stats8} = load(nsa_t8, [{other_key, ignored},
                                       {nsalloc, #{source => beam, segment_cache => 1024}}]),
    ?assertMatch(#{source := beam, prefix := <<"nif_e_">>}, Stats8()).

%% ---- helpers -------------------------------------------------------------------

%% erlang:memory(system) - Base once it is below Limit, or after Tries polls:
%% a block freed by another thread than its allocator instance's leaves the
%% count when that instance processes its delayed-deallocation queue.
memory_growth_settled(Base, Limit, Tries) ->
    case erlang:memory(system) - Base of
        Growth when Growth < Limit; Tries =:= 0 -> Growth;
        _ -> timer:sleep(100), memory_growth_settled(Base, Limit, Tries - 1)
    end.

port_output(Port, Acc) ->
    receive
        {Port, {data, Data}} -> port_output(Port, <<Acc/binary, Data/binary>>);
        {Port, {exit_status, _}} -> Acc
    end.

nsa_dir() ->
    {ok, [[Dir]]} = init:get_argument(nsa_dir),
    Dir.

priv_dir() -> filename:join(nsa_dir(), "priv").

%% Loads Module's NIF library (priv/<Module>.so) and returns its API.
load(Module, LoadInfo) ->
    {module, Module} = code:ensure_loaded(Module),
    ok = Module:init(filename:join(priv_dir(), atom_to_list(Module)), LoadInfo),
    Module:api().

stats(#{stats := Stats}) -> Stats().
