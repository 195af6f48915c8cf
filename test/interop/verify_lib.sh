# Helpers of the verify_*_test.sh tests (sluice verify on real processes); source it after
# sluice_lib.sh and sluice_init.
#
#   verify_build_bug      bug_bin: a binary built with -tags sluicebug (SLUICE_BUG picks a
#                         planted bug), SLUICE_BUG_BIN when given; cached beside sluice_build's
#   verify_run OUT ARGS   runs `$SLUICE_BIN verify ARGS` with its results under $work/results,
#                         stdout in OUT, stderr in OUT.err; sets verify_rc and verify_dir (the
#                         run's results directory)
#   verify_count KIND     the count the run's summary.txt gives anomaly KIND (total: all)

verify_build_bug() {
  if [[ -n "${SLUICE_BUG_BIN:-}" ]]; then
    bug_bin="$SLUICE_BUG_BIN"
    return 0
  fi
  local dir="${TMPDIR:-/tmp}/sluice-interop-bin.$(id -u)"
  mkdir -p "$dir"
  bug_bin="$dir/sluice-bug"
  (
    flock 9
    cd "$repo" && go build -tags sluicebug -o "$bug_bin" ./cmd/sluice
  ) 9> "$dir/lock" > "$work/build-bug.log" 2>&1 || { cat "$work/build-bug.log" >&2; fail "go build -tags sluicebug"; }
}

verify_run() {
  local out="$1"
  shift
  verify_rc=0
  timeout 170 "$SLUICE_BIN" verify --results "$work/results" "$@" > "$out" 2> "$out.err" || verify_rc=$?
  verify_dir="$(grep -o "$work/results/[^ ]*/report.html" "$out" | head -n 1 | xargs -r dirname)"
  if [[ -n "$verify_dir" && -f "$verify_dir/cluster/node-1.log" ]]; then
    SLUICE_LOG="$verify_dir/cluster/node-1.log"
  fi
}

verify_count() {
  [[ -f "$verify_dir/summary.txt" ]] || { echo -1; return; }
  awk -v k="$1" '/^anomalies by kind/ { a=1 } a && $1 == k { gsub(",", "", $2); print $2; found=1; exit }
    END { if (!found) print -1 }' "$verify_dir/summary.txt"
}

# verify_show prints the run's output, for a failure's context.
verify_show() {
  echo "---- sluice verify stdout ($1)" >&2
  cat "$1" >&2
  echo "---- last 30 lines of its stderr" >&2
  tail -n 30 "$1.err" >&2
  echo "----" >&2
}

# verify_expect_bug BUG KIND ARGS: the sluicebug binary with SLUICE_BUG=BUG under
# `sluice verify ARGS` on 3 local nodes exits 1 and its summary counts anomalies of KIND.
verify_expect_bug() {
  local bug="$1" kind="$2"
  shift 2
  verify_build_bug
  step "sluice verify on 3 local nodes of the sluicebug build, SLUICE_BUG=$bug: $*"
  SLUICE_BUG="$bug" verify_run "$work/$bug.out" --binary "$bug_bin" --seed 7 "$@"
  [[ "$verify_rc" == 1 ]] || { verify_show "$work/$bug.out"; fail "SLUICE_BUG=$bug: exit status $verify_rc, want 1 (anomalies found)"; }
  local n
  n="$(verify_count "$kind")"
  ((n > 0)) || { verify_show "$work/$bug.out"; fail "SLUICE_BUG=$bug: the summary counts $n $kind anomalies, want some"; }
  grep -q "^INVALID: " "$work/$bug.out" || { verify_show "$work/$bug.out"; fail "no INVALID verdict printed"; }
  grep -q "planted bug" "$verify_dir"/cluster/node-*.log || fail "no node logged the planted bug"
  check "SLUICE_BUG=$bug: exit 1, $n $kind anomalies ($(grep '^INVALID' "$work/$bug.out"))"
}
