#!/usr/bin/env bash
# Client quotas with Apache Kafka's own tools (bench/kafka-ref tool, the pinned release)
# against a real `sluice server`, at the tools' default settings:
#   - configs --alter --add-config producer_byte_rate=1048576 --entity-type clients
#     --entity-name quota-perf, then --describe shows it;
#   - producer-perf-test (the Java producer, its defaults, client.id quota-perf,
#     --print-metrics) sending 32 MiB as fast as it may: its average rate is near 1 MB/s
#     and its own produce-throttle-time-avg and -max are above 0 (the brokers' throttle_time_ms
#     reached the client); the same run with another client id is not throttled.
# Kafka's quota lets a new client burst 10 windows' worth (10 MiB at Kafka's default
# quota.window.num=11 of 1 s) before throttling it, and that burst comes back every 12 s,
# so the average over a run of ~30 s lies between 0.8 and 1.3 MB/s; the Go test
# (test/security, QUOTA_LONG=1) measures it over whole cycles.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init quota_kafka_tool

sluice_build
sluice_start
b="$SLUICE_BOOTSTRAP"
tool() { "$ref" tool "$@"; }

check "topics --create quota-perf"
tool topics --bootstrap-server "$b" --create --topic quota-perf --partitions 1 --replication-factor 1 \
  > "$work/create.txt" 2>&1 || { cat "$work/create.txt"; fail "topics --create"; }

check "configs --alter --add-config producer_byte_rate=1048576 --entity-type clients --entity-name quota-perf"
tool configs --bootstrap-server "$b" --alter --add-config producer_byte_rate=1048576 \
  --entity-type clients --entity-name quota-perf > "$work/alter.txt" 2>&1 \
  || { cat "$work/alter.txt"; fail "configs --alter"; }
cat "$work/alter.txt"

check "configs --describe --entity-type clients --entity-name quota-perf shows the quota"
tool configs --bootstrap-server "$b" --describe --entity-type clients --entity-name quota-perf \
  > "$work/describe.txt" 2>&1 || { cat "$work/describe.txt"; fail "configs --describe"; }
cat "$work/describe.txt"
grep -q 'producer_byte_rate=1048576' "$work/describe.txt" || fail "configs --describe: no producer_byte_rate=1048576"

# perf runs producer-perf-test with client.id $1 and prints its summary line's MB/sec and
# the client's produce-throttle-time-avg and -max (--print-metrics).
perf() {
  local id="$1" out="$work/perf-$1.txt"
  tool producer-perf-test --topic quota-perf --num-records 3277 --record-size 10240 --throughput -1 \
    --producer-props "bootstrap.servers=$b" "client.id=$id" --print-metrics > "$out" 2>&1 \
    || { tail -n 30 "$out"; fail "producer-perf-test ($id)"; }
  grep -E 'records sent, .* MB/sec' "$out" | tail -n 1
  rate="$(grep -E 'records sent, .* MB/sec' "$out" | tail -n 1 | sed -E 's/.*\(([0-9.]+) MB\/sec\).*/\1/')"
  tavg="$(grep -E '^producer-metrics:produce-throttle-time-avg:\{client-id='"$id"'\}' "$out" | awk '{print $NF}')"
  tmax="$(grep -E '^producer-metrics:produce-throttle-time-max:\{client-id='"$id"'\}' "$out" | awk '{print $NF}')"
  echo "rate ${rate} MB/sec, produce-throttle-time-avg ${tavg:-?}, produce-throttle-time-max ${tmax:-?}"
  [[ -n "$rate" && -n "$tavg" && -n "$tmax" ]] || { tail -n 30 "$out"; fail "producer-perf-test ($id): no rate or throttle metrics"; }
}

check "producer-perf-test as quota-perf: 32 MiB near 1 MB/s, throttled"
perf quota-perf
awk -v r="$rate" 'BEGIN { exit !(r >= 0.8 && r <= 1.3) }' || fail "quota-perf at $rate MB/sec, want 0.8-1.3"
awk -v a="$tavg" -v m="$tmax" 'BEGIN { exit !(a > 0 && m > 0) }' || fail "quota-perf: the client saw no throttle (avg $tavg, max $tmax)"

check "producer-perf-test as another client id: not throttled"
perf unlimited-perf
awk -v r="$rate" 'BEGIN { exit !(r > 1.5) }' || fail "unlimited-perf at only $rate MB/sec"
awk -v m="$tmax" 'BEGIN { exit !(m == 0) }' || fail "unlimited-perf throttled (max $tmax ms)"

step "ok"
