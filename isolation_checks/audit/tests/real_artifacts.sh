#!/bin/sh
# real_artifacts.sh TOOL WORK
#
# Debian's own allocator libraries are identified, unstripped and stripped.
# A missing library is a failure naming its package (scripts/audit-deps.txt),
# never a silent pass.
set -u
tool=$1 work=$2
failures=0 passes=0
pass() { passes=$((passes + 1)); echo "ok: $1"; }
fail() { failures=$((failures + 1)); echo "FAIL: $1"; }
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
lib=/usr/lib/$multiarch
scudo=$(ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.scudo_standalone-x86_64.so 2>/dev/null | head -n 1)

rm -rf "$work"
mkdir -p "$work"
check() { # check PATH PACKAGE "allocators: ..." [EXTRA-LINE]
  path=$1 package=$2 want=$3 extra=${4:-}
  if [ ! -e "$path" ]; then
    fail "$path is missing: install the Debian package $package"
    return
  fi
  files=$path
  case $path in
  *.a) ;; # a stripped archive cannot be linked: nothing ships like that
  *)
    files="$path $work/$(basename "$path").stripped"
    strip --strip-all -o "$work/$(basename "$path").stripped" "$path"
    ;;
  esac
  for file in $files; do
    "$tool" "$file" >"$work/report.txt" 2>&1
    got=$(grep '^  allocators:' "$work/report.txt")
    if [ "$got" = "  $want" ]; then pass "$(basename "$file"): $want"; else
      fail "$(basename "$file"): got '$got', expected '  $want'"
    fi
    if [ -n "$extra" ]; then
      if grep -qxF -- "$extra" "$work/report.txt"; then pass "$(basename "$file"): $extra"; else
        fail "$(basename "$file"): no line '$extra'"
      fi
    fi
  done
}
check "$lib/libjemalloc.so.2" libjemalloc2 "allocators: jemalloc, interposer" "  tls: static (DF_STATIC_TLS)"
check "$lib/libtcmalloc_minimal.so.4" libtcmalloc-minimal4 "allocators: tcmalloc, interposer"
check "$lib/libmimalloc.so.2" libmimalloc2.0 "allocators: mimalloc, interposer"
check "${scudo:-libclang_rt.scudo_standalone-x86_64.so}" libclang-rt-14-dev "allocators: scudo, interposer"
check "$lib/libc.so.6" libc6 "allocators: dlmalloc, interposer" \
  "  role: system C/C++ runtime (not counted in set-level findings)"
check "$lib/libffi.so.8" libffi8 "allocators: none"
check "$lib/libgc.so.1" libgc1 "allocators: boehm-gc"
# The rest of the C library is the system runtime too (the static libc.a included).
runtime="  role: system C/C++ runtime (not counted in set-level findings)"
check "$lib/libm.so.6" libc6 "allocators: none" "$runtime"
check "$lib/libresolv.so.2" libc6 "allocators: none" "$runtime"
check "$lib/libc.a" libc6-dev "allocators: dlmalloc, interposer" "$runtime"
check "$lib/libjemalloc_pic.a" libjemalloc-dev "allocators: jemalloc, interposer" \
  "  type: static archive, 63 ELF members (ELF64 LSB relocatable, x86-64)"

# Set level: Debian's jemalloc and a module bundling it collide; libc does not count.
"$tool" "$lib/libjemalloc.so.2" "$lib/libc.so.6" >"$work/set.txt" 2>&1
status=$?
if [ "$status" = 0 ]; then pass "libjemalloc.so.2 beside libc.so.6: exit status 0"; else
  fail "libjemalloc.so.2 beside libc.so.6: exit status $status" && cat "$work/set.txt"
fi
if grep -q 'duplicate-export' "$work/set.txt"; then
  fail "libc's malloc counted as a duplicate export"
else
  pass "libc is the process allocator, not a second copy"
fi

echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
