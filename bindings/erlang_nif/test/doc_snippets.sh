#!/bin/sh
# erlang.doc_snippets: every ```c, ```erlang and ```elixir block of
# docs/erlang.md is a complete file that compiles warning-free under the
# recipe's flags: C with $CC -std=gnu11 -O2 -Wall -Wextra -Werror and the
# private-copy flags, Erlang with erlc +warnings_as_errors, Elixir with
# elixirc --warnings-as-errors (beside nsalloc_nif.ex). A doc with no block
# of a kind fails: the extraction itself is checked.
# Usage: doc_snippets.sh DOC SOURCE_ROOT ERTS_INCLUDE_DIR WORK_DIR
set -eu
doc=$1 root=$2 erts_include=$3 work=$4
binding=$root/bindings/erlang_nif
rm -rf "$work"
mkdir -p "$work/ebin"

# Block N of language L goes to $work/L_N.ext.
awk -v dir="$work" '
  /^```(c|erlang|elixir)$/ { lang = substr($0, 4); n[lang]++; ext = lang == "c" ? "c" : lang == "erlang" ? "erl" : "ex"
                              file = dir "/" lang "_" n[lang] "." ext; next }
  /^```/ { file = ""; next }
  file != "" { print > file }
' "$doc"

for lang in c erlang elixir; do
  set -- "$work/${lang}_"*
  [ -e "$1" ] || { echo "doc_snippets.sh: no \`\`\`$lang block in $doc" >&2; exit 1; }
done

for snippet in "$work"/c_*.c; do
  echo "C: $snippet"
  ${CC:-cc} -std=gnu11 -fPIC -O2 -Wall -Wextra -Werror -DNSALLOC_PREFIX=doc_snippet_ -DNSALLOC_PRIVATE=1 \
    -fvisibility=hidden -I"$erts_include" -I"$root/sdk/include" -I"$binding/include" -c "$snippet" \
    -o "$snippet.o"
done

erlc +warnings_as_errors -o "$work/ebin" "$binding/src/nsalloc_nif.erl"
for snippet in "$work"/erlang_*.erl; do
  # erlc wants the file named after its module.
  module=$(sed -n 's/^-module(\([a-z_0-9]*\))\.$/\1/p' "$snippet")
  [ -n "$module" ] || { echo "doc_snippets.sh: $snippet has no -module" >&2; exit 1; }
  mkdir -p "$work/$module" && cp "$snippet" "$work/$module/$module.erl"
  echo "Erlang: $snippet ($module)"
  erlc +warnings_as_errors -I "$binding/include" -o "$work/ebin" "$work/$module/$module.erl"
done

echo "Elixir: $work/elixir_*.ex"
elixirc --warnings-as-errors -pa "$work/ebin" -o "$work/ebin" "$binding/src/nsalloc_nif.ex" "$work"/elixir_*.ex
echo "doc_snippets.sh: all snippets of $doc compile"
