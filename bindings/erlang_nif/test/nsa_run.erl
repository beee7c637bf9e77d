%% nsa_run - ctest's entry point: `erl -noshell ... -run nsa_run main <name>`
%% runs the EUnit test nsa_nif_tests:<name>_test_/0 and halts with status 0
%% only when it passed.
-module(nsa_run).
-export([main/1]).

main([Name]) ->
    Result = eunit:test({generator, nsa_nif_tests, list_to_atom(Name ++ "_test_")}, [verbose]),
    halt(case Result of ok -> 0; _ -> 1 end).
