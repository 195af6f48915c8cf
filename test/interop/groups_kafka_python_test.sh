#!/usr/bin/env bash
# kafka-python KafkaConsumer(group_id=...) against a real `sluice server`, defaults except
# auto_offset_reset=earliest (see groups_kafka_python.py):
#   - 200 records into a 2-partition topic; a consumer process in the group reads exactly
#     those and closes (auto commit on close);
#   - `sluice group describe` shows the group Empty with lag 0 on both partitions;
#   - 50 more records; a new consumer process (a restart) resumes at the commits and reads
#     exactly the 50 new ones; a third one reads nothing new.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init groups_kafka_python
topic=python-group
group=python-g

python3 -c 'import kafka' 2>/dev/null || fail "kafka-python not importable by python3 (setup.sh installs it)"
sluice_build
sluice_start
b="$SLUICE_BOOTSTRAP"
py() { timeout 120 python3 "$here/groups_kafka_python.py" "$b" "$topic" "$group" "$@"; }
timeout 60 "$SLUICE_BIN" topic create "$topic" -p 2 --brokers "$b" > /dev/null || fail "sluice topic create"

check "200 records; a group member reads exactly those and commits on close"
py produce 0 200 || fail "kafka-python produce"
py consume 0 200 || fail "kafka-python group consume (first run)"

check "sluice group describe $group: Empty, lag 0 on both partitions"
timeout 60 "$SLUICE_BIN" group describe "$group" --brokers "$b" > "$work/describe.txt" \
  || { cat "$work/describe.txt"; fail "sluice group describe"; }
cat "$work/describe.txt"
grep -Eq '^STATE +Empty$' "$work/describe.txt" || fail "group $group is not Empty after the consumer closed"
[[ "$(awk -v t="$topic" '$1 == t && $3 == $4 && $5 == 0' "$work/describe.txt" | wc -l)" -eq 2 ]] \
  || fail "group $group: not both partitions committed at the log end"

check "50 more records; a restarted member resumes at the commits and reads exactly those"
py produce 200 50 || fail "kafka-python produce"
py consume 200 50 || fail "kafka-python group consume after restart"
py consume 250 0 || fail "kafka-python group consume with everything committed"

sluice_stop
step "PASS in $((SECONDS - t0))s"
