# nsalloc_nif_compiler.exs - a mix compiler for a NIF library built by the
# Makefile of bindings/erlang_nif/example: `make nif` with MIX_APP_PATH set to
# Mix.Project.app_path(), so the library is written to
# _build/<env>/lib/<app>/priv, where code:priv_dir/1 looks. mix.exs loads it
# and lists it before the others:
#   Code.require_file("c_src/nsalloc/nsalloc_nif_compiler.exs", __DIR__)
#   ... compilers: [:nsalloc_nif] ++ Mix.compilers(), ...
# Projects that use elixir_make get the same from
# `compilers: [:elixir_make] ++ Mix.compilers()`.
defmodule Mix.Tasks.Compile.NsallocNif do
  use Mix.Task.Compiler

  @impl true
  def run(_args) do
    env = [{"MIX_APP_PATH", Mix.Project.app_path()}]
    output = IO.stream(:stdio, :line)

    case System.cmd("make", ["nif"], env: env, into: output, stderr_to_stdout: true) do
      {_, 0} -> {:ok, []}
      {_, status} -> Mix.raise("make nif failed with status #{status}")
    end
  end
end
