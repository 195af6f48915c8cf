#!/usr/bin/env bash
# sluice verify finds the planted bug SLUICE_BUG=hw-ahead of a -tags sluicebug build: the high
# watermark follows the leader's log end without waiting for the ISR, so acks=all answers
# before the followers have the records; killing leaders (kill -9) then loses acknowledged
# writes (lost-write). Followers fetch lazily (replica.fetch.min.bytes 1 MiB, wait 400 ms:
# legal settings, under which a correct build only acknowledges later, see
# verify_real_build_test.sh) so every kill finds acknowledged records the followers lack.
# Exit status 1 and lost-write anomalies in the summary.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/verify_lib.sh"
sluice_init verify_hw_ahead
against_kafka_ref && { echo "verify_hw_ahead: plants a bug in Sluice; skipped with SLUICE_INTEROP_BROKER=kafka-ref"; exit 0; }
sluice_build
verify_expect_bug hw-ahead lost-write --faults kill --fault-interval 2s --fault-hold 1s --duration 25s --rate 800 --override replica.fetch.min.bytes=1048576 --override replica.fetch.wait.max.ms=400
step "PASS"
