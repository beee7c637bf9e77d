%% nsalloc_example - the Erlang side of the amalgamation recipe's NIF.
-module(nsalloc_example).
-export([join/1]).
-on_load(init/0).
-include("nsalloc_nif.hrl").

init() ->
    Priv = filename:join(filename:dirname(filename:dirname(code:which(?MODULE))), "priv"),
    erlang:load_nif(filename:join(Priv, ?MODULE_STRING), #{}).

-spec join([binary()]) -> binary().
join(_Parts) -> erlang:nif_error(nif_library_not_loaded).
