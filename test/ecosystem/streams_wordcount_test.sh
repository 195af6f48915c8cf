#!/usr/bin/env bash
# Kafka Streams WordCount (test/ecosystem/streams, kafka-streams at KAFKA_VERSION) on a
# 3-node cluster (Sluice's, or the pinned Kafka's with SLUICE_INTEROP_BROKER=kafka-ref),
# once with processing.guarantee=at_least_once and once with exactly_once_v2. Input and
# output topics have 3 partitions, replication factor 3 and min.insync.replicas 2; Streams
# creates its repartition and changelog topics with replication.factor=3 (checked).
#   - 3,000 lines, the app starts, the counts are reached;
#   - 2,000 more lines at 1,000/s, the app kill -9ed halfway through them and restarted
#     on the same state directory;
#   - 2,000 more lines at 1,000/s, halfway through them kill -9 of the node leading
#     partition 0 of the app's changelog (it leads some partitions by definition), 4 s
#     dead (the controller fences it and moves its leaderships), restarted, ISR whole;
#   - the final counts, read from the output:
#     exactly_once_v2 (read_committed): every word's committed counts rise strictly and
#       end exact: nothing lost, nothing counted twice, nothing aborted visible;
#     at_least_once: no word short of its true count (a lost record fails), no word the
#       input lacks, and the words counted twice at most the words of the two chunks
#       with a failure (a replay redoes uncommitted work of about a second, commit
#       interval 1 s; a count running away fails).
set -euo pipefail
here_eco="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here_eco/../interop/sluice_lib.sh"
source "$here_eco/streams/cluster.sh"
sluice_init streams_wordcount
first_lines=3000
chunk=2000

app_pid=""
producer_pid=""
stop_all() {
  [[ -n "$producer_pid" ]] && kill "$producer_pid" 2>/dev/null
  [[ -n "$app_pid" ]] && kill -9 "$app_pid" 2>/dev/null
  sluice_cleanup
}
trap stop_all EXIT

python3 -c 'import confluent_kafka' 2>/dev/null || fail "confluent-kafka not importable by python3 (test/interop/setup.sh installs it)"
"$here_eco/streams/run" build || fail "building the Streams apps"
sluice_build
cluster3_start
b="$CLUSTER_BOOTSTRAP"
io() { timeout 180 python3 "$here_eco/streams/streams_io.py" "$b" "$@"; }

# start_app G N: the WordCount with guarantee G in the background (output in
# $work/app-G-N.txt); waits until RUNNING (90 s). streams/run execs java, so $! is the JVM.
start_app() {
  local g="$1" n="$2" deadline=$((SECONDS + 90)) extra=()
  [[ "$g" == at_least_once ]] && extra=(commit.interval.ms=1000)
  "$here_eco/streams/run" wordcount "$b" "wc-$g" "$work/state-$g" \
    processing.guarantee="$g" replication.factor=3 topic.min.insync.replicas=2 \
    app.input="in-$g" app.output="out-$g" "${extra[@]}" > "$work/app-$g-$n.txt" 2>&1 &
  app_pid=$!
  until grep -qx RUNNING "$work/app-$g-$n.txt"; do
    kill -0 "$app_pid" 2>/dev/null || { tail -n 30 "$work/app-$g-$n.txt"; fail "$g: WordCount run $n exited before RUNNING"; }
    ((SECONDS < deadline)) || { tail -n 30 "$work/app-$g-$n.txt"; fail "$g: WordCount run $n not RUNNING within 90 s"; }
    sleep 0.2
  done
  step "$g: WordCount run $n (pid $app_pid) RUNNING"
}

# produce_chunk G: $chunk lines from next_line at 1,000 a second in the background;
# wait_half: until half of them are acknowledged.
produce_chunk() {
  io lines "in-$1" "$next_line" "$chunk" 1000 > "$work/producer.txt" 2>&1 &
  producer_pid=$!
  next_line=$((next_line + chunk))
}
wait_half() {
  local deadline=$((SECONDS + 60))
  until grep -qx "streams_io: produced $((chunk / 2))" "$work/producer.txt"; do
    kill -0 "$producer_pid" 2>/dev/null || { cat "$work/producer.txt"; fail "the input producer ended early"; }
    ((SECONDS < deadline)) || fail "input stalled: $(tail -n 1 "$work/producer.txt")"
    sleep 0.1
  done
}
finish_chunk() {
  wait "$producer_pid" || { cat "$work/producer.txt"; fail "the input producer"; }
  producer_pid=""
}

run_guarantee() {
  local g="$1" mode=eos topic
  [[ "$g" == at_least_once ]] && mode=alos
  for topic in "in-$g" "out-$g"; do
    "$ref" tool topics --bootstrap-server "$b" --create --topic "$topic" --partitions 3 \
      --replication-factor 3 --config min.insync.replicas=2 > "$work/create.txt" 2>&1 \
      || { cat "$work/create.txt"; fail "topics --create $topic"; }
  done
  check "$g: $first_lines lines; the counts are reached"
  io lines "in-$g" 0 "$first_lines" > /dev/null || fail "producing the first lines"
  start_app "$g" 1
  io wordcount "out-$g" "$first_lines" "$mode" 90 || { tail -n 30 "$work/app-$g-1.txt"; fail "$g: counts after the first lines"; }

  check "$g: Streams' internal topics have replication factor 3"
  for topic in "wc-$g-counts-changelog" "wc-$g-counts-repartition"; do
    "$ref" tool topics --bootstrap-server "$b" --describe --topic "$topic" > "$work/describe.txt" 2>&1 \
      || { cat "$work/describe.txt"; fail "topics --describe $topic"; }
    grep -q "ReplicationFactor: 3" "$work/describe.txt" || { cat "$work/describe.txt"; fail "$topic: not replication factor 3"; }
    [[ "$(grep -c 'Isr: [0-9],[0-9],[0-9]' "$work/describe.txt")" == 3 ]] \
      || { cat "$work/describe.txt"; fail "$topic: 3 partitions with 3 in-sync replicas expected"; }
  done

  next_line=$first_lines
  check "$g: kill -9 of the app halfway through 2,000 lines at 1,000/s; restart on the same state dir"
  produce_chunk "$g"
  wait_half
  kill -0 "$app_pid" 2>/dev/null || { tail -n 30 "$work/app-$g-1.txt"; fail "$g: WordCount died before its kill"; }
  kill -9 "$app_pid"
  wait "$app_pid" 2>/dev/null || true
  step "$g: kill -9 WordCount run 1 mid-stream"
  start_app "$g" 2
  finish_chunk

  check "$g: kill -9 of a broker halfway through 2,000 lines at 1,000/s; restart it"
  produce_chunk "$g"
  wait_half
  local victim
  victim="$(cluster3_leader "wc-$g-counts-changelog" 0)"
  [[ "$victim" =~ ^[123]$ ]] || fail "no leader for wc-$g-counts-changelog 0: $(cluster3_partitions "wc-$g-counts-changelog")"
  cluster3_kill "$victim"
  step "$g: kill -9 node $victim (leader of wc-$g-counts-changelog 0) mid-stream"
  sleep 4
  cluster3_restart "$victim"
  for topic in "in-$g" "out-$g" "wc-$g-counts-changelog" "wc-$g-counts-repartition"; do cluster3_wait_isr "$topic"; done
  step "$g: node $victim restarted, ISR whole; changelog 0 led by $(cluster3_leader "wc-$g-counts-changelog" 0)"
  finish_chunk
  kill -0 "$app_pid" 2>/dev/null || { tail -n 30 "$work/app-$g-2.txt"; fail "$g: WordCount died during the broker's failure"; }

  check "$g: final counts after both failures ($next_line lines)"
  io wordcount "out-$g" "$next_line" "$mode" 120 $((2 * chunk * 4)) \
    || { tail -n 30 "$work/app-$g-2.txt"; fail "$g: final counts"; }
  ! grep -q "^uncaught" "$work/app-$g-2.txt" || { tail -n 30 "$work/app-$g-2.txt"; fail "$g: an exception reached a stream thread"; }
  kill -TERM "$app_pid"
  timeout 40 tail --pid="$app_pid" -f /dev/null || fail "$g: WordCount did not stop within 40 s of SIGTERM"
  app_pid=""
  grep -qx "closed true in state NOT_RUNNING" "$work/app-$g-2.txt" \
    || { tail -n 30 "$work/app-$g-2.txt"; fail "$g: WordCount did not close to NOT_RUNNING"; }
}

run_guarantee at_least_once
run_guarantee exactly_once_v2
step "PASS in $((SECONDS - t0))s"
