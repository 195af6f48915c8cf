#!/usr/bin/env bash
# The kill -9 test (test/killtest, Go, franz-go with its default acks=all idempotent
# producer): records keep flowing while `sluice server` is SIGKILLed and restarted on the
# same data dir twice, ~2 s apart; every acknowledged record must read back exactly once,
# at its acknowledged offset, in send order per partition (again after a clean restart),
# and records must be acknowledged after each restart. Bounded to 55 s by the program.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init killtest
against_kafka_ref && fail "the kill test needs Sluice's binary and data dir; it has no kafka-ref mode"

sluice_build
(cd "$repo" && go build -o "$work/killtest" ./test/killtest) || fail "go build ./test/killtest"
check "kill -9 twice under an idempotent acks=all producer: no acknowledged record lost, duplicated or reordered"
"$work/killtest" --bin "$SLUICE_BIN" --timeout 55s || fail "killtest (its output above says which check)"
step "PASS in $((SECONDS - t0))s"
