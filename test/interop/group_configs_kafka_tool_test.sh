#!/usr/bin/env bash
# Dynamic group configs (the GROUP config resource of KIP-848 and KIP-932) with Apache
# Kafka's own kafka-configs.sh (bench/kafka-ref tool, the pinned release) against a real
# `sluice server`:
#   - --describe of a group that does not exist: no dynamic configs (Kafka's tool says the
#     group does not exist, which it learns from ListConfigResources, not served by Sluice);
#   - --alter --add-config share.auto.offset.reset=earliest,share.record.lock.duration.ms=20000,
#     then --describe (the dynamic configs) and --describe --all (every group key with its
#     broker synonym), transcripts equal to Kafka's, written below;
#   - an unknown key and a value outside the key's range are refused with Kafka's messages;
#   - --delete-config drops one key;
#   - the configs survive a restart of the server (Sluice only: its data dir is reused).
# With SLUICE_INTEROP_BROKER=kafka-ref the same checks run against Kafka itself.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init group_configs_kafka_tool

sluice_build
sluice_start
b="$SLUICE_BOOTSTRAP"
groups() { "$ref" tool configs --bootstrap-server "$b" --entity-type groups "$@"; }

# expect NAME WANT runs the describe in the remaining arguments and compares its output.
expect() {
  local name="$1" want="$2"
  shift 2
  groups "$@" > "$work/$name.txt" 2>&1 || { cat "$work/$name.txt"; fail "configs $*"; }
  if [[ "$(cat "$work/$name.txt")" != "$want" ]]; then
    diff <(echo "$want") "$work/$name.txt" || true
    fail "$name: transcript differs from Kafka's"
  fi
}

check "--describe of a group that does not exist"
# The tool asks ListConfigResources (key 74) which groups have configs, so it can tell this
# group from an existing one without configs.
expect fresh "The group 'queue-workers' doesn't exist and doesn't have dynamic config." --describe --entity-name queue-workers

check "--alter --add-config share.auto.offset.reset=earliest,share.record.lock.duration.ms=20000"
groups --alter --entity-name queue-workers \
  --add-config share.auto.offset.reset=earliest,share.record.lock.duration.ms=20000 > "$work/alter.txt" 2>&1 \
  || { cat "$work/alter.txt"; fail "configs --alter"; }
grep -qx "Completed updating config for group queue-workers." "$work/alter.txt" || { cat "$work/alter.txt"; fail "no completion line"; }

dynamic="Dynamic configs for group queue-workers are:
  share.auto.offset.reset=earliest sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:share.auto.offset.reset=earliest, DEFAULT_CONFIG:share.auto.offset.reset=latest}
  share.record.lock.duration.ms=20000 sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:share.record.lock.duration.ms=20000, DEFAULT_CONFIG:group.share.record.lock.duration.ms=30000}"
check "--describe shows the two dynamic configs"
expect dynamic "$dynamic" --describe --entity-name queue-workers

check "--describe --all lists every group key"
expect all "All configs for group queue-workers are:
  consumer.assignment.interval.ms=1000 sensitive=false synonyms={DEFAULT_CONFIG:group.consumer.assignment.interval.ms=1000}
  consumer.heartbeat.interval.ms=5000 sensitive=false synonyms={DEFAULT_CONFIG:group.consumer.heartbeat.interval.ms=5000}
  consumer.session.timeout.ms=45000 sensitive=false synonyms={DEFAULT_CONFIG:group.consumer.session.timeout.ms=45000}
  errors.deadletterqueue.copy.record.enable=false sensitive=false synonyms={DEFAULT_CONFIG:errors.deadletterqueue.copy.record.enable=false}
  errors.deadletterqueue.topic.name= sensitive=false synonyms={DEFAULT_CONFIG:errors.deadletterqueue.topic.name=}
  share.assignment.interval.ms=1000 sensitive=false synonyms={DEFAULT_CONFIG:group.share.assignment.interval.ms=1000}
  share.auto.offset.reset=earliest sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:share.auto.offset.reset=earliest, DEFAULT_CONFIG:share.auto.offset.reset=latest}
  share.delivery.count.limit=5 sensitive=false synonyms={DEFAULT_CONFIG:group.share.delivery.count.limit=5}
  share.heartbeat.interval.ms=5000 sensitive=false synonyms={DEFAULT_CONFIG:group.share.heartbeat.interval.ms=5000}
  share.isolation.level=read_uncommitted sensitive=false synonyms={DEFAULT_CONFIG:share.isolation.level=read_uncommitted}
  share.partition.max.record.locks=2000 sensitive=false synonyms={DEFAULT_CONFIG:group.share.partition.max.record.locks=2000}
  share.record.lock.duration.ms=20000 sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:share.record.lock.duration.ms=20000, DEFAULT_CONFIG:group.share.record.lock.duration.ms=30000}
  share.renew.acknowledge.enable=true sensitive=false synonyms={DEFAULT_CONFIG:share.renew.acknowledge.enable=true}
  share.session.timeout.ms=45000 sensitive=false synonyms={DEFAULT_CONFIG:group.share.session.timeout.ms=45000}
  streams.assignment.interval.ms=1000 sensitive=false synonyms={DEFAULT_CONFIG:group.streams.assignment.interval.ms=1000}
  streams.assignor.name=sticky sensitive=false synonyms={DEFAULT_CONFIG:group.streams.assignors=sticky}
  streams.heartbeat.interval.ms=5000 sensitive=false synonyms={DEFAULT_CONFIG:group.streams.heartbeat.interval.ms=5000}
  streams.initial.rebalance.delay.ms=3000 sensitive=false synonyms={DEFAULT_CONFIG:group.streams.initial.rebalance.delay.ms=3000}
  streams.num.standby.replicas=0 sensitive=false synonyms={DEFAULT_CONFIG:group.streams.num.standby.replicas=0}
  streams.rack.aware.assignment.tags= sensitive=false synonyms={DEFAULT_CONFIG:group.streams.rack.aware.assignment.tags=}
  streams.session.timeout.ms=45000 sensitive=false synonyms={DEFAULT_CONFIG:group.streams.session.timeout.ms=45000}" \
  --describe --all --entity-name queue-workers

# refused KEY=VALUE MESSAGE: the alter fails with Kafka's InvalidConfigurationException message.
refused() {
  if groups --alter --entity-name queue-workers --add-config "$1" > "$work/refused.txt" 2>&1; then
    cat "$work/refused.txt"; fail "$1 was accepted"
  fi
  grep -qF "Caused by: org.apache.kafka.common.errors.InvalidConfigurationException: $2" "$work/refused.txt" \
    || { cat "$work/refused.txt"; fail "$1: not Kafka's message \"$2\""; }
}
check "an unknown key and values out of range are refused"
refused nope=1 "Unknown group config name: nope"
refused share.record.lock.duration.ms=5 "Invalid value 5 for configuration share.record.lock.duration.ms: Value must be at least 1000"
refused share.record.lock.duration.ms=90000 "share.record.lock.duration.ms must be in the range 15000 to 60000 inclusive."
refused share.isolation.level=serializable \
  "Invalid value serializable for configuration share.isolation.level: String must be one of: read_committed, read_uncommitted"
expect unchanged "$dynamic" --describe --entity-name queue-workers

check "--delete-config share.record.lock.duration.ms"
groups --alter --entity-name queue-workers --delete-config share.record.lock.duration.ms > "$work/alter.txt" 2>&1 \
  || { cat "$work/alter.txt"; fail "configs --delete-config"; }
one="Dynamic configs for group queue-workers are:
  share.auto.offset.reset=earliest sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:share.auto.offset.reset=earliest, DEFAULT_CONFIG:share.auto.offset.reset=latest}"
expect deleted "$one" --describe --entity-name queue-workers

if ! against_kafka_ref; then
  check "the group's configs survive a restart"
  sluice_stop
  sluice_start "$SLUICE_DATA"
  b="$SLUICE_BOOTSTRAP"
  expect restarted "$one" --describe --entity-name queue-workers
fi

step "ok"
