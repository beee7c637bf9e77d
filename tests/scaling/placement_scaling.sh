#!/bin/sh
# Instructions per large-block placement at N and at 4N blocks in one heap,
# counted by callgrind (deterministic), for default and 2 MiB alignment; fails
# when the cost per call at 4N exceeds LIMIT times the cost at N: a search
# that walks the heap's segments grows about 4x (placement_scaling.c).
# Usage: placement_scaling.sh DRIVER [N [LIMIT]]
set -eu
driver=$1 n=${2:-300} limit=${3:-1.5}
here=$(dirname "$0")
counts=$(sh "$here/../callgrind_per_call.sh" "place_N place_4N place_aligned_N place_aligned_4N" \
  "$driver" "$n")
per_call() { echo "$counts" | awk -v fn="$1" '$1 == fn { print $2 }'; }
status=0
for kind in "" aligned_; do
  at_n=$(per_call "place_${kind}N") at_4n=$(per_call "place_${kind}4N")
  if [ -z "$at_n" ] || [ -z "$at_4n" ]; then
    echo "placement_scaling: no count for place_${kind}N or place_${kind}4N" >&2
    status=1
    continue
  fi
  verdict=$(awk -v a="$at_n" -v b="$at_4n" -v l="$limit" \
    'BEGIN { r = b / a; printf "%.2f %s", r, (r > l ? "FAIL" : "ok") }')
  echo "${kind:-default_}placement: ${at_n} instructions per call at N=$n, ${at_4n} at 4N: ratio ${verdict% *} (limit $limit) ${verdict#* }"
  case $verdict in *FAIL) status=1 ;; esac
done
exit $status
