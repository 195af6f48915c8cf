#!/usr/bin/env bash
# Kafka's DumpLogSegments with its offsets decoder (bench/kafka-ref tool dump-log
# --offsets-decoder, the pinned release) reads the __consumer_offsets segment that a real
# `sluice server` wrote for a consumer group (issue 7):
#   - a fresh server; a 3-partition topic with 5/7/9 records in partitions 0/1/2;
#     `sluice consume --group` to the end (the first group request of the server, so it
#     also waits out COORDINATOR_NOT_AVAILABLE), then one more record per partition and a
#     second `sluice consume --group` run;
#   - the server is stopped cleanly; the only non-empty __consumer_offsets partition is the
#     one Kafka's own rule picks for the group (abs(String.hashCode) % 50);
#   - the tool's output holds no exception or error, every batch is valid, and every record
#     decodes to JSON: group metadata records (protocol type consumer, a member assigned
#     partitions 0,1,2 of the topic, and, last, the empty group after the member left) and
#     offset commits whose last offset per partition is the log end (6, 8, 10).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init groups_dumplog
against_kafka_ref && fail "this test reads Sluice's data dir; it has no kafka-ref mode"
command -v java > /dev/null || fail "java not installed (setup.sh installs it)"
topic=dumplog-group
group=dumplog-g

sluice_build
sluice_start
b="$SLUICE_BOOTSTRAP"
timeout 30 "$SLUICE_BIN" topic create "$topic" -p 3 --brokers "$b" > /dev/null || fail "sluice topic create"

# produce_to P N: N records into partition P.
produce_to() {
  for ((i = 0; i < $2; i++)); do echo "p$1-$i"; done \
    | timeout 30 "$SLUICE_BIN" produce "$topic" --partition "$1" --brokers "$b" > /dev/null \
    || fail "sluice produce to partition $1"
}

# consume_group WANT: one group member reads to the end, commits and leaves.
consume_group() {
  timeout 30 "$SLUICE_BIN" consume "$topic" --group "$group" -e --brokers "$b" > "$work/consumed.txt" \
    || fail "sluice consume --group $group"
  [[ "$(wc -l < "$work/consumed.txt")" -eq "$1" ]] \
    || fail "sluice consume --group read $(wc -l < "$work/consumed.txt") records, want $1"
}

step "5/7/9 records; consume --group; one more per partition; consume --group"
produce_to 0 5
produce_to 1 7
produce_to 2 9
consume_group 21
for p in 0 1 2; do produce_to "$p" 1; done
consume_group 3
sluice_stop

check "the group's commits are in the __consumer_offsets partition Kafka's rule picks"
want_partition="$(python3 - "$group" <<'PY'
import sys
h = 0
for unit in sys.argv[1].encode("utf-16-be").hex(" ", 2).split():
    h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
h = h - (1 << 32) if h >= 1 << 31 else h
print(0 if h == -(1 << 31) else abs(h) % 50)  # Kafka's Utils.abs, then the partition count
PY
)"
mapfile -t logs < <(find "$SLUICE_DATA" -path '*/__consumer_offsets-*' -name '*.log' -size +0 | sort)
[[ "${#logs[@]}" -eq 1 ]] || fail "want one non-empty __consumer_offsets segment, found ${#logs[@]}: ${logs[*]}"
[[ "$(basename "$(dirname "${logs[0]}")")" == "__consumer_offsets-$want_partition" ]] \
  || fail "group $group was written to ${logs[0]}, Kafka's rule gives partition $want_partition"

check "kafka-ref tool dump-log --offsets-decoder decodes every record of ${logs[0]#"$SLUICE_DATA"/}"
timeout 60 "$ref" tool dump-log --offsets-decoder --files "${logs[0]}" > "$work/dump.txt" 2>&1 \
  || { cat "$work/dump.txt"; fail "kafka-ref tool dump-log exited non-zero"; }
if grep -Eiq 'exception|error|corrupt|unknown|isvalid: false' "$work/dump.txt"; then
  grep -Ei 'exception|error|corrupt|unknown|isvalid: false' "$work/dump.txt" | head
  fail "dump-log reported a problem"
fi
python3 - "$work/dump.txt" "$group" "$topic" <<'PY' || fail "dump-log output does not show the group as written"
import json, re, sys
path, group, topic = sys.argv[1:]
record = re.compile(r"^\| offset: (\d+) .* key: (\{.*\}) payload: (\{.*\}|null)$")
metadata, commits, records = [], {}, 0
for line in open(path):
    line = line.rstrip("\n")
    if not line.startswith("| offset:"):
        continue
    m = record.match(line)
    if not m:
        sys.exit("record line not decoded: " + line)
    records += 1
    key, payload = json.loads(m.group(2)), json.loads(m.group(3))
    data = key["data"]
    if data["group"] != group:
        sys.exit("record of another group: " + line)
    if key["type"] == "2":
        metadata.append(payload["data"])
    elif key["type"] == "1" and data["topic"] == topic:
        commits.setdefault(data["partition"], []).append(payload["data"]["offset"])
    else:
        sys.exit("unexpected record: " + line)
if records == 0:
    sys.exit("no records in the dump")
if not metadata or any(g["protocolType"] != "consumer" for g in metadata):
    sys.exit("group metadata missing or not protocol type consumer: %r" % metadata)
assigned = [sorted(p for a in mem["assignment"]["assignedPartitions"] if a["topic"] == topic for p in a["partitions"])
            for g in metadata for mem in g["members"]]
if [0, 1, 2] not in assigned:
    sys.exit("no member assigned partitions 0,1,2 of %s: %r" % (topic, assigned))
if metadata[-1]["members"]:
    sys.exit("last group metadata record still has members (the consumer left): %r" % metadata[-1])
last = {p: offsets[-1] for p, offsets in commits.items()}
if last != {0: 6, 1: 8, 2: 10}:
    sys.exit("last committed offset per partition %r, want {0: 6, 1: 8, 2: 10}" % last)
print("%d records: %d group metadata, commits %r" % (records, len(metadata), commits))
PY

step "PASS in $((SECONDS - t0))s"
