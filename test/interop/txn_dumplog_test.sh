#!/usr/bin/env bash
# Kafka's DumpLogSegments with its transaction log decoder (bench/kafka-ref tool dump-log
# --transaction-log-decoder, the pinned release) reads the __transaction_state segments
# that a real `sluice server` wrote (SLUICE_INTEROP_BROKER=kafka-ref: the reference Kafka's
# own segments, read while it runs) (issue 15):
#   - librdkafka (Transactions V1) and Java kafka-clients (V2: the epoch bumped at every
#     end) each run commit, abort, commit transactions of 4 records over a 2-partition topic;
#   - each id's records are in the __transaction_state partition Kafka's rule picks
#     (abs(String.hashCode) % 50), the only other non-empty partitions being none;
#   - the tool reports no exception, error or invalid batch, every record decodes to JSON;
#   - each id's records, normalised (producer ids named in order of appearance, times out,
#     successive Ongoing records of one transaction as its last),
#     equal txn_dumplog.expected, which is what the pinned Kafka writes: the same states
#     (Empty, Ongoing, PrepareCommit, CompleteCommit, ... PrepareAbort, CompleteAbort), the
#     same partitions, epochs and value versions. Run with SLUICE_INTEROP_BROKER=kafka-ref to
#     check the file still is.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init txn_dumplog
command -v java > /dev/null || fail "java not installed (setup.sh installs it)"
python3 -c 'import confluent_kafka' 2>/dev/null || fail "confluent-kafka not importable by python3 (setup.sh installs it)"
rdk_id=dumplog-rdk
java_topic=dumplog-java
java_id="interop-java-txn-$java_topic" # TransactionalProduceConsumeScenario's id for the topic

sluice_build
sluice_start
b="$SLUICE_BOOTSTRAP"
for topic in dumplog-rdk "$java_topic"; do
  "$ref" tool topics --bootstrap-server "$b" --create --topic "$topic" --partitions 2 --replication-factor 1 \
    > "$work/create.txt" 2>&1 || { cat "$work/create.txt"; fail "topics --create $topic"; }
done

step "librdkafka ($rdk_id) and Java ($java_id): commit, abort, commit"
timeout 90 python3 "$here/txn_confluent_kafka.py" "$b" commit-abort dumplog-rdk 2 1 4 "$rdk_id" > "$work/rdk.txt" 2>&1 \
  || { cat "$work/rdk.txt"; fail "confluent-kafka commit-abort"; }
"$java_run" --bootstrap "$b" txn-produce-consume "$java_topic" 2 1 4 > "$work/java.txt" 2>&1 \
  || { cat "$work/java.txt"; fail "java txn-produce-consume"; }

if against_kafka_ref; then
  # bench/kafka-ref stop removes the run dir: read the live segments (flushed to the page
  # cache, which is all a reader needs).
  data="$("$ref" status | awk '/^run dir:/ { print $3 }')/node1/data"
else
  sluice_stop
  data="$SLUICE_DATA"
fi

# partition_for ID: Kafka's rule, abs(Java String.hashCode) % 50.
partition_for() {
  python3 - "$1" <<'PY'
import sys
h = 0
for unit in sys.argv[1].encode("utf-16-be").hex(" ", 2).split():
    h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
h = h - (1 << 32) if h >= 1 << 31 else h
print(0 if h == -(1 << 31) else abs(h) % 50)  # Kafka's Utils.abs, then the partition count
PY
}

check "the records of both ids are in the __transaction_state partitions Kafka's rule picks, and only there"
want=("__transaction_state-$(partition_for "$rdk_id")" "__transaction_state-$(partition_for "$java_id")")
mapfile -t nonempty < <(find "$data" -path '*/__transaction_state-*' -name '*.log' -size +0 -printf '%h\n' \
  | xargs -rn1 basename | sort -u)
[[ "$(printf '%s\n' "${nonempty[@]}")" == "$(printf '%s\n' "${want[@]}" | sort -u)" ]] \
  || fail "non-empty __transaction_state partitions: ${nonempty[*]:-none}; Kafka's rule gives ${want[*]}"

: > "$work/answers.txt"
for id in "$rdk_id" "$java_id"; do
  dir="$data/__transaction_state-$(partition_for "$id")"
  files="$(find "$dir" -name '*.log' | sort | paste -sd, -)"
  check "dump-log --transaction-log-decoder decodes every record of ${dir#"$data"/} ($id)"
  timeout 60 "$ref" tool dump-log --transaction-log-decoder --files "$files" > "$work/dump.txt" 2>&1 \
    || { cat "$work/dump.txt"; fail "kafka-ref tool dump-log exited non-zero"; }
  if grep -Eiq 'exception|error|corrupt|unknown|isvalid: false' "$work/dump.txt"; then
    grep -Ei 'exception|error|corrupt|unknown|isvalid: false' "$work/dump.txt" | head
    fail "dump-log reported a problem"
  fi
  python3 - "$work/dump.txt" "$id" >> "$work/answers.txt" <<'PY' || fail "dump-log output of $id not decoded"
import json, re, sys
path, txn_id = sys.argv[1:]
record = re.compile(r"^\| offset: \d+ .* key: (\{.*\}) payload: (\{.*\}|null)$")
names = {"-1": "-1"}
print("transactional id " + txn_id)
count, lines, last_status = 0, [], None
for line in open(path):
    line = line.rstrip("\n")
    if not line.startswith("| offset:"):
        continue
    m = record.match(line)
    if not m:
        sys.exit("record line not decoded: " + line)
    key, payload = json.loads(m.group(1)), json.loads(m.group(2))
    if key != {"type": "0", "data": {"transactionalId": txn_id}}:
        sys.exit("record of another key: " + line)
    count += 1
    if payload is None:
        lines.append("tombstone")
        last_status = None
        continue
    cells = ["version=" + payload["version"]]
    for field, value in payload["data"].items():
        if field.endswith("ProducerId") or field == "producerId":
            value = names.setdefault(str(value), "P%d" % (len(names) - 1))
        elif field.endswith("TimestampMs"):
            value = "-1" if value == -1 else "<time>"
        elif field == "transactionPartitions" and value is not None:
            value = sorted("%s-%d" % (tp["topic"], p) for tp in value for p in tp["partitionIds"])
        cells.append("%s=%s" % (field, json.dumps(value, separators=(",", ":")) if isinstance(value, list) else value))
    status = payload["data"]["transactionStatus"]
    # Partitions joining an ongoing transaction in one AddPartitionsToTxn or in several
    # (as the client's or leader's requests happened to batch them): keep the last.
    if status == "Ongoing" and last_status == "Ongoing":
        lines.pop()
    lines.append(" ".join(cells))
    last_status = status
if count == 0:
    sys.exit("no records for " + txn_id)
print("\n".join(lines))
PY
done
cat "$work/answers.txt"

check "the records equal what the pinned Kafka writes (txn_dumplog.expected)"
if ! diff -u "$here/txn_dumplog.expected" "$work/answers.txt" > "$work/diff.txt"; then
  cat "$work/diff.txt"
  fail "the __transaction_state records differ from the pinned Kafka's"
fi

against_kafka_ref && sluice_stop
step "PASS in $((SECONDS - t0))s"
