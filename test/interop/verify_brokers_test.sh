#!/usr/bin/env bash
# sluice verify --brokers on a cluster it did not start: a single-node `sluice server` (or
# the reference Kafka with SLUICE_INTEROP_BROKER=kafka-ref), the queue workload with RF 1,
# only the admin-API faults: the run completes, exits 0 and prints a VALID verdict; a second
# run on the same cluster does too (each run writes a topic and group of its own). Bad
# flags exit 2 with a message naming the flag; a cluster that cannot be reached gives no
# verdict (exit 2), never "valid".
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/verify_lib.sh"
sluice_init verify_brokers
sluice_build
# The sluice binary runs the check even when the cluster is the reference Kafka.
against_kafka_ref && SLUICE_INTEROP_BROKER=sluice sluice_build

expect_usage_error() {
  local want="$1" rc=0
  shift
  "$SLUICE_BIN" verify --results "$work/bad" "$@" > "$work/bad.out" 2>&1 || rc=$?
  [[ "$rc" == 2 ]] || { cat "$work/bad.out" >&2; fail "sluice verify $*: exit $rc, want 2"; }
  grep -q -- "$want" "$work/bad.out" || { cat "$work/bad.out" >&2; fail "sluice verify $*: no '$want' in the message"; }
  check "sluice verify $*: exit 2, $(head -n 1 "$work/bad.out")"
}
expect_usage_error "unknown flag: --bogus" --bogus
expect_usage_error 'unknown fault kind' --faults kill,bogus
expect_usage_error 'above --replication-factor' --replication-factor 2 --min-insync-replicas 3
expect_usage_error 'workload "bank"' --workload bank
read -r -a dead <<<"$(free_ports 1)"
expect_usage_error 'no verdict' --brokers "127.0.0.1:${dead[0]}" --duration 5s

sluice_start
step "sluice verify --brokers $SLUICE_BOOTSTRAP (RF 1, admin faults only)"
verify_run "$work/ext.out" --brokers "$SLUICE_BOOTSTRAP" --replication-factor 1 --min-insync-replicas 1 \
  --duration 20s --rate 300 --seed 11
[[ "$verify_rc" == 0 ]] || { verify_show "$work/ext.out"; fail "exit status $verify_rc, want 0"; }
grep -q '^VALID: no anomaly found' "$work/ext.out" || { verify_show "$work/ext.out"; fail "no VALID verdict"; }
grep -q "external: $SLUICE_BOOTSTRAP" "$work/ext.out" || fail "the summary does not name the external cluster"
[[ ! -d "$verify_dir/cluster" ]] || fail "a cluster was started despite --brokers"
acks="$(awk '$1 == "acks" { gsub(",", "", $2); print $2; exit }' "$work/ext.out")"
finals="$(awk '$1 == "final" && $2 == "reads" { gsub(",", "", $4); print $4; exit }' "$work/ext.out")"
((${acks:-0} > 1000)) || { verify_show "$work/ext.out"; fail "only ${acks:-0} acknowledged sends"; }
((${finals:-0} >= acks)) || { verify_show "$work/ext.out"; fail "the final read got ${finals:-0} records of $acks acknowledged"; }
check "--brokers: exit 0, VALID, $acks acknowledged sends all read back ($finals records in the final read)"
sleep 1 # a new second: a new results directory and topic name
verify_run "$work/ext2.out" --brokers "$SLUICE_BOOTSTRAP" --replication-factor 1 --min-insync-replicas 1 \
  --duration 8s --rate 300 --seed 12
[[ "$verify_rc" == 0 ]] || { verify_show "$work/ext2.out"; fail "second run: exit status $verify_rc, want 0"; }
check "a second run on the same cluster: exit 0, $(grep '^VALID' "$work/ext2.out")"
step "PASS"
