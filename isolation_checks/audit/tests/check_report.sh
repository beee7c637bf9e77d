#!/bin/sh
# check_report.sh TOOL DIR EXPECTED_FILE EXPECTED_STATUS [ARG...]
#
# Runs `TOOL ARG...` inside DIR and passes when it exits with EXPECTED_STATUS
# and prints exactly EXPECTED_FILE. With AUDIT_UPDATE_EXPECTED=1 it rewrites
# EXPECTED_FILE instead (review the diff before committing it).
set -u
tool=$1 dir=$2 expected=$3 status=$4
shift 4
actual=$(mktemp)
trap 'rm -f "$actual"' EXIT
cd "$dir" || exit 1
"$tool" "$@" >"$actual"
got=$?
if [ "${AUDIT_UPDATE_EXPECTED:-0}" = 1 ]; then
  cp "$actual" "$expected"
  echo "updated $expected (exit status $got)"
  exit 0
fi
failed=0
if [ "$got" != "$status" ]; then
  echo "FAIL: exit status $got, expected $status"
  failed=1
fi
if ! diff -u "$expected" "$actual"; then
  echo "FAIL: the report differs from $expected"
  failed=1
fi
[ "$failed" = 0 ] && echo "PASS: $(basename "$expected" .txt), exit status $got"
exit "$failed"
