#!/bin/sh
# The Windows x86-64 port: cross-build with mingw-w64 and run the portable
# core tests and the Windows tests under wine (docs/windows.md).
#   scripts/windows-test.sh [build-dir]      (default: build-win)
# Installs its own Debian packages (not in scripts/*-deps.txt, so `make test`
# does not pull in wine) and uses a private, temporary wine prefix.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build-win}

missing=""
for p in gcc-mingw-w64-x86-64 wine wine64; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "windows-test: installing$missing"
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
fi

cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64-x86_64.cmake \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j2

WINEPREFIX=$(mktemp -d /tmp/nsalloc-wine.XXXXXX)
WINEDEBUG=-all
export WINEPREFIX WINEDEBUG
trap 'wineserver -k 2>/dev/null || true; rm -rf "$WINEPREFIX"' EXIT
# Create the prefix once (wine's slow first start), and keep one wineserver
# for the whole run instead of one per test.
start=$(date +%s)
wineserver -p
wineboot -i >/dev/null 2>&1
echo "windows-test: wine prefix ready in $(($(date +%s) - start)) s"
# core.random and the other segment shifts are the same portable code the
# native build runs; under wine they cost minutes and prove nothing new.
ctest --test-dir "$build" --output-on-failure -j2 -E '^core\.(random|api_shift|random_shift)'
