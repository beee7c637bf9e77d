#!/bin/sh
# exports.sh ENTRY OUTPUT COMPILER [ARGUMENT...]: build a binding's module the
# way a project without the nsalloc build would - `COMPILER -shared -fPIC`, no
# -fvisibility, no version script, only the arguments given (sources, include
# directories, the copy's prefix) - and check that its dynamic symbol table
# defines ENTRY and nothing else. Every other name must be hidden by the
# source itself (static, or hidden visibility).
set -eu
entry=$1 output=$2 compiler=$3
shift 3
mkdir -p "$(dirname "$output")"
"$compiler" -shared -fPIC -o "$output" "$@" -pthread
defined=$(nm -D --defined-only "$output" | awk 'NF == 3 { print $3 }')
status=0
for name in $defined; do
  [ "$name" = "$entry" ] && continue
  echo "exported: $name (only $entry may be)"
  status=1
done
if ! printf '%s\n' "$defined" | grep -qx "$entry"; then
  echo "missing: $entry is not exported"
  status=1
fi
[ $status = 0 ] && echo "$output: only $entry is exported"
exit $status
