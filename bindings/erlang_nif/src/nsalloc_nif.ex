# nsalloc_nif.ex - the Elixir side of a NIF library that bundles nsalloc (C
# side: NSALLOC_NIF_FUNCS in its ErlNifFunc table, ERL_NIF_INIT(Elixir.MyNif,
# ...)). The Elixir counterpart of nsalloc_nif.hrl:
#
#     defmodule MyNif do
#       use NsallocNif                      # loads priv/my_nif.so at load time
#       def join(_parts), do: :erlang.nif_error(:nif_library_not_loaded)
#     end
#
# `use NsallocNif` defines the stubs of the glue's NIFs (nsalloc_stats/0,
# nsalloc_collect/1, nsalloc_collect_dirty/3) and nsalloc_collect_all/1:
# erlang:load_nif/2 refuses a library whose function table names a function
# the module does not define ({:bad_lib, ... nsalloc_stats/0}). It also loads
# the library from the application's priv/ directory (`@on_load`), named
# after the module's last alias (MyNif -> my_nif.so), with these options:
#   library:   the file name without extension (default: as above)
#   otp_app:   the application whose priv/ holds it (default: the mix
#              project's app)
#   load_info: the load_info term (default %{}; see docs/erlang.md, e.g.
#              %{nsalloc: %{source: :beam}})
# nsalloc_nif.erl (the helpers behind nsalloc_collect_all/1) must be compiled
# too: mix compiles it from src/.
defmodule NsallocNif do
  defmacro __using__(opts) do
    quote bind_quoted: [opts: opts] do
      @nsalloc_library Keyword.get_lazy(opts, :library, fn ->
                         __MODULE__ |> Module.split() |> List.last() |> Macro.underscore()
                       end)
      @nsalloc_otp_app Keyword.get_lazy(opts, :otp_app, fn ->
                         Process.whereis(Mix.ProjectStack) ||
                           raise ArgumentError, "use NsallocNif: no mix project, pass otp_app:"

                         Mix.Project.config()[:app]
                       end)
      @nsalloc_load_info Keyword.get(opts, :load_info, %{})
      @on_load :__nsalloc_load_nif__

      @doc false
      def __nsalloc_load_nif__ do
        # The application's priv/ (_build/<env>/lib/<app>/priv under mix),
        # found by name: while mix compiles the module it has no .beam yet.
        case :code.priv_dir(@nsalloc_otp_app) do
          {:error, :bad_name} -> {:error, {:no_priv_dir, @nsalloc_otp_app}}
          priv -> :erlang.load_nif(:filename.join(priv, @nsalloc_library), @nsalloc_load_info)
        end
      end

      @doc "The copy's statistics (a map, see docs/erlang.md)."
      def nsalloc_stats, do: :erlang.nif_error(:nif_library_not_loaded)

      @doc "Collect the calling scheduler thread's cache of the copy."
      def nsalloc_collect(_force), do: :erlang.nif_error(:nif_library_not_loaded)

      @doc false
      def nsalloc_collect_dirty(_force, _kind, _round_count),
        do: :erlang.nif_error(:nif_library_not_loaded)

      # Local captures: called from a process still running an old version of
      # the module, they reach the old version's library.
      @doc "Collect the copy's caches on every scheduler (see :nsalloc_nif.collect_all/1)."
      def nsalloc_collect_all(force) do
        :nsalloc_nif.collect_all(&nsalloc_collect/1, &nsalloc_collect_dirty/3, force)
      end
    end
  end
end
