#!/usr/bin/env bash
# Share groups (KIP-932, issue 21) with the Java KafkaShareConsumer of the pinned
# kafka-clients (test/interop/share) against a real `sluice server`
# (SLUICE_INTEROP_BROKER=kafka-ref: against the reference Kafka). Client settings are the
# defaults except share.acknowledgement.mode=explicit where a check says so; each group
# gets share.auto.offset.reset=earliest as a group config (incrementalAlterConfigs on the
# GROUP resource, as kafka-configs --entity-type groups does), the lock-timeout check also
# share.record.lock.duration.ms and share.delivery.count.limit. The broker's share
# heartbeat interval is lowered to 1 s (Kafka's default and minimum are 5 s) so members
# get their assignments quickly. Checks, in order (the first failure ends the test):
#   features      share.version finalized at 1 or more (DescribeFeatures)
#   implicit      10 records on 2 partitions arrive once each (delivery count 1), are
#                 accepted implicitly; a second poll round and a new member get nothing;
#                 ListShareGroupOffsets then shows lag 0 on both partitions
#   explicit      the same with acknowledge(record) and commitSync for each record
#   five          five consumers on a 2-partition topic all receive records; 400 records
#                 accepted exactly once each; counts printed
#   release       a record released by one consumer goes to another (member ids printed)
#                 with delivery count 2
#   reject        a rejected record is never redelivered (lag 0: it is archived)
#   lock-timeout  a record acquired by members that stay silent (no poll, no ack, no
#                 close: only the lock can free it) comes back after the lock duration
#                 with the next delivery count, and after share.delivery.count.limit
#                 deliveries is archived
#   double-ack    acknowledging a record twice: the client refuses the second
# SHARE_LOCK_MS (default 15000, the least Kafka's default
# group.share.min.record.lock.duration.ms allows) and SHARE_DELIVERY_LIMIT (default 2, the
# least group.share.min.delivery.count.limit allows) set the lock-timeout check's group;
# SHARE_CHECKS="NAME..." runs only the checks named.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init share_groups
share_run="$here/share/run"
lock_ms="${SHARE_LOCK_MS:-15000}"
limit="${SHARE_DELIVERY_LIMIT:-2}"

sluice_overrides+=(
  "group.share.heartbeat.interval.ms=1000"
  "group.share.min.heartbeat.interval.ms=1000"
)
sluice_build
"$share_run" build
sluice_start
b="$SLUICE_BOOTSTRAP"

# scenario SECONDS NAME ARGS...: one JVM, bounded by SECONDS; its output is shown.
scenario() {
  local limit_s="$1" name="$2" rc=0 started=$SECONDS; shift 2
  if [[ -n "${SHARE_CHECKS:-}" && " $SHARE_CHECKS " != *" $name "* ]]; then
    step "skipped: $name (SHARE_CHECKS)"
    return
  fi
  timeout --kill-after=10 "$limit_s" "$share_run" --bootstrap "$b" "$name" "$@" || rc=$?
  [[ $rc -ne 124 && $rc -ne 137 ]] || fail "$name did not finish within ${limit_s}s"
  [[ $rc -eq 0 ]] || fail "$name (exit $rc)"
  step "ok: $name in $((SECONDS - started))s"
}

check "features: share.version is finalized (share groups enabled)"
scenario 60 features
check "implicit: records consumed and accepted implicitly; nothing delivered twice"
scenario 120 implicit share-implicit share-implicit
check "explicit: share.acknowledgement.mode=explicit, accept each record and commitSync; nothing redelivered"
scenario 120 explicit share-explicit share-explicit
check "five: five consumers on a 2-partition topic all receive work; every record accepted once"
scenario 180 five share-five share-five
check "release: a released record is redelivered to another consumer with delivery count 2"
scenario 120 release share-release share-release
check "reject: a rejected record is never redelivered"
scenario 120 reject share-reject share-reject
check "lock-timeout: an unacknowledged record returns after ${lock_ms} ms and is archived after $limit deliveries"
scenario $((lock_ms * limit / 1000 + 150)) lock-timeout share-lock share-lock "$lock_ms" "$limit"
check "double-ack: acknowledging a record again after commitSync is refused by the client"
scenario 120 double-ack share-double-ack share-double-ack

sluice_stop
step "PASS in $((SECONDS - t0))s"
