#!/usr/bin/env bash
# A windowed aggregation in Kafka Streams (test/ecosystem/streams, mode windowed) against
# one Sluice node (SLUICE_INTEROP_BROKER=kafka-ref: the pinned Kafka): records of 5 keys
# with event timestamps set by the producer, out of order, across 6 tumbling windows of
# 10 s, counted per key and window in a persistent RocksDB window store, queried over
# the app's interactive-query HTTP endpoint:
#   - 3,000 events: the all-keys range of the store and one key's windows equal the
#     counts computed from the input; Streams' changelog of the store has
#     cleanup.policy=compact,delete (describing its configs);
#   - the app stops (SIGTERM), its state directory is wiped, it starts again: the restore
#     listener reports records restored from the changelog (> 0) and the store answers
#     exactly what it did before;
#   - 500 more events in the same windows: the counts continue from the restored ones.
set -euo pipefail
here_eco="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here_eco/../interop/sluice_lib.sh"
sluice_init streams_windowed
source "$here_eco/streams/lib.sh"
trap '[[ -n "$app_pid" ]] && kill -9 "$app_pid" 2>/dev/null; sluice_cleanup' EXIT

python3 -c 'import confluent_kafka' 2>/dev/null || fail "confluent-kafka not importable by python3 (test/interop/setup.sh installs it)"
"$eco_streams/run" build || fail "building the Streams apps"
sluice_build
sluice_start
b="$SLUICE_BOOTSTRAP"
io() { timeout 180 python3 "$eco_streams/streams_io.py" "$b" "$@"; }
for topic in win-in win-out; do
  "$ref" tool topics --bootstrap-server "$b" --create --topic "$topic" --partitions 3 --replication-factor 1 \
    > "$work/create.txt" 2>&1 || { cat "$work/create.txt"; fail "topics --create $topic"; }
done
read -r iq_port <<<"$(free_ports 1)"
# Event time 5 minutes ago, on a window boundary: near the brokers' clock, so no retention
# deletes the changelog's records by their timestamps.
base=$(( ($(date +%s) - 300) / 60 * 60000 ))
app_args=("$work/state" app.input=win-in app.output=win-out app.window.ms=10000 app.iq.port="$iq_port")

check "3,000 events in 6 windows of 5 keys; the store's all-keys range and one key's windows"
io events win-in "$base" 0 3000 > "$work/want.txt" || fail "producing the events"
[[ "$(wc -l < "$work/want.txt")" == 30 ]] || { cat "$work/want.txt"; fail "want 5 keys x 6 windows"; }
streams_app app-1 windowed win-app "${app_args[@]}"
iq_until "window?store=window-counts" "$work/want.txt" 60
grep '^s2 ' "$work/want.txt" > "$work/want-s2.txt"
iq_until "window?store=window-counts&key=s2" "$work/want-s2.txt" 5
iq "window?store=window-counts" | sort > "$work/before.txt"
step "the store holds $(wc -l < "$work/before.txt") windows, e.g. $(head -n 1 "$work/before.txt")"

check "Streams created the store's changelog with cleanup.policy=compact,delete"
changelog=win-app-window-counts-changelog
"$ref" tool configs --bootstrap-server "$b" --describe --entity-type topics --entity-name "$changelog" \
  > "$work/configs.txt" 2>&1 || { cat "$work/configs.txt"; fail "configs --describe $changelog"; }
grep -Eq '^ *cleanup.policy=compact,delete ' "$work/configs.txt" || { cat "$work/configs.txt"; fail "$changelog: not cleanup.policy=compact,delete"; }

check "wipe the state directory; the restarted app restores the store from its changelog"
streams_app_term
# The first run started from nothing: whatever it restored, it restored no record.
! grep -q '^restored-total [1-9]' "$work/app-1.txt" || { cat "$work/app-1.txt"; fail "the first run restored records"; }
rm -rf "$work/state"
streams_app app-2 windowed win-app "${app_args[@]}"
restored="$(grep '^restored-total' "$work/app-2.txt" | tail -n 1 | awk '{ print $2 }')"
[[ "${restored:-0}" -gt 0 ]] || { cat "$work/app-2.txt"; fail "the restore listener reported no records restored"; }
grep '^restored window-counts' "$work/app-2.txt" | sed 's/^/  /'
iq_until "window?store=window-counts" "$work/before.txt" 30
step "the restored store equals the store before the wipe ($restored records restored)"

check "500 more events in the same windows: counts continue from the restored store"
io events win-in "$base" 3000 500 > "$work/want-2.txt" || fail "producing more events"
iq_until "window?store=window-counts" "$work/want-2.txt" 60
streams_app_term
sluice_stop
step "PASS in $((SECONDS - t0))s"
