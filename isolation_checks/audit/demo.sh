#!/bin/sh
# demo.sh BUILD_DIR: the `make demo` scene for nsalloc-audit.
#
# Audits the artifacts the build produced (nsalloc's libraries and the demo's
# modules, each carrying a private copy), then the same set plus one
# deliberately unsafe module: a copy built with default visibility. Findings
# are the point of the scene, so they never fail the demo; a missing tool does.
set -u
build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
tool=$build/isolation_checks/audit/nsalloc-audit
[ -x "$tool" ] || {
  echo "demo: $tool is not built" >&2
  exit 1
}
cd "$build" || exit 1

artifacts=""
for f in core/libnsalloc.so.* core/libnsalloc.a core/libnsalloc-override.so tests/demo/*.so \
  tests/demo/nsalloc-demo; do
  [ -f "$f" ] && [ ! -L "$f" ] && artifacts="$artifacts $f"
done

echo "--- nsalloc-audit: the demo's own artifacts"
# shellcheck disable=SC2086
"$tool" $artifacts
echo "(exit status $?)"

unsafe_dir=$build/isolation_checks/audit/demo
mkdir -p "$unsafe_dir"
unsafe=$unsafe_dir/leaky_copy.so
${CC:-cc} -O1 -fPIC -shared -DPREFIX=demo_a_ -DVISIBILITY='"default"' -DENTRY=PyInit_leaky_copy \
  -o "$unsafe" "$here/fixtures/nsalloc_copy.c"
echo
echo "--- nsalloc-audit: the same artifacts plus a module whose copy has default visibility"
# shellcheck disable=SC2086
"$tool" $artifacts "isolation_checks/audit/demo/leaky_copy.so"
echo "(exit status $?: findings are what this scene shows)"
exit 0
