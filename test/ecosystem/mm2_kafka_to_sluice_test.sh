#!/usr/bin/env bash
# A migration from Apache Kafka to Sluice with MirrorMaker 2, as docs/ecosystem.md's
# migration guide describes it: the pinned Kafka (bench/kafka-ref, a state dir of its own)
# is the source "kafka", Sluice the target "sluice" (SLUICE_INTEROP_BROKER=kafka-ref: a
# second Kafka), MirrorMaker in dedicated mode with the IdentityReplicationPolicy (topics
# keep their names), checkpoints and sync.group.offsets:
#   - MirrorMaker runs from the start; on Kafka the application's producer writes payments
#     (4 partitions, retention.ms set) in chunks while its consumer group "ledger" reads
#     along and commits after each batch; a second group "audit" reads only the first
#     chunk and stops (a consumer that lags);
#   - cut-over: the producer stops on Kafka, "ledger" drains and stops, MirrorMaker catches
#     up (Sluice has every record); the checkpoints on Sluice (RemoteClusterUtils) and the
#     groups' offsets on Sluice equal their committed offsets on Kafka partition by
#     partition; MirrorMaker stops; the producer starts on Sluice;
#   - both groups start on Sluice (auto.offset.reset=none: no translated offset is a
#     failure) and read exactly the records after their last commit on Kafka, once each:
#     "ledger" only what was produced on Sluice, "audit" the rest of Kafka's records and
#     those; the topic's config arrived too.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../interop/sluice_lib.sh"
sluice_init mm2_kafka_to_sluice
source "$repo/test/ecosystem/mm2/lib.sh"

"$mm2_dir/run" build || fail "building MirrorMaker 2 and the scenario tool (test/ecosystem/mm2)"
sluice_build
kind=sluice
against_kafka_ref && kind=kafka
mm2_cluster kafka kafka
mm2_cluster sluice "$kind"
src="$kafka_bootstrap"
dst="$sluice_bootstrap"

"$ref" tool topics --bootstrap-server "$src" --create --topic payments --partitions 4 --replication-factor 1 \
  --config retention.ms=86400000 > "$work/topics.out" 2>&1 || { cat "$work/topics.out"; fail "creating payments on Kafka"; }

mm2_properties "$src" "$dst" | sed 's/^clusters = source, target/clusters = kafka, sluice/; s/^source\./kafka./; s/^target\./sluice./; s/^source->target/kafka->sluice/; s/^target->source/sluice->kafka/' \
  > "$work/mm2.properties"
cat >> "$work/mm2.properties" <<'EOF'
replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy
kafka->sluice.topics = payments
kafka->sluice.groups = ledger|audit
sync.topic.configs.enabled = true
sync.topic.acls.enabled = false
emit.checkpoints.enabled = true
sync.group.offsets.enabled = true
EOF
mm2_start "$work/mm2.properties"
topic_exists() { "$ref" tool topics --bootstrap-server "$dst" --list 2>/dev/null | grep -qx payments; }
wait_for 120 "MirrorMaker created payments on the target" topic_exists

check "on Kafka: the producer writes payments 0..999, ledger reads along, audit reads 0..199 and stops"
mm2_tool produce "$src" payments 4 0 200 > /dev/null || fail "producing payments 0..199 on Kafka"
mm2_tool consume "$src" audit payments earliest 200 20 > "$work/audit-kafka.txt" || fail "audit on Kafka"
mm2_tool committed "$src" audit > "$work/audit-committed.txt"
step "audit committed on Kafka: $(tr '\n' ' ' < "$work/audit-committed.txt")"
# MirrorMaker translates an offset exactly only while it keeps an offset sync at it; it keeps
# fewer for older offsets, so a group that lags while more records arrive may be
# translated to an earlier offset (reprocessing, never loss). Its checkpoints never go
# back, so once the exact one is emitted the rest of the scenario can rely on it.
translated_ok() {
  mm2_tool translate "$dst" kafka "$1" > "$work/$1-translated.txt" 2>/dev/null \
    && diff -q "$work/$1-committed.txt" "$work/$1-translated.txt" > /dev/null
}
wait_for 90 "audit: the checkpoint translates its offsets exactly" translated_ok audit
mm2_tool consume "$src" ledger payments earliest 1000 60 > "$work/ledger-kafka.txt" &
ledger_pid=$!
for from in 200 400 600 800; do
  mm2_tool produce "$src" payments 4 "$from" 200 > /dev/null || fail "producing payments from $from on Kafka"
done
step "cut-over: the producer stopped on Kafka; ledger drains"
wait "$ledger_pid" || fail "ledger on Kafka"
mm2_tool committed "$src" ledger > "$work/ledger-committed.txt"
step "ledger committed on Kafka: $(tr '\n' ' ' < "$work/ledger-committed.txt")"
values() { grep -v '^position' "$1" | awk '{ print $3 }' | sort; }
want() { seq "$1" "$2" | sed 's/^/v/' | sort; }
diff <(want 0 199) <(values "$work/audit-kafka.txt") > /dev/null || fail "audit did not read exactly v0..v199 on Kafka"
diff <(want 0 999) <(values "$work/ledger-kafka.txt") > /dev/null || fail "ledger did not read exactly v0..v999 on Kafka"

check "MirrorMaker caught up: every record, the translated offsets and the groups' offsets on the target"
wait_for 120 "the target has payments' 1000 records" has_records "$dst" payments 1000
target_group_ok() {
  mm2_tool committed "$dst" "$1" > "$work/$1-target.txt" 2>/dev/null \
    && diff -q "$work/$1-committed.txt" "$work/$1-target.txt" > /dev/null
}
for group in ledger audit; do
  wait_for 90 "$group: the checkpoint translates its offsets exactly" translated_ok "$group"
  wait_for 60 "$group: its offsets on the target are the translated ones" target_group_ok "$group"
done
mm2_tool topic "$src" payments > "$work/topic-src.txt"
mm2_tool topic "$dst" payments > "$work/topic-dst.txt"
diff "$work/topic-src.txt" "$work/topic-dst.txt" || fail "payments' partitions or configs differ on the target"
grep -qx 'retention.ms=86400000' "$work/topic-dst.txt" || fail "retention.ms not on the target's payments"
mm2_stop
step "MirrorMaker stopped"

check "on the target: the producer writes 1000..1499, both groups resume after their last commit on Kafka"
mm2_tool produce "$dst" payments 4 1000 500 > /dev/null || fail "producing payments 1000..1499 on the target"
mm2_tool consume "$dst" ledger payments none 500 20 > "$work/ledger-target.txt" || fail "ledger on the target"
mm2_tool consume "$dst" audit payments none 1300 20 > "$work/audit-target.txt" || fail "audit on the target"
# first_offsets_ok COMMITTED READ: each partition's first offset read is its committed one.
first_offsets_ok() {
  awk 'NR == FNR { first[$2] = $3; next } !/^position/ && !($1 in seen) { seen[$1] = 1; if ($2 != first[$1]) bad = 1 } END { exit bad }' "$1" "$2"
}
for spec in "ledger 1000" "audit 200"; do
  read -r group from <<<"$spec"
  if ! diff <(want "$from" 1499) <(values "$work/$group-target.txt") > "$work/$group.diff"; then
    echo "records missed (<) or read again or extra (>) by $group on the target:" >&2
    head -n 20 "$work/$group.diff" >&2
    fail "$group did not read exactly v$from..v1499 once each on the target"
  fi
  first_offsets_ok "$work/$group-committed.txt" "$work/$group-target.txt" \
    || fail "$group: a partition's first offset read on the target is not its committed one on Kafka"
  step "$group read v$from..v1499 once each, from its committed offsets"
done
step "PASS in $((SECONDS - t0))s"
