#!/bin/sh
# Instructions per call of the small malloc and free fast paths, counted by
# callgrind (deterministic: the same binary gives the same count).
# Usage: fastpath_count.sh DRIVER MODULE PREFIX [MAX_MALLOC MAX_FREE]
# With the limits it fails when a path has grown past them.
set -eu
driver=$1 module=$2 prefix=$3 max_malloc=${4:-} max_free=${5:-}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$out" "$driver" "$module" 2>/dev/null
status=0
for op in malloc free; do
  # Caller-tree lines "COST (P%)  => file:PREFIXop (CALLSx)": inclusive cost of
  # every call, TLS descriptor resolution included.
  per_call=$(callgrind_annotate --tree=caller "$out" 2>/dev/null | tr -d , |
    awk -v fn=":${prefix}${op} " '
      index($0, "=>") && index($0, fn) {
        match($0, /\(([0-9]+)x\)/); calls += substr($0, RSTART + 1, RLENGTH - 3); cost += $1
      }
      END { if (calls) printf "%.1f", cost / calls; else print "none" }')
  limit=$([ "$op" = malloc ] && echo "$max_malloc" || echo "$max_free")
  echo "${prefix}${op}: ${per_call} instructions per call${limit:+ (limit $limit)}"
  if [ -n "$limit" ] && awk -v v="$per_call" -v l="$limit" 'BEGIN { exit !(v == "none" || v > l) }'; then
    status=1
  fi
done
exit $status
