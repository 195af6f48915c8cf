#!/usr/bin/env bash
# A stream-table join in Kafka Streams (test/ecosystem/streams, mode join) against one
# Sluice node (SLUICE_INTEROP_BROKER=kafka-ref: the pinned Kafka): orders (a stream keyed
# by customer) left-joined with the customers table, read from a compacted topic created
# here with cleanup.policy=compact and materialized in a RocksDB store, customers-store,
# which the app serves as interactive queries over HTTP:
#   - 4 customers; the store's all-keys range and one key answer them; the topic and
#     Streams' own changelog of the store have cleanup.policy=compact (describing their
#     configs);
#   - 4 orders, one of a customer the table lacks: joined with the tiers ("none");
#   - an update of one customer and a tombstone of another: the store answers the update
#     and 404 for the deleted key; 3 more orders join with the new tier and, for the
#     deleted customer, "none";
#   - the output holds exactly the 7 join results.
set -euo pipefail
here_eco="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here_eco/../interop/sluice_lib.sh"
sluice_init streams_join
source "$here_eco/streams/lib.sh"
trap '[[ -n "$app_pid" ]] && kill -9 "$app_pid" 2>/dev/null; sluice_cleanup' EXIT

python3 -c 'import confluent_kafka' 2>/dev/null || fail "confluent-kafka not importable by python3 (test/interop/setup.sh installs it)"
"$eco_streams/run" build || fail "building the Streams apps"
sluice_build
sluice_start
b="$SLUICE_BOOTSTRAP"
io() { timeout 120 python3 "$eco_streams/streams_io.py" "$b" "$@"; }
create() {
  "$ref" tool topics --bootstrap-server "$b" --create --topic "$1" --partitions 3 --replication-factor 1 "${@:2}" \
    > "$work/create.txt" 2>&1 || { cat "$work/create.txt"; fail "topics --create $1"; }
}
create customers --config cleanup.policy=compact
create orders
create enriched
read -r iq_port <<<"$(free_ports 1)"
# cleanup_policy TOPIC: the topic's cleanup.policy as Kafka's configs tool describes it.
cleanup_policy() {
  "$ref" tool configs --bootstrap-server "$b" --describe --entity-type topics --entity-name "$1" \
    > "$work/configs.txt" 2>&1 || { cat "$work/configs.txt"; fail "configs --describe $1"; }
  sed -n 's/^ *cleanup.policy=\([a-z,]*\) .*/\1/p' "$work/configs.txt" | head -n 1
}

check "4 customers in the compacted topic; the store's all-keys range and one key"
io kv customers c1=gold c2=silver c3=bronze c4=gold || fail "producing customers"
streams_app app join join-app "$work/state" app.input=orders app.table=customers app.output=enriched app.iq.port="$iq_port"
printf '%s\n' "c1 gold" "c2 silver" "c3 bronze" "c4 gold" > "$work/want.txt"
iq_until "kv?store=customers-store" "$work/want.txt" 60
[[ "$(iq "kv?store=customers-store&key=c2")" == "c2 silver" ]] || fail "c2: $(iq "kv?store=customers-store&key=c2")"

check "cleanup.policy=compact on the table's topic and on Streams' changelog of its store"
[[ "$(cleanup_policy customers)" == compact ]] || { cat "$work/configs.txt"; fail "customers: not compact"; }
[[ "$(cleanup_policy join-app-customers-store-changelog)" == compact ]] \
  || { cat "$work/configs.txt"; fail "join-app-customers-store-changelog: not compact"; }

check "4 orders join with the tiers; a customer the table lacks joins with none"
io kv orders c1=o1 c2=o2 c3=o3 c5=o4 || fail "producing orders"
printf '%s\n' "c1 o1:gold" "c2 o2:silver" "c3 o3:bronze" "c5 o4:none" > "$work/want-out.txt"
io read enriched 4 60 | sort > "$work/out.txt" || { cat "$work/out.txt"; tail -n 20 "$app_out"; fail "reading 4 join results"; }
sort "$work/want-out.txt" | diff - "$work/out.txt" || fail "join results of the first orders"

check "an update (c2 platinum) and a tombstone (c3) change the table and the joins"
io kv customers c2=platinum c3 || fail "producing the update and the tombstone"
printf '%s\n' "c1 gold" "c2 platinum" "c4 gold" > "$work/want.txt"
iq_until "kv?store=customers-store" "$work/want.txt" 60
[[ "$(iq "kv?store=customers-store&key=c3" || true)" == 404 ]] || fail "c3 still in the store after its tombstone"
io kv orders c2=o5 c3=o6 c1=o7 || fail "producing more orders"
printf '%s\n' "c2 o5:platinum" "c3 o6:none" "c1 o7:gold" >> "$work/want-out.txt"
io read enriched 7 60 | sort > "$work/out.txt" || { cat "$work/out.txt"; tail -n 20 "$app_out"; fail "reading 7 join results"; }
sort "$work/want-out.txt" | diff - "$work/out.txt" || fail "join results after the update and the tombstone"
streams_app_term
sluice_stop
step "PASS in $((SECONDS - t0))s"
