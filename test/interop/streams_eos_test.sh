#!/usr/bin/env bash
# Kafka Streams WordCount (test/interop/streams, kafka-streams at the pinned release) with
# processing.guarantee=exactly_once_v2 against a real `sluice server`
# (SLUICE_INTEROP_BROKER=kafka-ref: against the reference Kafka) (issue 15):
#   - 3,000 lines into a 3-partition input topic; the app (a repartition topic, a RocksDB
#     count store with its changelog, all created by Streams) starts; a read_committed
#     reader of the output finds every word's exact count, the counts of each word rising
#     strictly (streams_wordcount.py check);
#   - STREAMS_KILLS times (default 2; `make interop-heavy` runs 10): 2,000 more lines
#     arrive at 1,000 a second and halfway through them the app is kill -9ed mid-stream,
#     then restarted on the same state directory; after a last 2,000 lines the committed
#     counts are still exact: nothing lost, nothing counted twice, nothing of an aborted
#     transaction visible;
#   - the app stops cleanly on SIGTERM.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init streams_eos
kills="${STREAMS_KILLS:-2}"
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

python3 -c 'import confluent_kafka' 2>/dev/null || fail "confluent-kafka not importable by python3 (setup.sh installs it)"
"$here/streams/run" build || fail "building the Streams WordCount"
sluice_build
sluice_start
b="$SLUICE_BOOTSTRAP"
for topic in wc-input wc-output; do
  "$ref" tool topics --bootstrap-server "$b" --create --topic "$topic" --partitions 3 --replication-factor 1 \
    > "$work/create.txt" 2>&1 || { cat "$work/create.txt"; fail "topics --create $topic"; }
done
wordcount() { timeout 120 python3 "$here/streams_wordcount.py" "$b" "$@"; }

# start_app N: the WordCount in the background (output in $work/app-N.txt), waits until it
# is RUNNING (60 s). The java process is exec'd by streams/run, so $! is the JVM.
start_app() {
  local n="$1" deadline=$((SECONDS + 60))
  "$here/streams/run" "$b" wordcount-eos wc-input wc-output "$work/state" > "$work/app-$n.txt" 2>&1 &
  app_pid=$!
  until grep -qx RUNNING "$work/app-$n.txt"; do
    kill -0 "$app_pid" 2>/dev/null || { tail -n 30 "$work/app-$n.txt"; fail "WordCount run $n exited before RUNNING"; }
    ((SECONDS < deadline)) || { tail -n 30 "$work/app-$n.txt"; fail "WordCount run $n not RUNNING within 60 s"; }
    sleep 0.2
  done
  step "WordCount run $n (pid $app_pid) RUNNING"
}

check "$first_lines lines; the exactly-once WordCount's committed counts are exact"
wordcount produce wc-input 0 "$first_lines" > /dev/null || fail "producing the first lines"
start_app 1
wordcount check wc-output "$first_lines" 60 || { tail -n 30 "$work/app-1.txt"; fail "counts after the first $first_lines lines"; }

check "$kills times: 2,000 more lines at 1,000/s, the app kill -9ed halfway through them and restarted"
next_line=$first_lines
# produce_chunk: 2,000 lines from next_line at 1,000 a second, in the background.
produce_chunk() {
  timeout 120 python3 "$here/streams_wordcount.py" "$b" produce wc-input "$next_line" "$chunk" 1000 \
    > "$work/producer.txt" 2>&1 &
  producer_pid=$!
  next_line=$((next_line + chunk))
}
finish_chunk() {
  wait "$producer_pid" || { cat "$work/producer.txt"; fail "the input producer"; }
  producer_pid=""
}
for ((k = 1; k <= kills; k++)); do
  produce_chunk
  # Mid-stream: the running app has had half the chunk flowing through it, the rest still
  # to come.
  deadline=$((SECONDS + 60))
  until grep -qx "wordcount: produced $((chunk / 2))" "$work/producer.txt"; do
    kill -0 "$producer_pid" 2>/dev/null || { cat "$work/producer.txt"; fail "the input producer ended before kill $k"; }
    ((SECONDS < deadline)) || fail "input stalled before kill $k: $(tail -n 1 "$work/producer.txt")"
    sleep 0.1
  done
  kill -0 "$app_pid" 2>/dev/null || { tail -n 30 "$work/app-$k.txt"; fail "WordCount run $k died before its kill"; }
  kill -9 "$app_pid"
  wait "$app_pid" 2>/dev/null || true
  step "kill -9 WordCount run $k halfway through lines $((next_line - chunk))..$((next_line - 1))"
  start_app $((k + 1))
  finish_chunk
done
produce_chunk
finish_chunk
total=$next_line
wordcount check wc-output "$total" 90 || { tail -n 30 "$work/app-$((kills + 1)).txt"; fail "counts after $kills kills"; }

check "SIGTERM: the app closes cleanly"
kill -TERM "$app_pid"
timeout 40 tail --pid="$app_pid" -f /dev/null || fail "WordCount did not stop within 40 s of SIGTERM"
app_pid=""
grep -qx "closed true in state NOT_RUNNING" "$work/app-$((kills + 1)).txt" \
  || { tail -n 30 "$work/app-$((kills + 1)).txt"; fail "WordCount did not close to NOT_RUNNING"; }

sluice_stop
step "PASS in $((SECONDS - t0))s"
