#!/usr/bin/env bash
# JBOD (KIP-113/KIP-858) with Kafka's own tools against one Sluice node with two log dirs:
# kafka-log-dirs --describe lists both dirs with the partitions' real sizes; a
# kafka-reassign-partitions JSON with log_dirs moves a partition to the other dir while
# kcat produces to it with acks=all (AlterReplicaLogDirs; the node's log shows the move
# began mid-production); --verify reports the move
# completed; every acknowledged record is read back at its offset; the partition's
# directory is in the new dir and the old one goes; kafka-log-dirs shows it there. A move
# to a dir not in log.dirs fails with LOG_DIR_NOT_FOUND as Kafka's does.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init jbod_kafka_tools
against_kafka_ref && { echo "jbod_kafka_tools: needs Sluice's log dirs; skipped with SLUICE_INTEROP_BROKER=kafka-ref"; exit 0; }
sluice_build

read -r -a ports <<<"$(free_ports 2)"
bootstrap="127.0.0.1:${ports[0]}"
d1="$work/d1" d2="$work/d2"
SLUICE_LOG="$work/node.log"
"$SLUICE_BIN" server --override "listeners=PLAINTEXT://$bootstrap,CONTROLLER://127.0.0.1:${ports[1]}" \
  --override "controller.quorum.voters=1@127.0.0.1:${ports[1]}" --override "log.dirs=$d1,$d2" \
  --override log.segment.delete.delay.ms=1000 > "$SLUICE_LOG" 2>&1 < /dev/null &
sluice_pids+=("$!")
deadline=$((SECONDS + 30))
until api_versions_ok "$bootstrap"; do
  ((SECONDS < deadline)) || fail "sluice did not start"
  sleep 0.2
done
step "one node with log.dirs=$d1,$d2 at $bootstrap"

tool() { timeout 120 "$ref" tool "$1" --bootstrap-server "$bootstrap" "${@:2}" 2>&1; }
classpath="$("$ref" classpath | tail -n 1)" || fail "bench/kafka-ref classpath"
# kclass runs a Kafka tool's main class (kafka-log-dirs has no short name in bench/kafka-ref).
kclass() {
  timeout 120 java -Xmx512M -Djava.awt.headless=true -Dlog4j2.configurationFile="$repo/bench/kafka-ref.d/log4j2-tools.xml" \
    -cp "$classpath" "$1" --bootstrap-server "$bootstrap" "${@:2}" 2>&1
}
reassign() { tool reassign-partitions "$@"; }
# logdirs prints kafka-log-dirs' JSON line.
logdirs() { kclass org.apache.kafka.tools.LogDirsCommand --describe --broker-list 1 --topic-list jb > "$work/logdirs.out"; grep "^{" "$work/logdirs.out" || { cat "$work/logdirs.out" >&2; return 1; }; }

tool topics --create --topic jb --partitions 4 --replication-factor 1 > /dev/null || fail "create topic"
for p in 0 1 2 3; do
  seq 1 500 | sed "s/^/p$p-/" | timeout 60 kcat -b "$bootstrap" -P -t jb -p "$p" -X acks=all || fail "kcat produce"
done
logdirs > "$work/describe1.json" || fail "kafka-log-dirs --describe"
python3 - "$work/describe1.json" "$d1" "$d2" <<'PY' || fail "kafka-log-dirs --describe: $(cat "$work/describe1.json")"
import json, sys
doc = json.load(open(sys.argv[1]))
dirs = {d["logDir"]: d for d in doc["brokers"][0]["logDirs"]}
assert set(dirs) == {sys.argv[2], sys.argv[3]}, dirs.keys()
parts = [p for d in dirs.values() for p in d["partitions"]]
assert sorted(p["partition"] for p in parts) == ["jb-0", "jb-1", "jb-2", "jb-3"], parts
assert all(p["size"] > 500 * 5 and not p["isFuture"] and p["offsetLag"] == 0 for p in parts), parts
assert all(len(d["partitions"]) == 2 for d in dirs.values()), "placement is not 2 and 2"
PY
check "kafka-log-dirs --describe: both dirs, 2 partitions each (fewest logs first), real sizes"

cur="$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
print([l["logDir"] for l in d["brokers"][0]["logDirs"] if any(p["partition"]=="jb-0" for p in l["partitions"])][0])' "$work/describe1.json")"
dest="$d1"; [[ "$cur" == "$d1" ]] && dest="$d2"
printf '{"version":1,"partitions":[{"topic":"jb","partition":0,"replicas":[1],"log_dirs":["%s"]}]}\n' "$dest" > "$work/move.json"

# A producer on jb-0 during the move: batches of 2000 records, each kcat run must succeed.
(
  for b in $(seq 1 30); do
    seq 1 2000 | sed "s/^/m$b-/" | timeout 60 kcat -b "$bootstrap" -P -t jb -p 0 -X acks=all -X linger.ms=5 || exit 1
    echo "$b" > "$work/batches"
    sleep 0.2 # the producer's pace: it outlasts the tool's JVM start
  done
) &
producer=$!
sleep 0.5
reassign --reassignment-json-file "$work/move.json" --execute > "$work/execute.txt" || { cat "$work/execute.txt"; fail "--execute"; }
grep -q "Successfully started moving log directory to $dest for replica jb-0 with broker 1" "$work/execute.txt" || { cat "$work/execute.txt"; fail "--execute did not start the log dir move"; }
check "kafka-reassign-partitions --execute started the log dir move of jb-0 to $dest"
wait "$producer" || fail "a kcat produce to jb-0 failed during the move"
deadline=$((SECONDS + 60))
until reassign --reassignment-json-file "$work/move.json" --verify > "$work/verify.txt" &&
  grep -q "Reassignment of replica jb-0-1 completed successfully" "$work/verify.txt"; do
  ((SECONDS < deadline)) || { cat "$work/verify.txt"; fail "--verify never reported the move completed"; }
  sleep 1
done
check "kafka-reassign-partitions --verify: the replica's move completed"

want=$((500 + 30 * 2000))
timeout 60 kcat -b "$bootstrap" -C -t jb -p 0 -o beginning -e -q -f '%o %s\n' > "$work/read.txt"
got="$(wc -l < "$work/read.txt")"
[[ "$got" -eq "$want" ]] || fail "read $got records of jb-0 after the move, want $want"
awk '$1 != NR - 1 { print "offset " $1 " at line " NR; exit 1 }' "$work/read.txt" || fail "offsets of jb-0 are not 0..$((want - 1))"
[[ "$(sed -n 501p "$work/read.txt")" == "500 m1-1" ]] || fail "record 500 is $(sed -n 501p "$work/read.txt")"
check "all $want acknowledged records of jb-0 read back at offsets 0..$((want - 1))"
at_start="$(grep 'msg="moving partition to another log dir" .*partition=jb-0' "$SLUICE_LOG" | grep -o 'log_end_offset=[0-9]*' | cut -d= -f2)"
at_swap="$(grep 'msg="partition moved to another log dir" .*partition=jb-0' "$SLUICE_LOG" | grep -o 'log_end_offset=[0-9]*' | cut -d= -f2)"
[[ -n "$at_start" && "$at_start" -gt 500 && "$at_start" -lt "$want" ]] || fail "the move did not start while the producer ran (log end offset $at_start at its start)"
check "the move began at log end offset $at_start and swapped at $at_swap, while the producer went on to $want"

[[ -d "$dest/jb-0" ]] || fail "$dest/jb-0 missing after the move"
deadline=$((SECONDS + 20))
while compgen -G "$cur/jb-0*" > /dev/null; do
  ((SECONDS < deadline)) || fail "the old log $(compgen -G "$cur/jb-0*") is still there"
  sleep 0.5
done
logdirs > "$work/describe2.json"
python3 - "$work/describe2.json" "$dest" <<'PY' || fail "kafka-log-dirs after the move: $(cat "$work/describe2.json")"
import json, sys
doc = json.load(open(sys.argv[1]))
where = {p["partition"]: (d["logDir"], p) for d in doc["brokers"][0]["logDirs"] for p in d["partitions"]}
d, p = where["jb-0"]
assert d == sys.argv[2] and not p["isFuture"] and p["size"] > 60000 * 5, where
PY
check "jb-0 lives in $dest (kafka-log-dirs, on disk); the old dir's copy was removed"

printf '{"version":1,"partitions":[{"topic":"jb","partition":1,"replicas":[1],"log_dirs":["%s"]}]}\n' "$work/nope" > "$work/bad.json"
reassign --reassignment-json-file "$work/bad.json" --execute > "$work/bad.txt" || true
grep -q "LogDirNotFoundException" "$work/bad.txt" || { cat "$work/bad.txt"; fail "a move to a dir not in log.dirs did not fail with LogDirNotFoundException"; }
check "a move to a dir not in log.dirs: LogDirNotFoundException"
step "PASS in $((SECONDS - t0))s"
