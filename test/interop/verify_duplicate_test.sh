#!/usr/bin/env bash
# sluice verify finds the planted bug SLUICE_BUG=duplicate of a -tags sluicebug build: every
# 50th produce batch is appended twice: one value at two offsets (duplicate).
# Exit status 1 and duplicate anomalies in the summary.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/verify_lib.sh"
sluice_init verify_duplicate
against_kafka_ref && { echo "verify_duplicate: plants a bug in Sluice; skipped with SLUICE_INTEROP_BROKER=kafka-ref"; exit 0; }
sluice_build
verify_expect_bug duplicate duplicate --faults none --duration 20s --rate 400
step "PASS"
