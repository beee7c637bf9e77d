#!/bin/sh
# Instructions per call of the small malloc and free fast paths, counted by
# callgrind (deterministic: the same binary gives the same count) as the
# inclusive cost of the calls the module's loops make: the owner's malloc and
# free, then the producer's malloc and the consumer's (remote) free of blocks
# handed from one thread to the other. Needs no debug information, so it works
# for Release builds and with gcc or clang.
# Usage: fastpath_count.sh DRIVER MODULE [MAX_MALLOC MAX_FREE MAX_REMOTE_FREE]
# With the limits it fails when a path has grown past them.
set -eu
driver=$1 module=$2 max_malloc=${3:-} max_free=${4:-} max_remote_free=${5:-}
here=$(dirname "$0")
counts=$(sh "$here/../callgrind_per_call.sh" \
  "fastpath_mallocs fastpath_frees fastpath_producer_mallocs fastpath_remote_frees" \
  "$driver" "$module")
status=0
for op in malloc free producer_malloc remote_free; do
  per_call=$(echo "$counts" | awk -v fn="fastpath_${op}s" '$1 == fn { print $2 }')
  case $op in
    malloc) limit=$max_malloc ;;
    free) limit=$max_free ;;
    remote_free) limit=$max_remote_free ;;
    *) limit= ;;
  esac
  echo "${op}: ${per_call:-none} instructions per call${limit:+ (limit $limit)}"
  if [ -z "$per_call" ]; then
    status=1
  elif [ -n "$limit" ] && awk -v v="$per_call" -v l="$limit" 'BEGIN { exit !(v > l) }'; then
    status=1
  fi
done
exit $status
