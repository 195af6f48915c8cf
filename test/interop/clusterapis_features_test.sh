#!/usr/bin/env bash
# kafka-features (the pinned Kafka's FeatureCommand) against a real `sluice server`
# (SLUICE_INTEROP_BROKER=kafka-ref: against the reference Kafka): describe, downgrade with
# and without --dry-run, upgrade back, refusals (a downgrade to a newer level, a level
# beyond the supported range, a downgrade without the flag, a metadata.version downgrade),
# disable and re-enable, --release-version and --metadata. Each answer is checked by the
# next describe (upgrades are live). Epochs are blanked, kraft.version's finalized level
# too (the reference is formatted --standalone, a dynamic quorum at 1; this Sluice node
# has a static quorum, 0, as Kafka's would), and the two features Sluice does
# not serve (streams.version: streams groups; eligible.leader.replicas.version: ELR) are
# left out of the transcript, which must equal clusterapis_features.expected, the pinned
# Kafka's; the Sluice-only answers for them are checked separately.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init clusterapis_features
sluice_build
sluice_start
b="$SLUICE_BOOTSTRAP"

features() { timeout 120 "$ref" tool features --bootstrap-server "$b" "$@" 2>&1; }
t() {
  echo "\$ kafka-features $*"
  features "$@" | sed -E 's/Epoch: [0-9]+/Epoch: <n>/; s/(kraft\.version .*FinalizedVersionLevel: )[01]/\1<quorum>/' |
    grep -Ev '^(\[|[[:space:]]+at )|streams\.version|eligible\.leader\.replicas\.version' || true
}
{
  t describe
  t downgrade --feature share.version=1 --dry-run
  t describe
  t downgrade --feature share.version=1
  t describe
  t upgrade --feature share.version=2
  t upgrade --feature share.version=1
  t downgrade --feature share.version=3
  t upgrade --feature transaction.version=3
  t upgrade --feature no.such.version=1
  t disable --feature group.version
  t describe
  t upgrade --feature group.version=1
  t downgrade --metadata 4.3-IV0
  t downgrade --feature metadata.version=30 --unsafe
  t describe
} > "$work/transcript.txt"
[[ -n "${CLUSTERAPIS_RECORD:-}" ]] && cp "$work/transcript.txt" "$CLUSTERAPIS_RECORD"
if ! diff -u "$here/clusterapis_features.expected" "$work/transcript.txt" > "$work/diff.txt"; then
  cat "$work/diff.txt"
  fail "kafka-features' answers differ from the pinned Kafka's (clusterapis_features.expected)"
fi
check "kafka-features' answers equal the pinned Kafka's"
if ! against_kafka_ref; then
  # Not served, so supported only at 0 and refused above it.
  features describe | grep -E 'eligible\.leader\.replicas\.version.*SupportedMaxVersion: 0 .*FinalizedVersionLevel: 0' ||
    fail "ELR advertised above 0"
  features describe | grep -E 'streams\.version.*SupportedMaxVersion: 0 .*FinalizedVersionLevel: 0' ||
    fail "streams.version advertised above 0"
  features upgrade --feature eligible.leader.replicas.version=1 > "$work/elr.txt" || true
  grep -q "Local controller 1 only supports versions 0-0" "$work/elr.txt" || fail "ELR 1 not refused"
  check "eligible.leader.replicas.version and streams.version advertised at 0 and refused above"
fi
sluice_stop
step "PASS in $((SECONDS - t0))s"
