#!/bin/sh
# Installs the Debian packages the build and the tests need: the core list
# below plus every package named in scripts/*-deps.txt (one per line). Does
# nothing when everything is already installed, so `make` stays fast.
set -eu
cd "$(dirname "$0")"
packages="build-essential cmake valgrind clang clang-format libclang-rt-14-dev pkg-config"
for list in *-deps.txt; do
  [ -e "$list" ] || continue
  packages="$packages $(grep -v '^#' "$list" | tr '\n' ' ')"
done
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "install-deps: missing Debian packages:$missing (run as root to install)" >&2
  exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
