#!/usr/bin/env bash
# Dynamic broker configs with Apache Kafka's own kafka-configs.sh (bench/kafka-ref tool, the
# pinned release) against a real `sluice server`, checked by behaviour, without a restart:
#   - --entity-type brokers --entity-name 1 --add-config log.retention.ms=1000: retention
#     deletes the old segments of a topic (its earliest offset moves past 0);
#   - --entity-default --add-config message.max.bytes=1024 (and 1500 on broker 1): a 2000-byte
#     record is refused with RecordTooLargeException; --delete-config reverts: it is accepted;
#   - --entity-default --add-config log.cleaner.threads=2: the cleaner runs two threads
#     (Sluice's log line; Kafka says nothing observable outside JMX);
#   - --describe of broker 1 and of the default, transcripts equal to Kafka's (written below);
#     (DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG from
#     log.retention.hours=100 in the file, DEFAULT_CONFIG, in that order);
#   - Kafka's refusals: a read-only key, an SSL key without its listener prefix, a bad value,
#     Kafka's requirements on max.connections.per.ip and the cleaner's dedupe buffer.
# With SLUICE_INTEROP_BROKER=kafka-ref the same checks run against Kafka itself.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init dynconf_kafka_configs

sluice_build
sluice_overrides=(log.retention.check.interval.ms=500 log.retention.hours=100)
sluice_start
b="$SLUICE_BOOTSTRAP"
configs() { "$ref" tool configs --bootstrap-server "$b" --entity-type brokers "$@"; }

# expect NAME WANT ARGS...: the configs run's output equals WANT. bench/kafka-ref sets
# min.insync.replicas=1 as a dynamic default when it starts Kafka: that line is dropped.
expect() {
  local name="$1" want="$2"
  shift 2
  configs "$@" > "$work/$name.raw" 2>&1 || { cat "$work/$name.raw"; fail "configs $*"; }
  grep -vF "min.insync.replicas=1 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:min.insync.replicas=1}" \
    "$work/$name.raw" > "$work/$name.txt" || true
  if [[ "$(cat "$work/$name.txt")" != "$want" ]]; then
    diff <(echo "$want") "$work/$name.txt" || true
    fail "$name: transcript differs from Kafka's"
  fi
}

# alter ARGS...: a configs --alter that must succeed.
alter() {
  configs --alter "$@" > "$work/alter.txt" 2>&1 || { cat "$work/alter.txt"; fail "configs --alter $*"; }
  grep -q "^Completed updating" "$work/alter.txt" || { cat "$work/alter.txt"; fail "no completion line"; }
}

# refused MESSAGE ARGS...: a configs --alter that fails with MESSAGE in its output.
refused() {
  local msg="$1"
  shift
  if configs --alter "$@" > "$work/refused.txt" 2>&1; then
    cat "$work/refused.txt"; fail "$* was accepted"
  fi
  grep -qF -- "$msg" "$work/refused.txt" || { cat "$work/refused.txt"; fail "$*: not Kafka's message \"$msg\""; }
}

# earliest TOPIC: the earliest offset of partition 0.
earliest() { "$ref" tool get-offsets --bootstrap-server "$b" --topic "$1" --time -2 | awk -F: '$2 == 0 { print $3 }'; }

# produce_big SIZE: one record of SIZE bytes to topic big; its output in $work/produce.txt.
produce_big() {
  head -c "$1" /dev/zero | tr '\0' x > "$work/big.txt"
  echo >> "$work/big.txt"
  "$ref" tool console-producer --bootstrap-server "$b" --topic big --producer-property acks=all \
    --producer-property max.request.size=10000000 < "$work/big.txt" > "$work/produce.txt" 2>&1
}

"$ref" tool topics --bootstrap-server "$b" --create --topic events --partitions 1 --replication-factor 1 \
  --config segment.bytes=1048576 > /dev/null
"$ref" tool topics --bootstrap-server "$b" --create --topic big --partitions 1 --replication-factor 1 > /dev/null

check "log.retention.ms=1000 on broker 1 deletes old segments without a restart"
"$ref" tool producer-perf-test --topic events --num-records 3000 --record-size 1000 --throughput -1 \
  --producer-props bootstrap.servers="$b" acks=1 linger.ms=5 > "$work/perf.txt" 2>&1 || { cat "$work/perf.txt"; fail "perf test"; }
[[ "$(earliest events)" == 0 ]] || fail "segments deleted before the change"
sleep 2 # the records are now older than 1 s
alter --entity-name 1 --add-config log.retention.ms=1000
deadline=$((SECONDS + 30))
until (( $(earliest events) > 0 )); do
  ((SECONDS < deadline)) || fail "retention deleted nothing within 30 s of the change"
  sleep 0.5
done

check "--describe of broker 1"
expect describe1 "Dynamic configs for broker 1 are:
  log.retention.ms=1000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.retention.ms=1000, STATIC_BROKER_CONFIG:log.retention.hours=100, DEFAULT_CONFIG:log.retention.hours=168}" \
  --describe --entity-name 1

check "message.max.bytes=1024 as the cluster default, 1500 on broker 1, refuse a 2000-byte record"
produce_big 2000 || { cat "$work/produce.txt"; fail "2000 bytes refused before the change"; }
alter --entity-default --add-config message.max.bytes=1024,log.cleaner.threads=2
alter --entity-name 1 --add-config message.max.bytes=1500
if produce_big 2000 && ! grep -q RecordTooLargeException "$work/produce.txt"; then
  cat "$work/produce.txt"; fail "a 2000-byte record was accepted over message.max.bytes=1024"
fi
grep -q RecordTooLargeException "$work/produce.txt" || { cat "$work/produce.txt"; fail "not RecordTooLargeException"; }

check "log.cleaner.threads=2 restarts the cleaner with two threads"
if ! against_kafka_ref; then
  deadline=$((SECONDS + 10))
  until grep -q 'log cleaner reconfigured.*threads=2' "$SLUICE_LOG"; do
    ((SECONDS < deadline)) || fail "the cleaner was not reconfigured"
    sleep 0.2
  done
fi

check "--describe of broker 1: the four sources in Kafka's order"
expect describe1again "Dynamic configs for broker 1 are:
  log.retention.ms=1000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.retention.ms=1000, STATIC_BROKER_CONFIG:log.retention.hours=100, DEFAULT_CONFIG:log.retention.hours=168}
  message.max.bytes=1500 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:message.max.bytes=1500, DYNAMIC_DEFAULT_BROKER_CONFIG:message.max.bytes=1024, DEFAULT_CONFIG:message.max.bytes=1048588}" \
  --describe --entity-name 1

check "--describe of the cluster default"
expect describedefault "Default configs for brokers in the cluster are:
  log.cleaner.threads=2 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.cleaner.threads=2}
  message.max.bytes=1024 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:message.max.bytes=1024}" \
  --describe --entity-default

check "Kafka's refusals"
refused "Cannot update these configs dynamically: [log.dirs]" --entity-name 1 --add-config log.dirs=/tmp/x
refused "These security configs can be dynamically updated only per-listener using the listener prefix: [ssl.keystore.location]" \
  --entity-default --add-config ssl.keystore.location=/tmp/ks.jks
refused "requirement failed: max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set." \
  --entity-name 1 --add-config max.connections.per.ip=0
refused "requirement failed: log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner thread." \
  --entity-name 1 --add-config log.cleaner.dedupe.buffer.size=1
refused "Invalid value abc for configuration log.retention.ms: Not a number of type LONG" \
  --entity-name 1 --add-config log.retention.ms=abc

check "--delete-config reverts message.max.bytes and log.retention.ms"
alter --entity-default --delete-config message.max.bytes,log.cleaner.threads
alter --entity-name 1 --delete-config log.retention.ms,message.max.bytes
produce_big 2000 || { cat "$work/produce.txt"; fail "2000 bytes refused after --delete-config"; }
expect deleted1 "Dynamic configs for broker 1 are:" --describe --entity-name 1
expect deleteddefault "Default configs for brokers in the cluster are:" --describe --entity-default

step "ok"
