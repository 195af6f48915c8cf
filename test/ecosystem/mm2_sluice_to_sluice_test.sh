#!/usr/bin/env bash
# MirrorMaker 2 between two Sluice clusters (SLUICE_INTEROP_BROKER=kafka-ref: two of the
# pinned Kafka), MirrorMaker in dedicated mode (org.apache.kafka.connect.mirror.MirrorMaker,
# connect-mirror from test/ecosystem/mm2), the default replication policy (topic T of
# cluster "source" is "source.T" on "target"), both clusters with the StandardAuthorizer:
#   - topics: orders (3 partitions, retention.ms set) and accounts (2 partitions, compacted)
#     are created on the target with their partition counts, their records and their
#     configs; a later retention.ms change on the source reaches the target; a topic the
#     filter leaves out is not created;
#   - ACLs: the source's LITERAL topic ACLs arrive as MM2 maps them (ALLOW ALL becomes
#     ALLOW READ, ALLOW WRITE and PREFIXED bindings stay behind, DENY is copied);
#   - offsets: the group "billing" reads the first 600 of orders' records on the source and
#     commits; MM2's checkpoint (read with RemoteClusterUtils.translateOffsets from
#     source.checkpoints.internal) and the group's offsets on the target
#     (sync.group.offsets) are exactly the source's, partition by partition; 400 more
#     records later they have not moved; the group then fails over to the target
#     (auto.offset.reset=none: no translated offset is a failure) and reads exactly the
#     records 600..999 once each: nothing before its last committed position, nothing missed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../interop/sluice_lib.sh"
sluice_init mm2_sluice_to_sluice
source "$repo/test/ecosystem/mm2/lib.sh"

"$mm2_dir/run" build || fail "building MirrorMaker 2 and the scenario tool (test/ecosystem/mm2)"
sluice_build
kind=sluice
against_kafka_ref && kind=kafka
auth=(authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
  super.users=User:ANONYMOUS allow.everyone.if.no.acl.found=true)
mm2_cluster source "$kind" "${auth[@]}"
mm2_cluster target "$kind" "${auth[@]}"
src="$source_bootstrap"
dst="$target_bootstrap"
topics() { "$ref" tool topics "$@" > "$work/topics.out" 2>&1 || { cat "$work/topics.out"; fail "topics $*"; }; }
acl() { "$ref" tool acls --bootstrap-server "$src" "$@" > "$work/acls.out" 2>&1 || { cat "$work/acls.out"; fail "acls $*"; }; }

step "source: topics, records, ACLs"
topics --bootstrap-server "$src" --create --topic orders --partitions 3 --replication-factor 1 --config retention.ms=7200000
topics --bootstrap-server "$src" --create --topic accounts --partitions 2 --replication-factor 1 --config cleanup.policy=compact
topics --bootstrap-server "$src" --create --topic scratch --partitions 1 --replication-factor 1
acl --add --allow-principal User:alice --operation Read --topic orders
acl --add --allow-principal User:bob --operation All --topic orders
acl --add --allow-principal User:carol --operation Write --topic orders
acl --add --deny-principal User:mallory --operation Read --topic orders
acl --add --allow-principal User:dave --operation Read --topic ord --resource-pattern-type prefixed
mm2_tool produce "$src" orders 3 0 600 > /dev/null || fail "producing orders 0..599"
mm2_tool produce "$src" accounts 2 0 10 > /dev/null || fail "producing accounts"
mm2_tool produce "$src" scratch 1 0 5 > /dev/null || fail "producing scratch"

check "the group billing reads orders 0..599 on the source and commits"
mm2_tool consume "$src" billing orders earliest 600 20 > "$work/source-read.txt" || fail "consuming on the source"
grep -v '^position' "$work/source-read.txt" | awk '{ print $3 }' | sort > "$work/source-values.txt"
seq 0 599 | sed 's/^/v/' | sort > "$work/want-source.txt"
diff "$work/want-source.txt" "$work/source-values.txt" > /dev/null || fail "the source consumer did not read exactly v0..v599"
mm2_tool committed "$src" billing > "$work/source-committed.txt"
sed 's/^orders /source.orders /' "$work/source-committed.txt" > "$work/want-translated.txt"
step "committed on the source: $(tr '\n' ' ' < "$work/source-committed.txt")"

mm2_properties "$src" "$dst" > "$work/mm2.properties"
cat >> "$work/mm2.properties" <<'EOF'
source->target.topics = orders|accounts
source->target.groups = billing
sync.topic.configs.enabled = true
sync.topic.acls.enabled = true
emit.checkpoints.enabled = true
sync.group.offsets.enabled = true
EOF
mm2_start "$work/mm2.properties"

check "records, partition counts and configs replicated"
wait_for 120 "target has source.orders' 600 records" has_records "$dst" source.orders 600
wait_for 60 "target has source.accounts' 10 records" has_records "$dst" source.accounts 10

check "offsets: the checkpoint and the target group are the source's committed offsets"
translated_ok() {
  mm2_tool translate "$dst" source billing > "$work/translated.txt" 2>/dev/null \
    && diff -q "$work/want-translated.txt" "$work/translated.txt" > /dev/null
}
target_group_ok() {
  mm2_tool committed "$dst" billing > "$work/target-committed.txt" 2>/dev/null \
    && diff -q "$work/want-translated.txt" "$work/target-committed.txt" > /dev/null
}
wait_for 90 "the checkpoint translates billing's offsets exactly" translated_ok
wait_for 60 "billing's offsets on the target are the translated ones" target_group_ok

step "source: retention.ms changed, 400 more records"
"$ref" tool configs --bootstrap-server "$src" --alter --entity-type topics --entity-name orders \
  --add-config retention.ms=3600000 > "$work/configs.out" 2>&1 || { cat "$work/configs.out"; fail "configs --alter"; }
mm2_tool produce "$src" orders 3 600 400 > /dev/null || fail "producing orders 600..999"
wait_for 60 "target has source.orders' 1000 records" has_records "$dst" source.orders 1000
topic_matches() {
  mm2_tool topic "$src" "$1" > "$work/topic-src.txt" && mm2_tool topic "$dst" "source.$1" > "$work/topic-dst.txt" \
    && diff -q "$work/topic-src.txt" "$work/topic-dst.txt" > /dev/null
}
wait_for 60 "source.orders has orders' partitions and configs (retention.ms=3600000)" topic_matches orders
grep -qx 'retention.ms=3600000' "$work/topic-dst.txt" || fail "source.orders: $(cat "$work/topic-dst.txt")"
wait_for 30 "source.accounts has accounts' partitions and configs (cleanup.policy=compact)" topic_matches accounts
grep -qx 'cleanup.policy=compact' "$work/topic-dst.txt" || fail "source.accounts: $(cat "$work/topic-dst.txt")"
"$ref" tool topics --bootstrap-server "$dst" --list > "$work/target-topics.txt" 2>&1 || fail "topics --list on the target"
! grep -q 'scratch' "$work/target-topics.txt" || fail "scratch, left out by the topic filter, was replicated"

check "ACLs: LITERAL topic ACLs mapped as MirrorMaker maps them"
cat > "$work/want-acls.txt" <<'EOF'
TOPIC LITERAL source.orders User:alice * READ ALLOW
TOPIC LITERAL source.orders User:bob * READ ALLOW
TOPIC LITERAL source.orders User:mallory * READ DENY
EOF
acls_ok() { mm2_tool acls "$dst" > "$work/target-acls.txt" && diff -q "$work/want-acls.txt" "$work/target-acls.txt" > /dev/null; }
acls_ok || wait_for 30 "the target's ACLs" acls_ok
step "target ACLs: $(wc -l < "$work/target-acls.txt") bindings as expected"

check "400 records later the checkpoint and the target group have not moved"
translated_ok || { cat "$work/translated.txt"; fail "the translated offsets moved"; }
target_group_ok || { cat "$work/target-committed.txt"; fail "the target group's offsets moved"; }

check "billing fails over to the target and resumes exactly after its last commit on the source"
mm2_tool consume "$dst" billing source.orders none 400 20 > "$work/target-read.txt" \
  || { tail -n 20 "$work/target-read.txt"; fail "consuming on the target"; }
grep -v '^position' "$work/target-read.txt" | awk '{ print $3 }' | sort > "$work/target-values.txt"
seq 600 999 | sed 's/^/v/' | sort > "$work/want-target.txt"
if ! diff "$work/want-target.txt" "$work/target-values.txt" > "$work/failover.diff"; then
  echo "records missed (<) or read again or extra (>) after the fail-over:" >&2
  head -n 20 "$work/failover.diff" >&2
  fail "the failed-over group did not read exactly v600..v999 once each"
fi
# The offsets read on the target start at the committed ones: nothing before them.
awk 'NR == FNR { first[$2] = $3; next } !/^position/ && !($1 in seen) { seen[$1] = 1; if ($2 != first[$1]) bad = 1 } END { exit bad }' \
  "$work/source-committed.txt" "$work/target-read.txt" || fail "a partition's first offset read on the target is not its committed one"

mm2_stop
step "PASS in $((SECONDS - t0))s"
