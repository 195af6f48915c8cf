#!/usr/bin/env bash
# The streams rebalance protocol (KIP-1071, group.protocol=streams), which Sluice does not
# serve, against one Sluice node (SLUICE_INTEROP_BROKER=kafka-ref: the pinned Kafka):
#   - what the broker advertises, through Kafka's own tools: kafka-broker-api-versions
#     (StreamsGroupHeartbeat, key 88, and StreamsGroupDescribe, 89) and kafka-features
#     describe (streams.version). Sluice: neither key advertised, streams.version not
#     finalized (level 0), as a Kafka broker without the feature. The pinned Kafka serves
#     it by default (both keys, streams.version 1): there a WordCount with
#     group.protocol=streams runs and counts exactly, and then streams.version is disabled
#     (kafka-features disable, UpdateFeatures) to make it a broker without the feature;
#   - on a broker without the feature (Sluice; Kafka after the disable) the WordCount with
#     group.protocol=streams fails fast and loudly: its stream thread gets Kafka's
#     UnsupportedVersionException "The cluster does not support the STREAMS group
#     protocol ...", the client goes to ERROR and exits 1 within 60 s;
#   - the same application id with group.protocol=classic (Streams' default) then runs and
#     counts exactly.
set -euo pipefail
here_eco="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here_eco/../interop/sluice_lib.sh"
sluice_init streams_protocol
source "$here_eco/streams/lib.sh"
trap '[[ -n "$app_pid" ]] && kill -9 "$app_pid" 2>/dev/null; sluice_cleanup' EXIT

python3 -c 'import confluent_kafka' 2>/dev/null || fail "confluent-kafka not importable by python3 (test/interop/setup.sh installs it)"
"$eco_streams/run" build || fail "building the Streams apps"
sluice_build
sluice_start
b="$SLUICE_BOOTSTRAP"
io() { timeout 120 python3 "$eco_streams/streams_io.py" "$b" "$@"; }
kafka_tool() {
  java -Xmx256M -Dlog4j2.configurationFile="$repo/bench/kafka-ref.d/log4j2-tools.xml" -cp "$("$ref" classpath)" "$@"
}
# describe: the broker's StreamsGroup* keys (kafka-broker-api-versions) and its
# streams.version line (kafka-features describe).
describe() {
  kafka_tool org.apache.kafka.tools.BrokerApiVersionsCommand --bootstrap-server "$b" > "$work/apis.txt" 2>&1 \
    || { cat "$work/apis.txt"; fail "kafka-broker-api-versions"; }
  grep -E 'StreamsGroup(Heartbeat|Describe)\((88|89)\)' "$work/apis.txt" | sed 's/^[[:space:]]*/  /'
  kafka_tool org.apache.kafka.tools.FeatureCommand --bootstrap-server "$b" describe > "$work/features.txt" 2>&1 \
    || { cat "$work/features.txt"; fail "kafka-features describe"; }
  streams_level="$(awk '$2 == "streams.version" { for (i = 1; i < NF; i++) if ($i == "FinalizedVersionLevel:") print $(i + 1) }' "$work/features.txt")"
  echo "  streams.version finalized: ${streams_level:-absent}"
}
for topic in in out out-served; do
  "$ref" tool topics --bootstrap-server "$b" --create --topic "$topic" --partitions 3 --replication-factor 1 \
    > "$work/create.txt" 2>&1 || { cat "$work/create.txt"; fail "topics --create $topic"; }
done
io lines in 0 300 > /dev/null || fail "producing lines"
# A 1 s commit (at_least_once commits every 30 s by default): counts show up sooner.
app_args=(commit.interval.ms=1000 app.input=in app.output=out)

check "what the broker advertises of the streams group protocol"
describe
if against_kafka_ref; then
  grep -Eq 'StreamsGroupHeartbeat\(88\): 0 to [1-9]' "$work/apis.txt" && grep -Eq 'StreamsGroupDescribe\(89\): 0 to' "$work/apis.txt" \
    || fail "the pinned Kafka does not advertise StreamsGroupHeartbeat and StreamsGroupDescribe"
  [[ "$streams_level" -ge 1 ]] || fail "the pinned Kafka has streams.version ${streams_level:-absent}, not finalized"
  check "the pinned Kafka serves it: a WordCount with group.protocol=streams counts exactly"
  streams_app app-served wordcount wc-served "$work/state-served" group.protocol=streams commit.interval.ms=1000 app.input=in app.output=out-served
  io wordcount out-served 300 eos 60 || fail "counts with group.protocol=streams"
  streams_app_term
  check "kafka-features disable --feature streams.version: now a broker without the feature"
  kafka_tool org.apache.kafka.tools.FeatureCommand --bootstrap-server "$b" disable --feature streams.version \
    > "$work/disable.txt" 2>&1 || { cat "$work/disable.txt"; fail "kafka-features disable"; }
  describe
  [[ "${streams_level:-0}" == 0 ]] || fail "streams.version still finalized at $streams_level"
else
  grep -Eq 'StreamsGroupHeartbeat\(88\): UNSUPPORTED' "$work/apis.txt" && grep -Eq 'StreamsGroupDescribe\(89\): UNSUPPORTED' "$work/apis.txt" \
    || fail "Sluice advertises StreamsGroupHeartbeat or StreamsGroupDescribe"
  [[ "${streams_level:-0}" == 0 ]] || fail "Sluice has streams.version finalized at $streams_level"
fi

check "group.protocol=streams on a broker without the feature: UnsupportedVersionException, ERROR, exit 1"
"$eco_streams/run" wordcount "$b" wc "$work/state" group.protocol=streams "${app_args[@]}" > "$work/app-streams.txt" 2>&1 &
app_pid=$!
status=0
timeout 60 tail --pid="$app_pid" -f /dev/null || { tail -n 30 "$work/app-streams.txt"; fail "the app did not end within 60 s"; }
wait "$app_pid" || status=$?
app_pid=""
grep -E '^uncaught: .*UnsupportedVersionException: The cluster does not support the STREAMS group protocol' "$work/app-streams.txt" \
  || { tail -n 30 "$work/app-streams.txt"; fail "no UnsupportedVersionException about the STREAMS group protocol"; }
grep -qx 'stopped in state ERROR' "$work/app-streams.txt" && [[ "$status" == 1 ]] \
  || { tail -n 30 "$work/app-streams.txt"; fail "the app did not end in ERROR with status 1 (status $status)"; }
! grep -qx RUNNING "$work/app-streams.txt" || fail "the app reached RUNNING"

check "the same application id with group.protocol=classic counts exactly"
streams_app app-classic wordcount wc "$work/state" group.protocol=classic "${app_args[@]}"
io wordcount out 300 eos 60 || fail "counts with group.protocol=classic"
streams_app_term
sluice_stop
step "PASS in $((SECONDS - t0))s"
