#!/bin/sh
# check-no-traps.sh [--expect-trap] OBJDUMP FILE...
# Disassembles FILEs and fails on a trap instruction: the ud2 (x86), udf
# (ARM) or brk (AArch64) a compiler plants where it proves undefined
# behaviour, e.g. a shift past the width of a 32-bit word. With --expect-trap
# (the negative control) it fails when there is none.
set -eu
expect=0
if [ "$1" = --expect-trap ]; then
  expect=1
  shift
fi
objdump=$1
shift
traps=$("$objdump" -d "$@" | awk '/^[0-9a-f]+ <.*>:$/ { fn = $2 } /\t(ud2|udf|brk)([ \t]|$)/ { print fn, $0 }')
if [ -n "$traps" ]; then
  echo "trap instructions found:"
  echo "$traps"
  [ $expect = 1 ] && exit 0
  exit 1
fi
echo "no trap instruction in: $*"
[ $expect = 1 ] && exit 1
exit 0
