#!/bin/sh
# process.sh TOOL WORK MODE ARG...
#
# nsalloc-audit --pid on real running processes: it audits what the process
# has mapped, deleted files included, and reports the copies it holds and
# which are duplicates. Each MODE starts its processes, audits them, and
# stops them:
#   fixtures FIXTURES     a python3 that dlopen()ed two jemalloc NIFs and a
#                         module whose file it then deleted; the same with one
#                         NIF (negative control); a process gone; a process
#                         another user cannot read (as nobody, when root)
#   python MODULE_DIR     a python3 that imported the nsalloc extension
#   beam ERL EBIN PRIV    a BEAM that loaded two test NIFs, each bundling an
#                         nsalloc copy; and one that loaded the incident's
#                         two NIFs sharing one thread-local slot
# On 4bbb9f9 --pid does not exist (a usage error, exit 2).
set -u
. "$(dirname "$0")/checks.sh"
tool=$1 work=$2 mode=$3
shift 3

rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null; done' EXIT

# start NAME COMMAND...: runs COMMAND in the background until it prints
# "ready" (at most 60 s); sets pid.
start() {
  name=$1
  shift
  rm -f "$name.fifo"
  mkfifo "$name.fifo"
  "$@" >"$name.fifo" 2>"$name.err" &
  pid=$!
  pids="$pids $pid"
  exec 3<"$name.fifo"
  if ! timeout 60 sh -c 'while read -r line; do [ "$line" = ready ] && exit 0; done; exit 1' <&3; then
    fail "$name did not start: $(cat "$name.err")"
    checks_done
    exit 1
  fi
  exec 3<&-
}
stop() { # stop PID
  kill "$1" 2>/dev/null
  wait "$1" 2>/dev/null
}
audit() { # audit NAME ARG...: sets status and NAME.txt, NAME.err
  name=$1
  shift
  timeout 60 "$tool" "$@" >"$name.txt" 2>"$name.err"
  status=$?
}

# A python3 that dlopen()s each argument; a file argument prefixed with '-'
# is deleted once loaded. The jemalloc fixtures use initial-exec TLS, so
# the loader is given room for it in the static TLS block.
dlopen_py='
import ctypes, os, sys, time
for arg in sys.argv[1:]:
    ctypes.CDLL(arg.lstrip("-"))
    if arg.startswith("-"):
        os.unlink(arg[1:])
print("ready", flush=True)
time.sleep(600)
'

case $mode in
fixtures)
  fixtures=$1
  cp "$fixtures/tls_exported.so" "$work/gone.so"
  export GLIBC_TUNABLES=glibc.rtld.optional_static_tls=1048576
  start two python3 -c "$dlopen_py" "$fixtures/nif_jemalloc_a.so" "$fixtures/nif_jemalloc_b.so" \
    "-$work/gone.so"
  two=$pid
  audit two --pid="$two"
  expect_status 1 "two jemalloc NIFs in one process are a finding (exit 1)"
  expect_line two.txt "  [high] duplicate-family: jemalloc is bundled in 2 artifacts: $fixtures/nif_jemalloc_a.so and $fixtures/nif_jemalloc_b.so" \
    "the duplicate names both mapped files"
  expect_line two.txt "$work/gone.so (deleted)" "a deleted but mapped module is audited"
  expect_match two.txt "  exported TLS: exports [0-9]+ symbols?: .*" \
    "the deleted module's exported TLS is read (through /proc/PID/map_files)"
  expect_match two.txt ".*/python3[.0-9]*" "the interpreter itself is audited"
  audit excluded --pid="$two" "--exclude=*/nif_jemalloc_b.so"
  expect_no_match excluded.txt "duplicate-family" "--exclude applies to mapped files: one jemalloc NIF left"
  expect_line excluded.txt "  1 path excluded: $fixtures/nif_jemalloc_b.so" "the excluded file is counted"
  "$tool" --json --pid="$two" >two.json 2>/dev/null
  python3 -c 'import json,sys; d=json.load(open("two.json")); assert any(a["path"].endswith("gone.so (deleted)") for a in d["artifacts"])' \
    && pass "the JSON report names the deleted file" || fail "the JSON report names the deleted file"
  nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
  if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    # Another user may not read the process (negative control of access).
    $nobody "$tool" --pid="$two" >other.txt 2>other.err
    status=$?
    expect_status 2 "a process another user cannot read is an error (exit 2)"
    expect_line other.err "nsalloc-audit: process $two: cannot read /proc/$two/maps: Permission denied" \
      "the error says why"
  else
    echo "skip: not root or no setpriv: the unreadable-process case is not run"
  fi
  stop "$two"
  # Without CAP_SYS_ADMIN /proc/PID/map_files is closed even on one's own
  # process: files are opened by path, and a deleted one is an error.
  if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && [ -x /usr/bin/python3 ]; then
    mkdir -m 777 nobody
    cp "$fixtures/mod_nsalloc_a.so" "$fixtures/tls_exported.so" nobody/
    chmod 666 nobody/*
    # shellcheck disable=SC2086
    start unprivileged $nobody /usr/bin/python3 -c "$dlopen_py" "$work/nobody/mod_nsalloc_a.so" \
      "-$work/nobody/tls_exported.so"
    $nobody "$tool" --pid="$pid" >unprivileged.txt 2>unprivileged.err
    status=$?
    expect_status 2 "unprivileged: a deleted mapped file cannot be read (exit 2)"
    expect_line unprivileged.err "nsalloc-audit: $work/nobody/tls_exported.so (deleted): deleted since it was mapped, and /proc/PID/map_files cannot be read (it needs CAP_SYS_ADMIN): not audited" \
      "unprivileged: the error names the deleted file and why"
    expect_line unprivileged.txt "$work/nobody/mod_nsalloc_a.so" "unprivileged: files still on disk are audited by path"
    stop "$pid"
  else
    echo "skip: not root, no setpriv or no /usr/bin/python3: the unprivileged case is not run"
  fi
  audit gone --pid="$two"
  expect_status 2 "a process that has exited is an error (exit 2)"
  expect_line gone.err "nsalloc-audit: process $two: no such process" "the error names the process"

  start one python3 -c "$dlopen_py" "$fixtures/nif_jemalloc_a.so"
  audit one --pid="$pid"
  expect_no_match one.txt "duplicate-family: jemalloc" "one jemalloc NIF is no duplicate (negative control)"
  expect_line one.txt "$fixtures/nif_jemalloc_a.so" "the one NIF is audited"
  stop "$pid"
  audit usage --pid=abc
  expect_status 2 "--pid=abc is a usage error"
  ;;
python)
  module_dir=$1
  start py env PYTHONPATH="$module_dir" python3 -c \
    'import nsalloc, time; print(nsalloc.__file__); print("ready", flush=True); time.sleep(600)'
  audit py --pid="$pid"
  expect_match py.txt "$module_dir/nsalloc[^/]*\.so" "the imported extension is audited"
  expect_match py.txt "    nsalloc: prefix=nsalloc_py_ version=[^ ]+ visibility=hidden .*" \
    "its nsalloc copy is reported"
  expect_no_match py.txt "\[(high|medium)\].*nsalloc" "a private copy is no finding"
  stop "$pid"
  ;;
beam)
  erl=$1 ebin=$2 priv=$3
  beam() { # beam MODULE...: an erl that loaded each module's test NIF
    loads=""
    for module in "$@"; do loads="$loads ok = $module:init(\"$priv/$module\", 0),"; done
    start beam "$erl" -noshell -pa "$ebin" -eval "$loads io:format(\"ready~n\"), timer:sleep(600000)."
  }
  beam nsa_t1 nsa_t3
  audit copies --pid="$pid"
  expect_line copies.txt "$priv/nsa_t1.so" "the first NIF is audited"
  expect_line copies.txt "$priv/nsa_t3.so" "the second NIF is audited"
  expect_match copies.txt "    nsalloc: prefix=nif_a_ .*" "the first copy (nif_a_) is reported"
  expect_match copies.txt "    nsalloc: prefix=nif_b_ .*" "the second copy (nif_b_) is reported"
  expect_no_match copies.txt "\[(high|medium)\].*nsa_t" "two private copies are no finding"
  expect_match copies.txt ".*/beam\.smp" "the emulator itself is audited"
  stop "$pid"
  # The incident: two NIFs sharing one thread-local heap slot.
  beam nsa_x1 nsa_x2
  audit incident --pid="$pid"
  expect_status 1 "the incident's NIFs are a finding (exit 1)"
  expect_match incident.txt "  \[[a-z]+\] exported-tls: .*incident_slot_heap.*" \
    "the shared thread-local slot is reported"
  stop "$pid"
  ;;
*)
  fail "unknown mode $mode"
  ;;
esac
checks_done
