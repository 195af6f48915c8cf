#!/usr/bin/env bash
# Run-time log levels (KIP-412's BROKER_LOGGER resource) with Apache Kafka's own
# kafka-configs.sh (bench/kafka-ref tool, the pinned release) against a real `sluice server`
# started with sluice.log.format=json and a metrics listener:
#   - --describe --entity-type broker-loggers --entity-name 1 lists root=INFO and the
#     components' loggers;
#   - --alter --add-config root=DEBUG: the describe shows it, a component without a level of
#     its own follows it, and the server's log gets DEBUG records from then on (JSON lines);
#   - --add-config COMPONENT=TRACE, then --delete-config COMPONENT: the component goes to
#     TRACE and back to root's DEBUG;
#   - an unknown logger and a level Kafka does not know are refused with Kafka's messages;
#   - the metrics listener answers /healthz "ok", /readyz "ready" and /metrics, and serves
#     no pprof.
# With SLUICE_INTEROP_BROKER=kafka-ref the same kafka-configs checks run against Kafka (its
# loggers are log4j class names; the log, JSON and HTTP checks are Sluice's own and skipped).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init loggers_kafka_tool

sluice_build
if ! against_kafka_ref; then
  read -r metrics_port <<<"$(free_ports 1)"
  sluice_overrides=("sluice.log.format=json" "sluice.metrics.listener=127.0.0.1:$metrics_port")
fi
sluice_start
b="$SLUICE_BOOTSTRAP"
tool() { "$ref" tool "$@"; }
loggers() { tool configs --bootstrap-server "$b" --entity-type broker-loggers --entity-name 1 "$@"; }

# describe writes the loggers to $work/describe.txt and prints them.
describe() {
  loggers --describe > "$work/describe.txt" 2>&1 || { cat "$work/describe.txt"; fail "configs --describe"; }
  cat "$work/describe.txt"
}
# level NAME prints NAME's level from the last describe.
level() { grep -oE "^ +$1=[A-Z]+ " "$work/describe.txt" | sed -E 's/.*=([A-Z]+) $/\1/'; }

check "--describe lists root=INFO and other loggers"
describe
[[ "$(level root)" == INFO ]] || fail "root is $(level root), want INFO"
# A logger other than root to change: a Sluice component, or one of Kafka's log4j loggers.
comp="$(grep -oE '^ +[A-Za-z0-9._-]+=' "$work/describe.txt" | tr -d ' =' | grep -vx root | head -n 1)"
[[ -n "$comp" ]] || fail "no logger besides root"
other="$(grep -oE '^ +[A-Za-z0-9._-]+=' "$work/describe.txt" | tr -d ' =' | grep -vx root | grep -vx "$comp" | head -n 1)"
step "changing $comp (and watching $other)"

if ! against_kafka_ref; then
  grep -q '"level":"DEBUG"' "$SLUICE_LOG" && fail "DEBUG records before any change"
  head -n 1 "$SLUICE_LOG" | python3 -c 'import json, sys; r = json.loads(sys.stdin.readline()); assert r["level"] and r["msg"]' \
    || fail "the log's first line is not a JSON record: $(head -n 1 "$SLUICE_LOG")"
fi

check "--alter --add-config root=DEBUG"
loggers --alter --add-config root=DEBUG > "$work/alter.txt" 2>&1 || { cat "$work/alter.txt"; fail "configs --alter root=DEBUG"; }
describe
[[ "$(level root)" == DEBUG ]] || fail "root is $(level root) after the alter, want DEBUG"
if ! against_kafka_ref; then
  [[ -z "$other" || "$(level "$other")" == DEBUG ]] || fail "$other is $(level "$other"), want root's DEBUG"
  # The server logs at DEBUG from now on: a new topic makes debug records.
  tool topics --bootstrap-server "$b" --create --topic loggers-debug --partitions 1 --replication-factor 1 > /dev/null 2>&1 \
    || fail "topics --create"
  deadline=$((SECONDS + 15))
  until grep -q '"level":"DEBUG"' "$SLUICE_LOG"; do
    ((SECONDS < deadline)) || fail "no DEBUG record in the log 15 s after root=DEBUG"
    sleep 0.2
  done
fi

check "--alter --add-config $comp=TRACE, then --delete-config $comp"
loggers --alter --add-config "$comp=TRACE" > "$work/alter.txt" 2>&1 || { cat "$work/alter.txt"; fail "configs --alter $comp=TRACE"; }
describe
[[ "$(level "$comp")" == TRACE ]] || fail "$comp is $(level "$comp"), want TRACE"
loggers --alter --delete-config "$comp" > "$work/alter.txt" 2>&1 || { cat "$work/alter.txt"; fail "configs --delete-config $comp"; }
describe
[[ "$(level "$comp")" == DEBUG ]] || fail "$comp is $(level "$comp") after the delete, want root's DEBUG"

check "an unknown logger is refused"
if loggers --alter --add-config no.such.logger=DEBUG > "$work/unknown.txt" 2>&1; then
  cat "$work/unknown.txt"; fail "an unknown logger was accepted"
fi
cat "$work/unknown.txt"
grep -q 'no.such.logger' "$work/unknown.txt" || fail "the refusal does not name the logger"

check "a level Kafka does not know is refused"
if loggers --alter --add-config root=LOUD > "$work/loud.txt" 2>&1; then
  cat "$work/loud.txt"; fail "root=LOUD was accepted"
fi
cat "$work/loud.txt"
grep -q 'Cannot set the log level of root to LOUD as it is not a supported log level' "$work/loud.txt" \
  || fail "not Kafka's message for an invalid level"

check "--alter --add-config root=INFO"
loggers --alter --add-config root=INFO > "$work/alter.txt" 2>&1 || { cat "$work/alter.txt"; fail "configs --alter root=INFO"; }
describe
[[ "$(level root)" == INFO ]] || fail "root is $(level root), want INFO"

if ! against_kafka_ref; then
  check "the metrics listener: /healthz, /readyz, /metrics, no pprof"
  m="http://127.0.0.1:$metrics_port"
  [[ "$(curl -fsS "$m/healthz")" == ok ]] || fail "/healthz"
  [[ "$(curl -fsS "$m/readyz")" == ready ]] || fail "/readyz: $(curl -sS "$m/readyz")"
  curl -fsS "$m/metrics" > "$work/metrics.txt" || fail "/metrics"
  grep -q '^go_goroutines ' "$work/metrics.txt" || fail "/metrics lacks go_goroutines"
  code="$(curl -sS -o /dev/null -w '%{http_code}' "$m/debug/pprof/")"
  [[ "$code" == 404 ]] || fail "the metrics listener serves pprof ($code)"
fi

step "ok"
