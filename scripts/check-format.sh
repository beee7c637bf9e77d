#!/bin/sh
# Checks (or with --fix, applies) clang-format on every C source of the project.
set -eu
cd "$(dirname "$0")/.."
files=$(git ls-files '*.c' '*.h')
[ -n "$files" ] || exit 0
if [ "${1:-}" = "--fix" ]; then
  clang-format -i $files
else
  clang-format --dry-run --Werror $files
fi
