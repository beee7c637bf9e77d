#!/bin/sh
# Runs every ctest test labelled `core` under valgrind memcheck; any error fails.
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
    # shellcheck disable=SC2086
    NSALLOC_UNDER_VALGRIND=1 valgrind --quiet --error-exitcode=99 --leak-check=no \
      --track-origins=yes $command > /dev/null
  done
echo "memcheck: clean"
