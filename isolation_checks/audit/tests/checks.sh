# checks.sh - the assertions the audit's test scripts share (sourced).
# Each prints "ok: ..." or "FAIL: ..." and counts; `checks_done` prints the
# totals and is the script's exit status.
failures=0 passes=0
pass() { passes=$((passes + 1)); echo "ok: $1"; }
fail() { failures=$((failures + 1)); echo "FAIL: $1"; }
expect_status() { # expect_status WANT DESCRIPTION (uses $status)
  if [ "$status" = "$1" ]; then pass "$2"; else fail "$2: exit status $status, expected $1"; fi
}
expect_line() { # expect_line FILE LINE DESCRIPTION
  if grep -qxF -- "$2" "$1"; then pass "$3"; else fail "$3: no line '$2' in:" && cat "$1"; fi
}
expect_no_line() { # expect_no_line FILE LINE DESCRIPTION
  if grep -qxF -- "$2" "$1"; then fail "$3: unexpected line '$2'"; else pass "$3"; fi
}
expect_match() { # expect_match FILE EXTENDED-REGEX DESCRIPTION
  if grep -qxE -- "$2" "$1"; then pass "$3"; else fail "$3: no line matching '$2' in:" && cat "$1"; fi
}
expect_no_match() { # expect_no_match FILE EXTENDED-REGEX DESCRIPTION
  if grep -qE -- "$2" "$1"; then fail "$3: unexpected '$2' in:" && cat "$1"; else pass "$3"; fi
}
checks_done() {
  echo "$passes passed, $failures failed"
  [ "$failures" = 0 ]
}
