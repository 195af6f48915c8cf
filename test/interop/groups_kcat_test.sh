#!/usr/bin/env bash
# kcat -G (librdkafka's balanced consumer, its defaults: auto commit, read_committed)
# in a consumer group against a real `sluice server`:
#   - 300 keyed records in a 3-partition topic; `kcat -G GROUP TOPIC -e` (with
#     auto.offset.reset=earliest, as a new group must; kcat's -o would override the commits)
#     reads every one of them, offsets dense per partition;
#   - the group committed on the way out: `sluice group describe` shows it Empty with lag 0
#     on all 3 partitions;
#   - 30 more records; the same kcat -G command resumes from the commits and reads exactly
#     the 30 new records.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init groups_kcat
records=300
topic=kcat-group
group=kcat-g

command -v kcat > /dev/null || fail "kcat not installed (setup.sh installs it)"
sluice_build
sluice_start
b="$SLUICE_BOOTSTRAP"
timeout 60 "$SLUICE_BIN" topic create "$topic" -p 3 --brokers "$b" > /dev/null || fail "sluice topic create"

# consume_group OUT: one kcat balanced-consumer run to the end of every partition.
consume_group() {
  timeout 60 kcat -b "$b" -G "$group" "$topic" -X auto.offset.reset=earliest -e -f '%p %o %k:%s\n' > "$1" 2> "$1.err" \
    || { cat "$1.err"; fail "kcat -G (exit $?)"; }
}

for ((i = 0; i < records; i++)); do echo "key-$i:value-$i"; done > "$work/sent.txt"
timeout 60 kcat -b "$b" -t "$topic" -P -K: < "$work/sent.txt" > "$work/produce.txt" 2>&1 \
  || { cat "$work/produce.txt"; fail "kcat -P"; }

check "kcat -G $group $topic -e (auto.offset.reset=earliest): all $records records, offsets dense per partition"
consume_group "$work/first.txt"
got="$(wc -l < "$work/first.txt")"
[[ "$got" -eq "$records" ]] || { cat "$work/first.txt.err"; fail "kcat -G read $got records, want $records"; }
cmp -s <(sort "$work/sent.txt") <(awk '{ print $3 }' "$work/first.txt" | sort) \
  || fail "kcat -G: records read differ from those produced"
awk '{ if ($2 != next_offset[$1]) { print "partition " $1 " offset " $2 ", want " next_offset[$1] + 0; bad = 1 } next_offset[$1] = $2 + 1 }
     END { exit bad }' "$work/first.txt" > "$work/gaps.txt" || { head "$work/gaps.txt"; fail "kcat -G: offsets not dense per partition"; }

check "sluice group describe $group: Empty, lag 0 on all 3 partitions"
timeout 60 "$SLUICE_BIN" group describe "$group" --brokers "$b" > "$work/describe.txt" \
  || { cat "$work/describe.txt"; fail "sluice group describe"; }
cat "$work/describe.txt"
grep -Eq '^STATE +Empty$' "$work/describe.txt" || fail "group $group is not Empty after kcat exited"
[[ "$(awk -v t="$topic" '$1 == t && $3 == $4 && $5 == 0' "$work/describe.txt" | wc -l)" -eq 3 ]] \
  || fail "group $group: not every partition committed at the log end"

check "30 more records; kcat -G resumes from the commits and reads exactly those"
for ((i = records; i < records + 30; i++)); do echo "key-$i:value-$i"; done > "$work/sent2.txt"
timeout 60 kcat -b "$b" -t "$topic" -P -K: < "$work/sent2.txt" > "$work/produce2.txt" 2>&1 \
  || { cat "$work/produce2.txt"; fail "kcat -P"; }
consume_group "$work/second.txt"
cmp -s <(sort "$work/sent2.txt") <(awk '{ print $3 }' "$work/second.txt" | sort) \
  || { head "$work/second.txt"; fail "kcat -G after the commits read $(wc -l < "$work/second.txt") records, want exactly the 30 new ones"; }

sluice_stop
step "PASS in $((SECONDS - t0))s"
