#!/usr/bin/env bash
# The sluice command line against the reference Apache Kafka and against a real `sluice
# server`, side by side: the same script of commands (topic create/list/describe/
# alter-config/delete, produce with keys and headers, consume with offsets, formats and
# --json, cluster info, cluster config set/get, txn list/describe/describe-producers/
# find-hanging/abort, and the error paths) runs against both, and the two transcripts
# must be equal once what legitimately differs is normalised: cluster and topic ids,
# ports, timestamps and producer ids, the server's free-text error details, and
# broker-level configs that come from each server's own setup rather than the topic.
# --group is checked outside the compared transcripts: against Kafka it must consume;
# against a Sluice that does not serve consumer groups it must fail naming the missing API
# (and consume once Sluice serves them). Then consume must exit 0 on SIGINT, and bench
# produce/consume must count right against both.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init cli_kafka

# Both brokers run at once; the trap of sluice_lib stops the sluice server, this one the
# reference Kafka too.
export KAFKA_REF_STATE="$work/kafka-ref-state"
stop_both() { "$ref" stop > /dev/null 2>&1 || true; sluice_cleanup; }
trap stop_both EXIT

unset SLUICE_INTEROP_BROKER
sluice_build
kafka_bootstrap="$("$ref" start | tail -n 1)" || fail "bench/kafka-ref start"
step "reference Kafka $("$ref" version) up at $kafka_bootstrap"
sluice_start
sluice_bootstrap="$SLUICE_BOOTSTRAP"

# run_script BOOTSTRAP OUT: the command script; each command's stdout, then its exit status
# and its stderr (the one-line error), go to OUT.
run_script() {
  local b="$1" out="$2"
  : > "$out"
  # cmd INPUT ARGS...: run one command with INPUT on stdin. sorted_cmd sorts its output,
  # for reads across partitions (whose interleaving no broker promises).
  cmd() { run_one cat "$@"; }
  sorted_cmd() { run_one sort "$@"; }
  run_one() {
    local filter="$1" input="$2"; shift 2
    echo "\$ sluice $*" >> "$out"
    local rc=0
    printf '%b' "$input" | timeout 60 "$SLUICE_BIN" "$@" --brokers "$b" > "$work/stdout" 2> "$work/stderr" || rc=$?
    "$filter" "$work/stdout" >> "$out"
    echo "exit $rc" >> "$out"
    cat "$work/stderr" >> "$out"
  }
  cmd '' topic create cli-a --partitions 3 --replication-factor 1 -c retention.ms=123456
  cmd '' topic create cli-b
  cmd '' topic create cli-a
  cmd '' topic describe cli-a
  cmd 'k0:v0\nk1:v1\nk2:v2\nk3:v3\nk4:v4\nk5:v5\nk6:v6\nk7:v7\nk8:v8\nk9:v9\n' produce cli-a -k : -H src=cli -v --compression lz4
  cmd 'x\ny\nz\n' produce cli-a --partition 1 --acks 1 -v
  cmd 'a|b|c' produce cli-b --delimiter '|' -v
  cmd '' topic list
  sorted_cmd '' consume cli-a -e -f '%t %p %o %k=%v [%h]\n'
  cmd '' consume cli-a -p 1 -o -2 -e
  cmd '' consume cli-a -p 1 -o 1 -n 2
  cmd '' consume cli-b -e --json
  cmd '' consume cli-a -p 7 -e
  cmd '' txn list
  cmd '' txn describe cli-no-such-id
  cmd '' txn describe-producers cli-a
  cmd '' txn describe-producers cli-a -p 7
  cmd '' txn find-hanging --topic cli-a --max-transaction-timeout-minutes 0
  cmd '' txn abort --topic cli-a --partition 0 --start-offset 0
  cmd '' topic alter-config cli-a -c cleanup.policy=compact --delete retention.ms
  cmd '' topic describe cli-a
  cmd '' topic alter-config cli-a -c retention.ms=not-a-number
  cmd '' cluster info
  cmd '' cluster config set log.cleaner.delete.retention.ms=86400001
  sleep 1 # dynamic broker configs are applied asynchronously
  cmd '' cluster config get log.cleaner.delete.retention.ms
  cmd '' cluster config set --delete log.cleaner.delete.retention.ms
  cmd '' topic delete cli-a cli-b
  cmd '' topic describe cli-a
  cmd '' consume cli-missing -e
  cmd '' produce cli-a --acks 2
}

# normalise: ids, ports, timestamps and server-specific detail out; broker-level config
# rows of a topic (static or cluster-default sources) depend on each server's setup.
normalise() {
  sed -E \
    -e 's/^(CLUSTER|ID) +.*/\1 <id>/' \
    -e 's/^([0-9]+) +127\.0\.0\.1 +[0-9]+ +/\1 127.0.0.1 <port> /' \
    -e 's/"timestamp":[0-9]+/"timestamp":<ts>/' \
    -e 's/ \(server: [^)]*\)//' \
    -e 's/^([0-9]+ +)[0-9]+( +[0-9]+ +-?[0-9]+ +-?[0-9]+ +)[0-9]{13}( +(None|[0-9]+))$/\1<pid>\2<ts>\3/' \
    -e 's/[ \t]+/ /g' "$1" |
    grep -Ev ' (STATIC_BROKER_CONFIG|DYNAMIC_DEFAULT_BROKER_CONFIG)$' |
    grep -Ev '^(CONFIG VALUE SOURCE|non-default configs: none)$'
}

check "the same command script against Kafka ($kafka_bootstrap) and Sluice ($sluice_bootstrap)"
run_script "$kafka_bootstrap" "$work/kafka.txt"
run_script "$sluice_bootstrap" "$work/sluice.txt"
normalise "$work/kafka.txt" > "$work/kafka.norm"
normalise "$work/sluice.txt" > "$work/sluice.norm"
if ! diff -u "$work/kafka.norm" "$work/sluice.norm" > "$work/diff.txt"; then
  echo "---- transcript against Kafka"; cat "$work/kafka.txt"
  echo "---- differences (- Kafka, + Sluice)"; cat "$work/diff.txt"
  fail "the command line prints differently against Kafka and Sluice"
fi
step "transcripts equal ($(grep -c '^\$ sluice' "$work/kafka.txt") commands)"

# Sanity of the transcript itself, so two equally wrong runs do not pass.
grep -q '^created cli-a: 3 partitions, replication factor 1$' "$work/kafka.txt" || fail "create not reported"
grep -q '^sluice: create cli-a: TOPIC_ALREADY_EXISTS: ' "$work/kafka.txt" || fail "duplicate create: no TOPIC_ALREADY_EXISTS"
[[ "$(grep -c '^cli-a [0-9] [0-9]* k[0-9]=v[0-9] \[src=cli\]$' "$work/kafka.txt")" -eq 10 ]] || fail "consume -f did not print the 10 keyed records"
grep -q '^sluice: describe cli-a: UNKNOWN_TOPIC_OR_PARTITION: ' "$work/kafka.txt" || fail "no UNKNOWN_TOPIC_OR_PARTITION for the deleted topic"
grep -Eq '^[0-9]+ +[0-9]+ +0 +-1 +[0-9]+ +[0-9]{13} +None$' "$work/kafka.txt" || fail "txn describe-producers shows no idempotent producer of cli-a"
grep -q '^sluice: describe transaction cli-no-such-id: TRANSACTIONAL_ID_NOT_FOUND: ' "$work/kafka.txt" || fail "txn describe: no TRANSACTIONAL_ID_NOT_FOUND"

check "consume --group: consumes against Kafka; against Sluice consumes or names the missing API"
for b in "$kafka_bootstrap" "$sluice_bootstrap"; do
  "$SLUICE_BIN" topic create cli-g --partitions 1 --brokers "$b" > /dev/null
  echo one | "$SLUICE_BIN" produce cli-g --brokers "$b"
  rc=0
  got="$(timeout 60 "$SLUICE_BIN" consume cli-g --group cli-group -n 1 --brokers "$b" 2> "$work/group.err")" || rc=$?
  if [[ $rc -eq 0 ]]; then
    [[ "$got" == one ]] || fail "consume --group against $b printed '$got', want 'one'"
  else
    [[ "$b" == "$sluice_bootstrap" ]] || { cat "$work/group.err"; fail "consume --group against Kafka failed"; }
    grep -q 'does not serve consumer groups' "$work/group.err" || { cat "$work/group.err"; fail "consume --group error does not name the missing API"; }
    step "against Sluice: $(cat "$work/group.err")"
  fi
done

check "consume follows until SIGINT, then exits 0 with what it read"
for b in "$kafka_bootstrap" "$sluice_bootstrap"; do
  : > "$work/follow.txt"
  "$SLUICE_BIN" consume cli-g --brokers "$b" > "$work/follow.txt" 2> "$work/follow.err" &
  follower=$!
  waited=0
  until [[ "$(cat "$work/follow.txt" 2>/dev/null)" == one ]]; do
    if ((waited >= 150)); then
      kill -KILL "$follower" 2>/dev/null || true
      cat "$work/follow.err" 2>/dev/null || true
      fail "consume against $b did not print the record within 30 s"
    fi
    sleep 0.2
    waited=$((waited + 1))
  done
  kill -0 "$follower" 2>/dev/null || fail "consume against $b exited instead of following"
  kill -INT "$follower"
  rc=0
  wait "$follower" || rc=$?
  [[ $rc -eq 0 ]] || { cat "$work/follow.err" || true; fail "consume against $b exited $rc after SIGINT, want 0"; }
done
step "consume stopped by SIGINT with status 0 against both"

check "bench produce and consume --json against both; no progress line when stderr is not a terminal"
for b in "$kafka_bootstrap" "$sluice_bootstrap"; do
  "$SLUICE_BIN" bench produce cli-bench --count 2000 --record-size 100 --json --brokers "$b" > "$work/bench.json" 2> "$work/bench.err" \
    || { cat "$work/bench.err"; fail "bench produce against $b"; }
  grep -q '"records":2000,' "$work/bench.json" || { cat "$work/bench.json"; fail "bench produce against $b: not 2000 records"; }
  [[ ! -s "$work/bench.err" ]] || { cat "$work/bench.err"; fail "bench produce wrote to a stderr that is not a terminal"; }
  step "bench produce against $b: $(cat "$work/bench.json")"
  "$SLUICE_BIN" bench consume cli-bench --json --brokers "$b" > "$work/bench.json" || fail "bench consume against $b"
  grep -q '"records":2000,' "$work/bench.json" || { cat "$work/bench.json"; fail "bench consume against $b: not 2000 records"; }
done
step "PASS"
