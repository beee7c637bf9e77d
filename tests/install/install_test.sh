#!/bin/sh
# Installs nsalloc two ways and builds every documented consumer route
# against each install tree:
#   - this build into a local prefix (lib/, as CMake's default prefix has);
#   - a fresh configure with the distribution prefix /usr (multiarch libdir,
#     e.g. lib/x86_64-linux-gnu), staged with DESTDIR.
# The routes: find_package + nsalloc_add_private_copy (C, libuv through
# nsalloc_uv.h, a C++-only project), the shared library via pkg-config, and
# the installed amalgamation found with pkg-config --variable=amalgamation.
# Usage: install_test.sh BUILD_DIR TESTS_INSTALL_DIR PROJECT_SOURCE_DIR
set -eu
build=$1 source=$2 project=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# check_tree ROOT: ROOT is the install prefix as it is on disk now.
check_tree() {
  root=$1 out=$work/consumers-$(basename "$1")
  pcdir=$(dirname "$(find "$root" -name nsalloc.pc)")
  libdir=$(dirname "$pcdir")
  echo "== $root (libdir ${libdir#"$root"/})"
  cmake -S "$source/consumer" -B "$out/c" -DCMAKE_PREFIX_PATH="$root" > /dev/null
  cmake --build "$out/c" > /dev/null
  "$out/c/consumer_private"
  "$out/c/consumer_uv"
  LD_LIBRARY_PATH="$libdir" "$out/c/consumer_shared"
  cmake -S "$source/consumer_cxx" -B "$out/cxx" -DCMAKE_PREFIX_PATH="$root" > /dev/null
  cmake --build "$out/cxx" > /dev/null
  "$out/cxx/consumer_cxx" "$out/cxx/libcxxplug.so"
  export PKG_CONFIG_PATH="$pcdir"
  # shellcheck disable=SC2046
  cc -o "$out/pc" "$source/consumer/consumer.c" -DEXPECTED_PREFIX='"nsalloc_"' \
    $(pkg-config --cflags --libs nsalloc)
  LD_LIBRARY_PATH="$libdir" "$out/pc"
  amalgamation=$(pkg-config --variable=amalgamation nsalloc)
  # shellcheck disable=SC2046
  cc -o "$out/amalg" -DNSALLOC_PREFIX=amalg_ -DEXPECTED_PREFIX='"amalg_"' \
    -I"$(dirname "$amalgamation")" "$amalgamation" "$source/consumer/consumer.c" -pthread
  "$out/amalg"
  # shellcheck disable=SC2046
  cc -o "$out/amalg_uv" -DNSALLOC_PREFIX=amalg_uv_ -I"$(dirname "$amalgamation")" \
    "$amalgamation" "$source/consumer/uv_consumer.c" -pthread $(pkg-config --cflags --libs libuv)
  "$out/amalg_uv"
  unset PKG_CONFIG_PATH
}

cmake --install "$build" --prefix "$work/local" > /dev/null
check_tree "$work/local"
# The full build installs the Lua module and host too.
out=$(LUA_CPATH="$work/local/lib/lua/5.4/?.so" lua5.4 -l nsalloc -e 'print(nsalloc.stats().copy)')
[ "$out" = "nslmod_" ] || { echo "installed Lua module: '$out'"; exit 1; }
out=$("$work/local/bin/nsalloc-lua" -e 'print(_VERSION)')
[ "$out" = "Lua 5.4" ] || { echo "installed nsalloc-lua: '$out'"; exit 1; }

# The /usr layout needs its own configure (GNUInstallDirs picks the libdir
# from the prefix); the core's targets are all it installs in this subset.
cmake -S "$project" -B "$work/build-usr" -DCMAKE_INSTALL_PREFIX=/usr -DNSALLOC_CROSS_SUBSET=ON \
  -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$work/build-usr" -j 2 --target nsalloc_static nsalloc_shared nsalloc_override \
  nsalloc_amalgamation > /dev/null
DESTDIR="$work/root" cmake --install "$work/build-usr" > /dev/null
check_tree "$work/root/usr"
