#!/bin/sh
# Instructions per call of the small malloc and free fast paths, counted by
# callgrind (deterministic: the same binary gives the same count) as the
# inclusive cost of the calls the module's two loops make. Needs no debug
# information, so it works for Release builds and with gcc or clang.
# Usage: fastpath_count.sh DRIVER MODULE [MAX_MALLOC MAX_FREE]
# With the limits it fails when a path has grown past them.
set -eu
driver=$1 module=$2 max_malloc=${3:-} max_free=${4:-}
here=$(dirname "$0")
out=$(mktemp) log=$(mktemp)
trap 'rm -f "$out" "$log"' EXIT
if ! valgrind --tool=callgrind --callgrind-out-file="$out" "$driver" "$module" 2>"$log"; then
  echo "fastpath_count: callgrind failed:" >&2
  cat "$log" >&2
  exit 1
fi
counts=$(python3 "$here/../../bench/callgrind_calls.py" "$out" fastpath_mallocs fastpath_frees) || true
status=0
for op in malloc free; do
  per_call=$(echo "$counts" | awk -v fn="fastpath_${op}s" '$1 == fn && sub("^per_call=", "", $NF) { print $NF }')
  limit=$([ "$op" = malloc ] && echo "$max_malloc" || echo "$max_free")
  echo "${op}: ${per_call:-none} instructions per call${limit:+ (limit $limit)}"
  if [ -z "$per_call" ]; then
    status=1
  elif [ -n "$limit" ] && awk -v v="$per_call" -v l="$limit" 'BEGIN { exit !(v > l) }'; then
    status=1
  fi
done
exit $status
