#!/bin/sh
# Installs the build into a scratch prefix, then builds and runs a consumer
# project with find_package(nsalloc) and a program compiled via pkg-config.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1 source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" > /dev/null
cmake -S "$source/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" > /dev/null
cmake --build "$work/consumer" > /dev/null
"$work/consumer/consumer_private"
LD_LIBRARY_PATH="$work/prefix/lib" "$work/consumer/consumer_shared"
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
# shellcheck disable=SC2046
cc -o "$work/pc" "$source/consumer/consumer.c" -DEXPECTED_PREFIX='"nsalloc_"' \
  $(pkg-config --cflags --libs nsalloc)
LD_LIBRARY_PATH="$work/prefix/lib" "$work/pc"
