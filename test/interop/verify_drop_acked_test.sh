#!/usr/bin/env bash
# sluice verify finds the planted bug SLUICE_BUG=drop-acked of a -tags sluicebug build: the
# leader acknowledges every 50th produce batch without appending it: acknowledged values no
# reader ever sees (lost-write).
# Exit status 1 and lost-write anomalies in the summary.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/verify_lib.sh"
sluice_init verify_drop_acked
against_kafka_ref && { echo "verify_drop_acked: plants a bug in Sluice; skipped with SLUICE_INTEROP_BROKER=kafka-ref"; exit 0; }
sluice_build
verify_expect_bug drop-acked lost-write --faults none --duration 20s --rate 400
step "PASS"
