#!/bin/sh
# check-portable.sh AMALGAMATION_DIR SOURCE_DIR
# Compiles the amalgamation and a program using only the public headers as
# strict ISO C11 (-std=c11 -pedantic-errors -Wall -Wextra -Werror) with every
# compiler found (gcc, clang), and for every cross target whose C library
# headers are installed (aarch64 Linux through clang --target and
# /usr/aarch64-linux-gnu; 32-bit i386, armhf and big-endian MIPS through their
# Debian cross compilers). On the 32-bit targets the object must call no
# libatomic function (__atomic_*: a 64-bit atomic that is not lock-free
# there, which a program linked without -latomic cannot resolve); a control
# shows that such a call is found. Fails on the first diagnostic; says what
# it skipped.
set -eu
amal=$1
src=$2
flags="-std=c11 -pedantic-errors -Wall -Wextra -Werror -O2 -fPIC -c"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '#include "nsalloc.h"\nint main(void) { void *p = nsalloc_malloc(1); nsalloc_free(p); return 0; }\n' \
  >"$out/consumer.c"

compile() { # label compiler-and-flags...
  label=$1
  shift
  "$@" $flags -I"$amal" -DNSALLOC_PREFIX=strict_ "$amal/nsalloc.c" -o "$out/nsalloc.o"
  "$@" $flags -I"$src/sdk/include" "$out/consumer.c" -o "$out/consumer.o"
  echo "strict C11: $label ok"
}

for cc in gcc clang; do
  if command -v $cc >/dev/null 2>&1; then compile "$cc" $cc; else echo "strict C11: $cc not installed, skipped"; fi
done
if command -v clang >/dev/null 2>&1 && [ -d /usr/aarch64-linux-gnu/include ]; then
  compile "clang --target=aarch64-linux-gnu" clang --target=aarch64-linux-gnu \
    --sysroot=/usr/aarch64-linux-gnu -isystem /usr/aarch64-linux-gnu/include
else
  echo "strict C11: aarch64 headers (libc6-dev-arm64-cross) not installed, aarch64 skipped"
fi
# The undefined libatomic functions an object calls (none: empty).
libatomic_calls() { # compiler object
  "${1%gcc}nm" -u "$2" | awk '$2 ~ /^__atomic_/ {print $2}'
}

printf '#include <stdatomic.h>\n_Atomic(unsigned long long) wide;\nunsigned long long read_wide(void) { return atomic_load(&wide); }\n' \
  >"$out/wide_atomic.c"
for cc in i686-linux-gnu-gcc arm-linux-gnueabihf-gcc mips-linux-gnu-gcc; do
  if ! command -v $cc >/dev/null 2>&1; then
    echo "strict C11: $cc not installed, skipped"
    continue
  fi
  compile "$cc (32-bit)" $cc
  calls=$(libatomic_calls $cc "$out/nsalloc.o")
  if [ -n "$calls" ]; then
    echo "strict C11: $cc: the amalgamation calls libatomic: $calls" >&2
    exit 1
  fi
  $cc $flags "$out/wide_atomic.c" -o "$out/wide_atomic.o"
  echo "libatomic: none called ($cc; a 64-bit atomic here calls: $(libatomic_calls $cc "$out/wide_atomic.o" | tr '\n' ' '))"
done
# The control: where 64-bit atomics are not lock-free the check above must
# see the call they compile to.
if command -v mips-linux-gnu-gcc >/dev/null 2>&1 &&
  [ -z "$(libatomic_calls mips-linux-gnu-gcc "$out/wide_atomic.o")" ]; then
  echo "strict C11: control failed: no libatomic call found for a 64-bit atomic on MIPS" >&2
  exit 1
fi
