#!/usr/bin/env bash
# ListConfigResources (KIP-1142) through the pinned Kafka's tools against a real `sluice
# server` (SLUICE_INTEROP_BROKER=kafka-ref: against the reference Kafka): kafka-configs
# --describe --entity-type groups without a name lists the groups with configs through
# ListConfigResources and describes each; kafka-configs --entity-type client-metrics and
# kafka-client-metrics --list (ClientMetricsCommand on the kit's classpath) list the
# client-metrics subscriptions (none). The transcript must equal
# clusterapis_configs.expected, the pinned Kafka's.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init clusterapis_configs
sluice_build
sluice_start
b="$SLUICE_BOOTSTRAP"
classpath="$("$ref" classpath | tail -n 1)" || fail "bench/kafka-ref classpath"

configs() { timeout 120 "$ref" tool configs --bootstrap-server "$b" "$@" 2>&1; }
client_metrics() {
  timeout 120 java -Xmx256M -Djava.awt.headless=true -Dlog4j2.configurationFile="$repo/bench/kafka-ref.d/log4j2-tools.xml" \
    -cp "$classpath" org.apache.kafka.tools.ClientMetricsCommand --bootstrap-server "$b" "$@" 2>&1
}
configs --alter --entity-type groups --entity-name g-one --add-config consumer.session.timeout.ms=50000 > /dev/null ||
  fail "set g-one's config"
configs --alter --entity-type groups --entity-name g-two --add-config consumer.heartbeat.interval.ms=6000 > /dev/null ||
  fail "set g-two's config"
check "groups g-one and g-two given configs"

t() { echo "\$ $*"; "$@" | grep -Ev '^(\[|[[:space:]]+at )' || true; }
{
  t configs --describe --entity-type groups
  t configs --describe --entity-type client-metrics
  t client_metrics --list
} > "$work/transcript.txt"
[[ -n "${CLUSTERAPIS_RECORD:-}" ]] && cp "$work/transcript.txt" "$CLUSTERAPIS_RECORD"
grep -q "Dynamic configs for group g-two are" "$work/transcript.txt" || { cat "$work/transcript.txt"; fail "g-two not listed"; }
check "kafka-configs listed the groups with configs"
if ! diff -u "$here/clusterapis_configs.expected" "$work/transcript.txt" > "$work/diff.txt"; then
  cat "$work/diff.txt"
  fail "the tools' answers differ from the pinned Kafka's (clusterapis_configs.expected)"
fi
step "the tools' answers equal the pinned Kafka's"
sluice_stop
step "PASS in $((SECONDS - t0))s"
