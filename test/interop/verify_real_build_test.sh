#!/usr/bin/env bash
# The real build under the hw-ahead test's run (3 local nodes, RF 3, min.insync.replicas 2,
# leaders killed with kill -9 every few seconds, lazy follower fetching) gives no anomaly and
# exit 0, with SLUICE_BUG set: a normal build has no planted-bug switch (its symbol is absent
# from the binary, present in the -tags sluicebug one).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/verify_lib.sh"
sluice_init verify_real_build
against_kafka_ref && { echo "verify_real_build: runs Sluice's own nodes; skipped with SLUICE_INTEROP_BROKER=kafka-ref"; exit 0; }
sluice_build
verify_build_bug
(cd "$repo" && go tool nm "$SLUICE_BIN") > "$work/nm.normal" || fail "go tool nm $SLUICE_BIN"
(cd "$repo" && go tool nm "$bug_bin") > "$work/nm.bug" || fail "go tool nm $bug_bin"
grep -q 'replication\.plantedBug' "$work/nm.normal" && fail "the normal build holds the planted-bug switch"
grep -q 'replication\.plantedBug' "$work/nm.bug" || fail "the sluicebug build has no planted-bug switch (is the symbol renamed?)"
check "replication.plantedBug is in the sluicebug build only"

step "sluice verify on 3 local nodes of the normal build, SLUICE_BUG=hw-ahead in the environment"
SLUICE_BUG=hw-ahead verify_run "$work/real.out" --seed 7 --faults kill --fault-interval 2s --fault-hold 1s \
  --duration 25s --rate 800 --override replica.fetch.min.bytes=1048576 --override replica.fetch.wait.max.ms=400
[[ "$verify_rc" == 0 ]] || { verify_show "$work/real.out"; fail "exit status $verify_rc, want 0"; }
grep -q '^VALID: no anomaly found' "$work/real.out" || { verify_show "$work/real.out"; fail "no VALID verdict"; }
[[ "$(verify_count total)" == 0 ]] || fail "the anomalies' total is $(verify_count total)"
kills="$(awk '/^faults by kind/ { f=1 } f && $1 == "kill" { print $2; exit }' "$work/real.out")"
((${kills:-0} >= 2)) || { verify_show "$work/real.out"; fail "only ${kills:-0} kills were injected"; }
acks="$(awk '$1 == "acks" { gsub(",", "", $2); print $2; exit }' "$work/real.out")"
((${acks:-0} > 1000)) || { verify_show "$work/real.out"; fail "only ${acks:-0} acknowledged sends"; }
grep -q "planted bug" "$verify_dir"/cluster/node-*.log && fail "a node of the normal build logged a planted bug"
for f in report.html history.jsonl anomalies.txt summary.txt cluster/node-1.log; do
  [[ -s "$verify_dir/$f" ]] || fail "the results directory has no $f"
done
check "normal build: exit 0, 0 anomalies over $acks acknowledged sends and $kills kill -9 faults; results in place"
step "PASS"
