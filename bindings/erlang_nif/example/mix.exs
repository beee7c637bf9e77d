# mix: `mix compile` builds the NIF library with the Makefile into the app's
# priv/ under _build (MIX_APP_PATH, where code:priv_dir/1 looks), then
# compiles src/. No dependencies: nothing is fetched. Projects that use
# elixir_make get the same from `compilers: [:elixir_make] ++ Mix.compilers()`.
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

defmodule NsallocExample.MixProject do
  use Mix.Project

  def project do
    [
      app: :nsalloc_example,
      version: "0.1.0",
      erlc_include_path: "c_src/nsalloc",
      compilers: [:nsalloc_nif] ++ Mix.compilers(),
      deps: []
    ]
  end
end
