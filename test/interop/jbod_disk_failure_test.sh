#!/usr/bin/env bash
# A failed disk on a node with two log dirs (a binary built with -tags sluicefault, whose
# SLUICE_FAULT_LOG_DIR fails with EIO once "<dir>.fail" exists): only the failed dir's
# partitions go offline, the node keeps serving the partitions of its other dir (kcat
# produce acks=all and consume), a produce to a partition of the failed dir fails with
# KAFKA_STORAGE_ERROR, and kafka-log-dirs --describe shows the dir's KafkaStorageException
# while the healthy dir still lists its partitions.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init jbod_disk_failure
against_kafka_ref && { echo "jbod_disk_failure: injects a disk fault into Sluice; skipped with SLUICE_INTEROP_BROKER=kafka-ref"; exit 0; }
sluice_build_fault
step "fault-injection binary $fault_bin"

read -r -a ports <<<"$(free_ports 2)"
bootstrap="127.0.0.1:${ports[0]}"
d1="$work/d1" d2="$work/d2"
SLUICE_LOG="$work/node.log"
SLUICE_FAULT_LOG_DIR="$d2" "$fault_bin" server --override "listeners=PLAINTEXT://$bootstrap,CONTROLLER://127.0.0.1:${ports[1]}" \
  --override "controller.quorum.voters=1@127.0.0.1:${ports[1]}" --override "log.dirs=$d1,$d2" > "$SLUICE_LOG" 2>&1 < /dev/null &
sluice_pids+=("$!")
deadline=$((SECONDS + 30))
until api_versions_ok "$bootstrap"; do
  ((SECONDS < deadline)) || fail "sluice did not start"
  sleep 0.2
done
step "one node with log.dirs=$d1,$d2 (d2 can fail) at $bootstrap"

tool() { timeout 120 "$ref" tool "$1" --bootstrap-server "$bootstrap" "${@:2}" 2>&1; }
classpath="$("$ref" classpath | tail -n 1)" || fail "bench/kafka-ref classpath"
logdirs() {
  timeout 120 java -Xmx512M -Djava.awt.headless=true -Dlog4j2.configurationFile="$repo/bench/kafka-ref.d/log4j2-tools.xml" \
    -cp "$classpath" org.apache.kafka.tools.LogDirsCommand --bootstrap-server "$bootstrap" --describe --broker-list 1 > "$work/logdirs.out" 2>&1
  grep '^{' "$work/logdirs.out" || { cat "$work/logdirs.out" >&2; return 1; }
}
produce() { timeout 30 kcat -b "$bootstrap" -P -t disk -p "$1" -X acks=all -X message.timeout.ms=10000 "${@:2}" 2>&1; }

tool topics --create --topic disk --partitions 4 --replication-factor 1 > /dev/null || fail "create topic"
for p in 0 1 2 3; do seq 1 100 | sed "s/^/a$p-/" | produce "$p" > /dev/null || fail "produce to disk-$p"; done
good=() bad=()
for p in 0 1 2 3; do
  if [[ -d "$d1/disk-$p" ]]; then good+=("$p"); else bad+=("$p"); fi
done
[[ ${#good[@]} -eq 2 && ${#bad[@]} -eq 2 ]] || fail "placement: d1 has ${good[*]}, d2 has ${bad[*]}"
check "disk-${good[0]},${good[1]} in d1 and disk-${bad[0]},${bad[1]} in d2"

touch "$d2.fail"
sleep 0.2
# kcat retries KAFKA_STORAGE_ERROR (retriable) until its timeout: no retries here, to see it.
out="$(seq 1 10 | produce "${bad[0]}" -X message.send.max.retries=0 || true)"
grep -q "Disk error when trying to access log file on disk" <<<"$out" || { echo "$out"; fail "a produce to disk-${bad[0]} in the failed dir did not fail with KAFKA_STORAGE_ERROR"; }
grep -q 'msg="log dir offline"' "$SLUICE_LOG" || fail "the node did not take the dir offline"
check "a produce to disk-${bad[0]} (failed dir): KAFKA_STORAGE_ERROR; the dir is offline"

for p in "${good[@]}"; do
  seq 1 100 | sed "s/^/b$p-/" | produce "$p" > "$work/good.out" || { cat "$work/good.out"; fail "produce to disk-$p (healthy dir) after the failure"; }
  got="$(timeout 30 kcat -b "$bootstrap" -C -t disk -p "$p" -o beginning -e -q | wc -l)"
  [[ "$got" -eq 200 ]] || fail "read $got records of disk-$p, want 200"
done
check "disk-${good[0]},${good[1]} (healthy dir) take acks=all produces and serve all 200 records each"

logdirs > "$work/describe.json" || fail "kafka-log-dirs --describe"
python3 - "$work/describe.json" "$d1" "$d2" <<'PY' || fail "kafka-log-dirs after the failure: $(cat "$work/describe.json")"
import json, sys
doc = json.load(open(sys.argv[1]))
dirs = {d["logDir"]: d for d in doc["brokers"][0]["logDirs"]}
assert "KafkaStorageException" in (dirs[sys.argv[3]]["error"] or ""), dirs[sys.argv[3]]
assert dirs[sys.argv[3]]["partitions"] == [], dirs[sys.argv[3]]
assert dirs[sys.argv[2]]["error"] is None and len(dirs[sys.argv[2]]["partitions"]) == 2, dirs[sys.argv[2]]
PY
check "kafka-log-dirs: d2 KafkaStorageException, d1 lists its 2 partitions"
step "PASS in $((SECONDS - t0))s"
