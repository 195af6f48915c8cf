#!/usr/bin/env bash
# Kafka's consumer-groups tool (bench/kafka-ref tool consumer-groups) and `sluice group`,
# against a real `sluice server` and against the reference Apache Kafka at the same time.
# On each broker the same groups are set up with the sluice CLI (a topic with 4 records in
# partition 0 and 2 in partition 1; gE and gD/gD2 consumed to the end and left Empty; gL
# with a live member that has committed everything), then each question is asked of both
# tools: describe --state, describe (offsets) of a live and of an empty group,
# describe --members --verbose, reset-offsets --shift-by -3 and --to-datetime as dry runs,
# --to-offset 1 --execute on one partition, a reset of the live group (refused), delete,
# then describe and list. Every answer is normalised into one canonical form
# (member ids, hosts, ports and column widths out). Three transcripts must then be equal:
# Kafka's tool against Sluice, `sluice group` against Sluice, and Kafka's tool against
# Kafka; `sluice group` against Kafka is compared too, which checks the normaliser.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init groups_kafka_tool

export KAFKA_REF_STATE="$work/kafka-ref-state"
live_members=()
stop_all() {
  local pid
  for pid in "${live_members[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  "$ref" stop > /dev/null 2>&1 || true
  sluice_cleanup
}
trap stop_all EXIT
unset SLUICE_INTEROP_BROKER

sluice_build
"$ref" start > "$work/kafka-ref-start.txt" 2>&1 &
ref_starter=$!
sluice_start
sluice_bootstrap="$SLUICE_BOOTSTRAP"
wait "$ref_starter" || { cat "$work/kafka-ref-start.txt"; fail "bench/kafka-ref start"; }
kafka_bootstrap="$(tail -n 1 "$work/kafka-ref-start.txt")"
step "reference Kafka $("$ref" version) up at $kafka_bootstrap"

cli() { local b="$1"; shift; timeout 60 "$SLUICE_BIN" "$@" --brokers "$b"; }
# The answers are compared, not the exit statuses (a refused reset is an answer): both
# print their errors, which the canonical forms keep.
tool() { local b="$1"; shift; timeout 120 "$ref" tool consumer-groups --bootstrap-server "$b" "$@" 2>&1 || true; }
ask_cli() { local b="$1"; shift; timeout 60 "$SLUICE_BIN" "$@" --brokers "$b" 2>&1 || true; }

# setup BOOTSTRAP DIR: the topic, the Empty groups and the live member (left running).
setup() {
  local b="$1" dir="$2" g deadline
  cli "$b" topic create cg -p 2 > /dev/null
  printf 'a\nb\nc\nd\n' | cli "$b" produce cg --partition 0
  printf 'e\nf\n' | cli "$b" produce cg --partition 1
  for g in gE gD gD2; do
    # A new Kafka creates __consumer_offsets on first use: COORDINATOR_NOT_AVAILABLE meanwhile.
    deadline=$((SECONDS + 30))
    until cli "$b" consume cg --group "$g" -e > /dev/null 2> "$dir/setup.err"; do
      ((SECONDS < deadline)) || { cat "$dir/setup.err"; fail "consume --group $g at $b"; }
      sleep 1
    done
  done
  "$SLUICE_BIN" consume cg --group gL --brokers "$b" > /dev/null 2> "$dir/live.err" &
  live_members+=($!)
  # The live member commits every 5 s (franz-go's auto commit): wait for lag 0 and Stable.
  deadline=$((SECONDS + 30))
  until cli "$b" group describe gL > "$dir/live.txt" 2>&1 && grep -Eq '^STATE +Stable$' "$dir/live.txt" \
    && [[ "$(awk '$1 == "cg" && $5 == "0"' "$dir/live.txt" | wc -l)" -eq 2 ]]; do
    ((SECONDS < deadline)) || { cat "$dir/live.txt" "$dir/live.err"; fail "group gL at $b not Stable with lag 0 within 30 s"; }
    sleep 1
  done
}

# Canonical forms, one per question; each reads a tool's output on stdin.
tool_list() { grep -Ev '^\s*$' | sort; }
sluice_list() { awk 'NR > 1 { print $1 }' | sort; }
tool_state() { awk '$1 == "gL" { print "state", $(NF-1), "members", $NF, "protocol", $(NF-2) }'; }
sluice_state() {
  awk '$1 == "STATE" { s = $2 } $1 == "MEMBERS" { m = $2 } $1 == "PROTOCOL" { p = $2 }
       END { print "state", s, "members", m, "protocol", p }'
}
# offsets: TOPIC PARTITION CURRENT END LAG and whether a member owns the partition.
tool_offsets() {
  awk '$2 == "cg" { print $2, $3, $4, $5, $6, ($7 == "-" ? "unowned" : "owned") }
       /has no active members/ { print "no active members" }' | sort
}
sluice_offsets() {
  awk '$1 == "cg" { print $1, $2, $3, $4, $5, ($6 == "-" ? "unowned" : "owned") }
       $1 == "MEMBERS" && $2 == 0 { print "no active members" }' | sort
}
# members: CLIENT-ID HOST #PARTITIONS ASSIGNMENT
tool_members() { awk '$1 == "gL" { print $4, $3, $5, $7 }'; }
sluice_members() {
  awk 'seen && NF == 5 { n = split($5, a, /[,;:]/); print $3, $4, n - 1, $5 } $1 == "MEMBER-ID" { seen = 1 } NF == 0 { seen = 0 }'
}
tool_plan() { awk '$1 ~ /^g/ && $2 == "cg" { print $2, $3, $4 } /^Error: Assignments can only be reset/ { print "refused", $NF }' | tr -d . | sort; }
sluice_plan() {
  awk '$1 ~ /^g/ && $2 == "cg" { print $2, $3, $4 }
       /offsets can be reset only when it has no members/ { for (i = 1; i < NF; i++) if ($i == "is") print "refused", $(i+1) }' | sort
}
tool_delete() { sed -nE "s/^Deletion of requested consumer groups \('([^']*)'\) was successful\.$/deleted/p"; }
sluice_delete() { sed -nE 's/^deleted group .*/deleted/p'; }

# ask BOOTSTRAP DIR: every question, once with Kafka's tool (DIR/tool.txt) and once with
# sluice group (DIR/sluice.txt), both in canonical form.
ask() {
  local b="$1" dir="$2" t="$2/tool.txt" s="$2/sluice.txt"
  : > "$t"; : > "$s"
  q() { echo "== $1" >> "$t"; echo "== $1" >> "$s"; }
  q "state gL";         tool "$b" --describe --group gL --state | tool_state >> "$t"; ask_cli "$b" group describe gL | sluice_state >> "$s"
  q "describe gL";      tool "$b" --describe --group gL | tool_offsets >> "$t";       ask_cli "$b" group describe gL | sluice_offsets >> "$s"
  q "describe gE";      tool "$b" --describe --group gE | tool_offsets >> "$t";       ask_cli "$b" group describe gE | sluice_offsets >> "$s"
  q "members gL";       tool "$b" --describe --group gL --members --verbose | tool_members >> "$t"; ask_cli "$b" group describe gL | sluice_members >> "$s"
  q "shift-by -3 dry";  tool "$b" --reset-offsets --group gE --topic cg --shift-by -3 --dry-run | tool_plan >> "$t"
  ask_cli "$b" group reset-offsets gE --topic cg --shift-by -3 | sluice_plan >> "$s"
  q "to-datetime dry";  tool "$b" --reset-offsets --group gE --all-topics --to-datetime 2100-01-01T00:00:00.000Z --dry-run | tool_plan >> "$t"
  ask_cli "$b" group reset-offsets gE --all-topics --to-datetime 2100-01-01T00:00:00Z | sluice_plan >> "$s"
  q "to-offset 1 cg:1"; tool "$b" --reset-offsets --group gE --topic cg:1 --to-offset 1 --execute | tool_plan >> "$t"
  ask_cli "$b" group reset-offsets gE --topic cg:1 --to-offset 1 --execute | sluice_plan >> "$s"
  q "reset live gL";    tool "$b" --reset-offsets --group gL --all-topics --to-earliest --execute | tool_plan >> "$t"
  ask_cli "$b" group reset-offsets gL --all-topics --to-earliest --execute | sluice_plan >> "$s"
  q "delete";           tool "$b" --delete --group gD | tool_delete >> "$t";          ask_cli "$b" group delete gD2 | sluice_delete >> "$s"
  q "describe gE after"; tool "$b" --describe --group gE | tool_offsets >> "$t";      ask_cli "$b" group describe gE | sluice_offsets >> "$s"
  q "list after";       tool "$b" --list | tool_list >> "$t";                          ask_cli "$b" group list | sluice_list >> "$s"
}

mkdir -p "$work/sluice" "$work/kafka"
check "setup on both brokers: topic cg, Empty groups gE gD gD2, live group gL"
setup "$sluice_bootstrap" "$work/sluice" &
setup_sluice=$!
setup "$kafka_bootstrap" "$work/kafka" || fail "setup on Kafka"
wait "$setup_sluice" || fail "setup on Sluice"

check "the same questions to Kafka's tool and to sluice group, on both brokers at once"
ask "$sluice_bootstrap" "$work/sluice" &
ask_sluice=$!
ask "$kafka_bootstrap" "$work/kafka"
wait "$ask_sluice" || fail "questions to Sluice"

compare() {
  if ! diff -u "$1" "$2" > "$work/diff.txt"; then
    cat "$work/diff.txt"
    fail "$3"
  fi
  step "equal: $3"
}
# What Kafka's tool answers against Kafka, in canonical form: the transcripts are also
# held to it, so that an answer missing from all of them (a normaliser that matches
# nothing) cannot pass.
cat > "$work/expected.txt" <<'TXT'
== state gL
state Stable members 1 protocol cooperative-sticky
== describe gL
cg 0 4 4 0 owned
cg 1 2 2 0 owned
== describe gE
cg 0 4 4 0 unowned
cg 1 2 2 0 unowned
no active members
== members gL
sluice-cli /127.0.0.1 2 cg:0,1
== shift-by -3 dry
cg 0 1
cg 1 0
== to-datetime dry
cg 0 4
cg 1 2
== to-offset 1 cg:1
cg 1 1
== reset live gL
refused Stable
== delete
deleted
== describe gE after
cg 0 4 4 0 unowned
cg 1 1 2 1 unowned
no active members
== list after
gE
gL
TXT
compare "$work/expected.txt" "$work/kafka/tool.txt" "Kafka's tool against Kafka and the expected answers"
compare "$work/kafka/tool.txt" "$work/sluice/tool.txt" "Kafka's tool against Kafka and against Sluice"
compare "$work/sluice/tool.txt" "$work/sluice/sluice.txt" "Kafka's tool and sluice group, against Sluice"
compare "$work/kafka/tool.txt" "$work/kafka/sluice.txt" "Kafka's tool and sluice group, against Kafka"

step "PASS in $((SECONDS - t0))s"
