#!/usr/bin/env bash
# kcat (librdkafka) against a real `sluice server`, librdkafka's defaults (producer acks=all,
# not idempotent; consumer read_committed, so the last stable offset must be right):
#   - metadata -L: one broker, at the bootstrap address; created topic with 3 partitions;
#   - produce 300 keyed lines with -K: into a 3-partition topic (librdkafka's CRC32 key hash);
#   - consume -C -o beginning -e: exactly the 300 key/value pairs, offsets 0.. with no gap
#     per partition, spread over at least 2 partitions;
#   - produce to a topic nobody created (auto-creation from Metadata, as the README shows)
#     and read it back.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init kcat
records=300
topic=kcat-keyed

command -v kcat > /dev/null || fail "kcat not installed (setup.sh installs it)"
step "kcat $(kcat -V 2>&1 | sed -n 's/^Version \([^ ]*\).*librdkafka \([0-9.]*\).*/\1, librdkafka \2/p')"
sluice_build
sluice_start
b="$SLUICE_BOOTSTRAP"

# The topic is made with Kafka's topics tool so a partition count of 3 is certain.
"$ref" tool topics --bootstrap-server "$b" --create --topic "$topic" --partitions 3 --replication-factor 1 \
  > "$work/create.txt" 2>&1 || { cat "$work/create.txt"; fail "topics --create $topic"; }

check "metadata -L: 1 broker at $b, topic $topic with 3 partitions"
kcat -b "$b" -L -t "$topic" > "$work/metadata.txt" 2>&1 || { cat "$work/metadata.txt"; fail "kcat -L"; }
cat "$work/metadata.txt"
grep -Eq '^ 1 brokers:' "$work/metadata.txt" || fail "kcat -L: not exactly 1 broker"
grep -Eq "broker [0-9]+ at $b" "$work/metadata.txt" || fail "kcat -L: no broker at $b"
grep -Eq "topic \"$topic\" with 3 partitions:" "$work/metadata.txt" || fail "kcat -L: $topic without 3 partitions"
[[ "$(grep -c 'leader [0-9]*, replicas' "$work/metadata.txt")" -eq 3 ]] \
  || fail "kcat -L: not 3 partitions with a leader"
! grep -q 'Broker:' "$work/metadata.txt" || fail "kcat -L reports a topic or partition error"

check "produce -K: $records keyed lines (key-i:value-i)"
for ((i = 0; i < records; i++)); do echo "key-$i:value-$i"; done > "$work/sent.txt"
# librdkafka retries a message for message.timeout.ms (5 min) by default; 60 s is plenty.
timeout 60 kcat -b "$b" -t "$topic" -P -K: < "$work/sent.txt" > "$work/produce.txt" 2>&1 \
  || { cat "$work/produce.txt"; fail "kcat -P (exit $?; 124 is a timeout: not every message delivered in 60 s)"; }
[[ ! -s "$work/produce.txt" ]] || { cat "$work/produce.txt"; fail "kcat -P reported errors"; }

check "consume -C -o beginning -e: the $records pairs, offsets dense per partition"
timeout 60 kcat -b "$b" -t "$topic" -C -o beginning -e -f '%p %o %k:%s\n' > "$work/consumed.txt" 2> "$work/consume.err" \
  || { cat "$work/consume.err"; fail "kcat -C"; }
got="$(wc -l < "$work/consumed.txt")"
[[ "$got" -eq "$records" ]] || { head -n 5 "$work/consumed.txt"; cat "$work/consume.err"; fail "kcat -C read $got records, want $records"; }
cmp -s <(sort "$work/sent.txt") <(awk '{ print $3 }' "$work/consumed.txt" | sort) \
  || fail "kcat -C: consumed key:value pairs differ from those produced"
# Offsets per partition must run 0, 1, 2, ... in the order kcat printed them.
awk '{ if ($2 != next_offset[$1]) { print "partition " $1 " offset " $2 ", want " next_offset[$1] + 0; bad = 1 } next_offset[$1] = $2 + 1 }
     END { exit bad }' "$work/consumed.txt" > "$work/gaps.txt" || { head "$work/gaps.txt"; fail "kcat -C: offsets not dense per partition"; }
partitions_used="$(awk '{ print $1 }' "$work/consumed.txt" | sort -u | wc -l)"
[[ "$partitions_used" -ge 2 ]] || fail "kcat -C: $records keys landed in $partitions_used partition(s), want a spread over 3"
step "records spread over $partitions_used partitions: $(awk '{ n[$1]++ } END { for (p in n) printf "p%s=%d ", p, n[p] }' "$work/consumed.txt")"

check "auto-creation: produce to kcat-auto (never created), consume the 3 records back"
printf 'a:1\nb:2\nc:3\n' | timeout 60 kcat -b "$b" -t kcat-auto -P -K: > "$work/auto-produce.txt" 2>&1 \
  || { cat "$work/auto-produce.txt"; fail "kcat -P to an uncreated topic (exit $?)"; }
timeout 60 kcat -b "$b" -t kcat-auto -C -o beginning -e -f '%k:%s\n' > "$work/auto.txt" 2> "$work/auto.err" \
  || { cat "$work/auto.err"; fail "kcat -C kcat-auto"; }
[[ "$(sort "$work/auto.txt" | tr '\n' ' ')" == "a:1 b:2 c:3 " ]] \
  || { cat "$work/auto-produce.txt" "$work/auto.err"; fail "kcat-auto read back '$(tr '\n' ' ' < "$work/auto.txt")', want a:1 b:2 c:3"; }

sluice_stop
step "PASS in $((SECONDS - t0))s"
