#!/bin/sh
# Runs every ctest test labelled `core` under valgrind memcheck; any error fails,
# and so does a test that runs longer than 10 minutes there (a hang, or a thread
# that spins: valgrind runs one thread at a time, so a spinning one starves the
# others, and CI would otherwise end at its own limit with no name).
# Usage: scripts/memcheck.sh BUILD_DIR
set -eu
build=${1:-build}
ctest --test-dir "$build" -L core -N --show-only=json-v1 |
  python3 -c '
import json, sys, shlex
for t in json.load(sys.stdin)["tests"]:
    print(shlex.join(t["command"]))' |
  while read -r command; do
    echo "memcheck: $command"
    started=$(date +%s)
    status=0
    # shellcheck disable=SC2086
    NSALLOC_UNDER_VALGRIND=1 timeout --kill-after=10 600 valgrind --quiet --error-exitcode=99 \
      --leak-check=no --track-origins=yes $command > /dev/null || status=$?
    if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
      echo "memcheck: TIMED OUT after 600 s: $command" >&2
      exit 1
    fi
    echo "memcheck: $(($(date +%s) - started)) s"
    [ "$status" -eq 0 ] || exit "$status"
  done
echo "memcheck: clean"
