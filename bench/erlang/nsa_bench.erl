%% nsa_bench - the BEAM benchmark's two halves (run.sh drives them):
%%   measure: in a fresh VM, load one allocator build of nsa_bench_nif and
%%            measure each operation's throughput with 4 processes per
%%            scheduler calling it for a fixed time; then the VM's RSS.
%%   report:  read the measurements and print a markdown table with ratios.
-module(nsa_bench).
-export([measure/1, report/1]).

-define(OPS, [churn, realloc_grow]).
-define(ITERATIONS, 1000). % operations per NIF call

%% measure([PrivDir, Alloc, Seconds, OutFile])
measure([Priv, Alloc, Seconds, Out]) ->
    ok = nsa_bench_nif:init(filename:join(Priv, "nsa_bench_" ++ Alloc)),
    Millis = round(list_to_float(Seconds) * 1000),
    Results = [{Op, throughput(Op, Millis div 5), throughput(Op, Millis)} || Op <- ?OPS],
    Status = status(),
    Measurement = #{alloc => Alloc,
                    ops_per_s => maps:from_list([{Op, PerS} || {Op, _Warmup, PerS} <- Results]),
                    rss_kb => maps:get("VmRSS", Status),
                    peak_rss_kb => maps:get("VmHWM", Status),
                    schedulers => erlang:system_info(schedulers_online),
                    otp => erlang:system_info(otp_release)},
    ok = file:write_file(Out, io_lib:format("~p.~n", [Measurement])),
    halt(0).

%% Operations per second over Millis, 4 processes per scheduler.
throughput(Op, Millis) ->
    Parent = self(),
    Processes = 4 * erlang:system_info(schedulers_online),
    Start = erlang:monotonic_time(microsecond),
    Deadline = Start + Millis * 1000,
    [spawn(fun() -> Parent ! {calls, calls(Op, Deadline, Seed, 0)} end)
     || Seed <- lists:seq(1, Processes)],
    Calls = lists:sum([receive {calls, N} -> N end || _ <- lists:seq(1, Processes)]),
    Elapsed = erlang:monotonic_time(microsecond) - Start,
    Calls * ?ITERATIONS * 1000000 / Elapsed.

calls(Op, Deadline, Seed, N) ->
    case erlang:monotonic_time(microsecond) < Deadline of
        true ->
            nsa_bench_nif:Op(?ITERATIONS, Seed * 1000003 + N),
            calls(Op, Deadline, Seed, N + 1);
        false ->
            N
    end.

%% VmRSS, VmHWM, ... of this VM in kB.
status() ->
    {ok, Text} = file:read_file("/proc/self/status"),
    maps:from_list([{Key, list_to_integer(Kb)}
                    || Line <- string:split(binary_to_list(Text), "\n", all),
                       [Key, Value] <- [string:split(Line, ":")],
                       [Kb, "kB"] <- [string:lexemes(Value, " \t")]]).

%% report([File...]): the measurements as a markdown table, ratios against
%% enif_alloc and glibc malloc.
report(Files) ->
    ByAlloc = maps:from_list([begin {ok, [M]} = file:consult(F), {maps:get(alloc, M), M} end
                              || F <- Files]),
    #{"nsalloc" := N, "enif" := E, "libc" := L} = ByAlloc,
    Mops = fun(M, Op) -> maps:get(Op, maps:get(ops_per_s, M)) / 1.0e6 end,
    io:format("OTP ~s, ~p schedulers, 4 processes per scheduler, ~p operations per NIF call.~n~n",
              [maps:get(otp, N), maps:get(schedulers, N), ?ITERATIONS]),
    io:format("| operation | nsalloc copy | enif_alloc | glibc malloc | nsalloc / enif_alloc |"
              " nsalloc / malloc |~n|---|---|---|---|---|---|~n"),
    [io:format("| ~s (Mops/s) | ~.2f | ~.2f | ~.2f | ~.2fx | ~.2fx |~n",
               [Op, Mops(N, Op), Mops(E, Op), Mops(L, Op), Mops(N, Op) / Mops(E, Op),
                Mops(N, Op) / Mops(L, Op)])
     || Op <- ?OPS],
    [io:format("| BEAM ~s (MiB) | ~.1f | ~.1f | ~.1f | | |~n",
               [Label, maps:get(Key, N) / 1024, maps:get(Key, E) / 1024, maps:get(Key, L) / 1024])
     || {Label, Key} <- [{"RSS at the end", rss_kb}, {"peak RSS", peak_rss_kb}]],
    halt(0).
