#!/bin/sh
# cross-test.sh aarch64|i386|armhf|musl|musl-static [BUILD_DIR]
# Configures a build of the core, its tests and the isolation runtime checks
# only (NSALLOC_CROSS_SUBSET) for another target and runs them with ctest:
#   aarch64      cross-compiled, run under qemu-aarch64-static (emulated)
#   i386         cross-compiled 32-bit x86, run natively through its loader
#   armhf        cross-compiled 32-bit ARM (ARMv7), run under qemu-arm-static
#   musl         musl-gcc, dynamic (dlopen'ed modules, reload on musl)
#   musl-static  musl-gcc, the core tests linked statically (-static)
set -eu
cd "$(dirname "$0")/.."
target=$1
build=${2:-build-$target}
case $target in
aarch64) opts="-DCMAKE_TOOLCHAIN_FILE=$PWD/cmake/toolchain-aarch64-linux-gnu.cmake" ;;
i386) opts="-DCMAKE_TOOLCHAIN_FILE=$PWD/cmake/toolchain-i686-linux-gnu.cmake" ;;
armhf) opts="-DCMAKE_TOOLCHAIN_FILE=$PWD/cmake/toolchain-arm-linux-gnueabihf.cmake" ;;
musl) opts="-DCMAKE_TOOLCHAIN_FILE=$PWD/cmake/toolchain-musl.cmake" ;;
musl-static) opts="-DCMAKE_TOOLCHAIN_FILE=$PWD/cmake/toolchain-musl.cmake -DCMAKE_EXE_LINKER_FLAGS=-static" ;;
*)
  echo "usage: $0 aarch64|i386|armhf|musl|musl-static [BUILD_DIR]" >&2
  exit 2
  ;;
esac
# i386 runs natively (cmake/toolchain-i686-linux-gnu.cmake), which needs a
# kernel built with 32-bit x86 support: some are not (the loader then cannot
# even start). armhf, the next step, still covers 32-bit there, under qemu.
if [ "$target" = i386 ] && ! /usr/i686-linux-gnu/lib/ld-linux.so.2 --help > /dev/null 2>&1; then
  echo "cross-test: i386 NOT RUN: this kernel cannot execute 32-bit x86 programs" \
    "(/usr/i686-linux-gnu/lib/ld-linux.so.2 --help fails); 32-bit is covered by armhf" >&2
  exit 0
fi
# shellcheck disable=SC2086
cmake -S . -B "$build" -DNSALLOC_CROSS_SUBSET=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo $opts
cmake --build "$build" -j "${JOBS:-2}"
# The differential tests (core.random*) replay their operations on the C
# library's malloc too: many minutes under musl's malloc or emulation, so they
# run on the host build only.
if [ "$target" = musl-static ]; then
  # A static program cannot dlopen modules: the core tests that need none
  # (the demo, unload, reload, exit_race and one fork case load modules).
  ctest --test-dir "$build" --output-on-failure -j "${JOBS:-2}" -L core -E 'random|unload|reload|exit_race|demo|fork'
elif [ "$target" = armhf ]; then
  # Not core.exit_race (as aarch64, below), nor core.unload: it measures the
  # address space in /proc/self/statm, which under qemu-arm is the emulator's
  # (4.4 GB from the start: qemu reserves a 32-bit guest's whole address
  # space), so the guest's mmap and munmap never show and the test's control
  # fails. isolation.runtime.unload runs; i386 runs core.unload natively.
  ctest --test-dir "$build" --output-on-failure -j "${JOBS:-2}" -L 'core|isolation' \
    -E 'random|exit_race|core\.unload'
elif [ "$target" = aarch64 ]; then
  # Not core.exit_race: under qemu-user even its control module (no nsalloc
  # code: a pthread key destructor and a module destructor that waits for it)
  # crashes in 5 runs of 6 when threads leave the destructor while the module
  # is unloaded, so the emulator cannot judge the copy there.
  ctest --test-dir "$build" --output-on-failure -j "${JOBS:-2}" -L 'core|isolation' -E 'random|exit_race'
else
  ctest --test-dir "$build" --output-on-failure -j "${JOBS:-2}" -L 'core|isolation' -E random
fi
