#!/bin/sh
# check-unsupported-target.sh [--without-guard] AMALGAMATION_DIR COMPILER...
# Compiles the amalgamation as for a target without lock-free pointer
# atomics (the compiler's own __GCC_/__CLANG_ATOMIC_POINTER_LOCK_FREE redefined
# to 1, which <stdatomic.h> reports as ATOMIC_POINTER_LOCK_FREE) and requires the
# core's #error: such a target must stop at compile time. --without-guard
# compiles a copy with the core's target #errors deleted (the negative
# control: this check must then fail).
set -eu
strip=0
if [ "$1" = --without-guard ]; then
  strip=1
  shift
fi
amal=$1
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source="$amal/nsalloc.c"
if [ $strip = 1 ]; then
  sed '/^#error "nsalloc: unsupported target/d' "$source" >"$work/nsalloc.c"
  source="$work/nsalloc.c"
fi
if output=$("$@" -std=c11 -fsyntax-only -I"$amal" -U__GCC_ATOMIC_POINTER_LOCK_FREE \
  -D__GCC_ATOMIC_POINTER_LOCK_FREE=1 -U__CLANG_ATOMIC_POINTER_LOCK_FREE \
  -D__CLANG_ATOMIC_POINTER_LOCK_FREE=1 "$source" 2>&1); then
  echo "FAIL: the amalgamation compiled for a target without lock-free pointer atomics"
  exit 1
fi
if ! printf '%s\n' "$output" | grep -q 'nsalloc: unsupported target: no lock-free atomics'; then
  echo "FAIL: the compile failed without the core's #error:"
  printf '%s\n' "$output"
  exit 1
fi
echo "refused at compile time as expected:"
printf '%s\n' "$output" | grep 'nsalloc: unsupported target'
