# mix: `mix compile` builds the NIF library with the Makefile (the compiler
# vendored with the glue, nsalloc_nif_compiler.exs) into the app's priv/ under
# _build, then compiles src/. No dependencies: nothing is fetched.
Code.require_file("c_src/nsalloc/nsalloc_nif_compiler.exs", __DIR__)

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
