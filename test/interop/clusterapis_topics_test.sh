#!/usr/bin/env bash
# kafka-topics --describe (the pinned Kafka's TopicCommand) against a real `sluice server`
# (SLUICE_INTEROP_BROKER=kafka-ref: against the reference Kafka). Kafka 4.4's Admin
# describeTopics asks DescribeTopicPartitions (KIP-966) when the broker advertises it,
# paging with --partition-size-limit-per-response; the answer shows it: "Elr:" and
# "LastKnownElr:" are lists from DescribeTopicPartitions and "N/A" from Metadata. A topic
# of 25 partitions is described with a page of 7 (4 pages), every topic with pages of 4
# (the cursor crossing topic boundaries), one topic by name, and a missing one. The
# transcript, topic ids blanked, must equal clusterapis_topics.expected, the pinned
# Kafka's: run with SLUICE_INTEROP_BROKER=kafka-ref to check it still is.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init clusterapis_topics
sluice_build
sluice_start
b="$SLUICE_BOOTSTRAP"

tool() { timeout 120 "$ref" tool topics --bootstrap-server "$b" "$@" 2>&1; }
tool --create --topic wide --partitions 25 --replication-factor 1 > /dev/null || fail "create wide"
tool --create --topic narrow --partitions 3 --replication-factor 1 > /dev/null || fail "create narrow"
tool --create --topic mid --partitions 5 --replication-factor 1 > /dev/null || fail "create mid"
check "topics wide (25 partitions), narrow (3), mid (5) created"

t() {
  echo "\$ kafka-topics $*"
  tool "$@" | sed -E 's/TopicId: [A-Za-z0-9_-]+/TopicId: <id>/; s/Configs: .*/Configs: <broker-dependent>/' | grep -Ev '^(\[|[[:space:]]+at )' || true
}
{
  t --describe --topic wide --partition-size-limit-per-response 7
  t --describe --exclude-internal --partition-size-limit-per-response 4
  t --describe --topic narrow
  t --describe --topic missing
} > "$work/transcript.txt"
grep -q 'Elr: N/A' "$work/transcript.txt" && fail "kafka-topics used Metadata (Elr: N/A), not DescribeTopicPartitions"
[[ "$(grep -c 'Topic: wide	Partition:' "$work/transcript.txt")" == 50 ]] || {
  cat "$work/transcript.txt"; fail "wide's 25 partitions not all described twice"; }
check "kafka-topics --describe read 25 partitions through pages of 7 and of 4"
[[ -n "${CLUSTERAPIS_RECORD:-}" ]] && cp "$work/transcript.txt" "$CLUSTERAPIS_RECORD"
if ! diff -u "$here/clusterapis_topics.expected" "$work/transcript.txt" > "$work/diff.txt"; then
  cat "$work/diff.txt"
  fail "kafka-topics' answers differ from the pinned Kafka's (clusterapis_topics.expected)"
fi
step "kafka-topics' answers equal the pinned Kafka's"
sluice_stop
step "PASS in $((SECONDS - t0))s"
