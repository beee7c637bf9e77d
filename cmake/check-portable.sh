#!/bin/sh
# check-portable.sh AMALGAMATION_DIR SOURCE_DIR
# Compiles the amalgamation and a program using only the public headers as
# strict ISO C11 (-std=c11 -pedantic-errors -Wall -Wextra -Werror) with every
# compiler found (gcc, clang), and for every cross target whose C library
# headers are installed (aarch64 Linux through clang --target and
# /usr/aarch64-linux-gnu; 32-bit i386 and armhf through their Debian cross
# compilers). Fails on the first diagnostic; says what it skipped.
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
for cc in i686-linux-gnu-gcc arm-linux-gnueabihf-gcc; do
  if command -v $cc >/dev/null 2>&1; then compile "$cc (32-bit)" $cc; else echo "strict C11: $cc not installed, skipped"; fi
done
