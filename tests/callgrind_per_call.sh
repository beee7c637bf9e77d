#!/bin/sh
# Instructions per call of the calls each named function makes, counted by
# callgrind over one run of COMMAND (bench/callgrind_calls.py: deterministic,
# no debug information needed). Prints "FUNCTION PER_CALL" for each function
# that made calls; fails when the command fails under callgrind.
# Usage: callgrind_per_call.sh "FUNCTION..." COMMAND [ARG...]
set -eu
callers=$1
shift
here=$(dirname "$0")
out=$(mktemp) log=$(mktemp)
trap 'rm -f "$out" "$log"' EXIT
if ! valgrind --tool=callgrind --callgrind-out-file="$out" "$@" 2>"$log"; then
  echo "$(basename "$1"): failed under callgrind:" >&2
  cat "$log" >&2
  exit 1
fi
# shellcheck disable=SC2086
python3 "$here/../bench/callgrind_calls.py" "$out" $callers |
  awk '$NF ~ /^per_call=/ { sub("^per_call=", "", $NF); print $1, $NF }'
