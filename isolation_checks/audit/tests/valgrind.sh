#!/bin/sh
# valgrind.sh VALGRIND TOOL FIXTURES: the tool over every fixture (and a
# missing file, for the error path) under memcheck: no invalid access, no
# use of uninitialised memory, no leak.
set -u
valgrind=$1 tool=$2 fixtures=$3
cd "$fixtures" || exit 1
"$valgrind" --quiet --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
  --errors-for-leak-kinds=definite,indirect "$tool" --json . missing.so >/dev/null
status=$?
if [ "$status" = 2 ]; then
  echo "1 passed, 0 failed"
  exit 0
fi
echo "valgrind run ended with status $status (99: memcheck errors, expected the tool's 2)"
echo "0 passed, 1 failed"
exit 1
