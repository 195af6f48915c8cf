#!/usr/bin/env bash
# A dynamic controller quorum (KIP-853) grown and shrunk with Kafka's own tools against
# Sluice processes: controller 1 formatted with `sluice storage format --standalone`,
# controllers 2 and 3 with --no-initial-controllers, all with
# controller.quorum.bootstrap.servers. kafka-metadata-quorum --bootstrap-controller
# add-controller (run with each new controller's properties as --command-config) makes
# them voters; describe --status/--replication show the voters with their directory ids;
# add-controller again is DUPLICATE_VOTER, remove-controller with a wrong directory id is
# VOTER_NOT_FOUND; a voter restarted on another port records it with UpdateRaftVoter;
# remove-controller of the active controller moves the leadership;
# the quorum is shrunk back to one voter, which keeps committing (a topic is created
# through it after each step, with kafka-topics --bootstrap-controller... no: through
# kafka-metadata-quorum's describe, which the active controller answers).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init quorum_dynamic_tool
against_kafka_ref && { echo "quorum_dynamic_tool: runs Sluice controllers only; skipped with SLUICE_INTEROP_BROKER=kafka-ref"; exit 0; }
sluice_build

read -r -a ports <<<"$(free_ports 3)"
cluster_id="$("$SLUICE_BIN" storage random-uuid)"
declare -A pid
props() {
  local i="$1"
  cat <<PROPS
node.id=$i
process.roles=controller
controller.listener.names=CONTROLLER
listeners=CONTROLLER://127.0.0.1:${ports[$((i - 1))]}
listener.security.protocol.map=CONTROLLER:PLAINTEXT
controller.quorum.bootstrap.servers=127.0.0.1:${ports[0]}
log.dirs=$work/node-$i
PROPS
}
for i in 1 2 3; do props "$i" > "$work/node-$i.properties"; done
"$SLUICE_BIN" storage format --cluster-id "$cluster_id" --config "$work/node-1.properties" --standalone > "$work/format-1.out"
for i in 2 3; do
  "$SLUICE_BIN" storage format --cluster-id "$cluster_id" --config "$work/node-$i.properties" --no-initial-controllers > "$work/format-$i.out"
done
if out="$("$SLUICE_BIN" storage format --cluster-id "$cluster_id" --config "$work/node-1.properties" --override log.dirs="$work/x" 2>&1)"; then
  fail "format of a dynamic controller without --standalone/--initial-controllers/--no-initial-controllers succeeded"
fi
grep -q "Because controller.quorum.voters is not set on this controller, you must specify one of the following: --standalone, --initial-controllers, or --no-initial-controllers." <<<"$out" ||
  { echo "$out"; fail "format without a quorum flag: not Kafka's message"; }
grep -q '"kraft_version": 1' "$work/node-1/__cluster_metadata-0/bootstrap-voters.json" || fail "no bootstrap voters written by --standalone"
check "storage format --standalone writes the bootstrap voters; no flag is refused with Kafka's message"
dir_of() { awk -F= '$1 == "directory.id" { print $2 }' "$work/node-$1/meta.properties"; }

start_node() {
  local i="$1"
  "$SLUICE_BIN" server --config "$work/node-$i.properties" > "$work/node-$i.log" 2>&1 < /dev/null &
  pid[$i]=$!
  sluice_pids+=("${pid[$i]}")
}
for i in 1 2 3; do start_node "$i"; done
deadline=$((SECONDS + 60))
until grep -qs 'msg="node started"' "$work/node-1.log"; do
  ((SECONDS < deadline)) || { SLUICE_LOG="$work/node-1.log"; fail "controller 1 did not start"; }
  sleep 0.2
done
step "controller 1 (standalone voter) up; controllers 2 and 3 wait to be added"

printf 'default.api.timeout.ms=20000\nrequest.timeout.ms=15000\n' > "$work/tool.properties"
quorum_tool() { timeout 120 "$ref" tool metadata-quorum --bootstrap-controller "$1" "${@:2}" 2>&1; }
describe() { quorum_tool "$1" --command-config "$work/tool.properties" describe "${@:2}"; }
# The tool reads node.id, the controller listeners and the metadata dir's directory.id from
# the new controller's properties.
add() {
  local with="$1" i="$2"
  cat "$work/node-$i.properties" "$work/tool.properties" > "$work/add-$i.properties"
  quorum_tool "$with" --command-config "$work/add-$i.properties" add-controller
}
remove() { quorum_tool "$1" --command-config "$work/tool.properties" remove-controller --controller-id "$2" --controller-directory-id "$3"; }
voters_are() { # $1 bootstrap, $2.. ids: describe --status lists exactly these voters with their directory ids
  local status want
  status="$(describe "$1" --status)" || { echo "$status"; return 1; }
  for i in "${@:2}"; do
    grep -q "\"id\": $i, \"directoryId\": \"$(dir_of "$i")\"" <<<"$status" || { echo "$status"; return 1; }
  done
  want=$(($# - 1))
  [[ "$(grep -o '"directoryId"' <<<"$(grep '^CurrentVoters:' <<<"$status")" | wc -l)" -eq "$want" ]] || { echo "$status"; return 1; }
}
leader_of() { describe "$1" --status | awk '/^LeaderId:/ { print $2 }'; }

status="$(describe "127.0.0.1:${ports[0]}" --status)" || { echo "$status"; fail "describe --status"; }
echo "$status"
voters_are "127.0.0.1:${ports[0]}" 1 || fail "the standalone quorum is not voter 1 with its directory id"
check "describe --status: voter 1 with its directory id $(dir_of 1)"
features="$(timeout 60 "$ref" tool features --bootstrap-controller "127.0.0.1:${ports[0]}" describe 2>&1)" || { echo "$features"; fail "kafka-features describe"; }
grep -Eq 'Feature: kraft.version.*FinalizedVersionLevel: 1' <<<"$features" || { echo "$features"; fail "kraft.version is not finalized at 1 on a dynamic quorum"; }
check "kafka-features describe: kraft.version finalized at 1 on the dynamic quorum"

for i in 2 3; do
  out="$(add "127.0.0.1:${ports[0]}" "$i")" || { echo "$out"; tail -n 30 "$work/node-$i.log"; fail "add-controller $i"; }
  echo "$out"
  grep -q "Added controller $i" <<<"$out" || { echo "$out"; fail "add-controller $i: no 'Added controller'"; }
done
voters_are "127.0.0.1:${ports[0]}" 1 2 3 || fail "after add-controller 2 and 3 the voters are not 1, 2, 3"
deadline=$((SECONDS + 30))
until grep -qs 'msg="node started"' "$work/node-2.log" && grep -qs 'msg="node started"' "$work/node-3.log"; do
  ((SECONDS < deadline)) || fail "controllers 2 and 3 did not finish starting once added"
  sleep 0.2
done
replication="$(describe "127.0.0.1:${ports[1]}" --replication)" || { echo "$replication"; fail "describe --replication through controller 2"; }
echo "$replication"
[[ "$(awk '$1 ~ /^[123]$/ && $5 ~ /^[0-9]+$/' <<<"$replication" | grep -c -E 'Leader|Follower')" -eq 3 ]] ||
  fail "describe --replication does not show 3 voters"
check "add-controller 2 and 3: voters 1, 2, 3 with their directory ids, both added controllers started"

# Controller 3 restarts on another port: it sends UpdateRaftVoter and the voter set records
# its new listener.
kill "${pid[3]}"
wait "${pid[3]}" 2> /dev/null || true
read -r -a more <<<"$(free_ports 1)"
ports[2]="${more[0]}"
sed -i "s|^listeners=.*|listeners=CONTROLLER://127.0.0.1:${ports[2]}|" "$work/node-3.properties"
start_node 3
deadline=$((SECONDS + 30))
until describe "127.0.0.1:${ports[0]}" --status | grep -q "\"id\": 3, \"directoryId\": \"$(dir_of 3)\", \"endpoints\": \[\"CONTROLLER://127.0.0.1:${ports[2]}\"\]"; do
  ((SECONDS < deadline)) || { describe "127.0.0.1:${ports[0]}" --status; tail -n 20 "$work/node-3.log"; fail "controller 3's new listener was not recorded"; }
  sleep 1
done
! grep -q "asked the leader to record this voter's listeners" "$work/node-1.log" "$work/node-2.log" ||
  fail "a voter whose listeners did not change sent UpdateRaftVoter"
check "controller 3 restarted on port ${ports[2]}: UpdateRaftVoter recorded its new listener (the others sent none)"

out="$(add "127.0.0.1:${ports[0]}" 2)" && fail "adding controller 2 twice succeeded"
grep -q "DuplicateVoterException" <<<"$out" || { echo "$out"; fail "adding controller 2 twice: not DUPLICATE_VOTER"; }
out="$(remove "127.0.0.1:${ports[0]}" 3 "$(dir_of 1)")" && fail "remove-controller with another directory id succeeded"
grep -q "VoterNotFoundException" <<<"$out" || { echo "$out"; fail "remove-controller with another directory id: not VOTER_NOT_FOUND"; }
check "add-controller of a voter: DUPLICATE_VOTER; remove-controller of a wrong directory id: VOTER_NOT_FOUND"

leader="$(leader_of "127.0.0.1:${ports[1]}")"
out="$(remove "127.0.0.1:${ports[1]}" "$leader" "$(dir_of "$leader")")" || { echo "$out"; fail "remove-controller of the leader $leader"; }
echo "$out"
rest=()
for i in 1 2 3; do [[ $i -ne $leader ]] && rest+=("$i"); done
deadline=$((SECONDS + 30))
until voters_are "127.0.0.1:${ports[$((rest[0] - 1))]}" "${rest[@]}" > /dev/null; do
  ((SECONDS < deadline)) || { voters_are "127.0.0.1:${ports[$((rest[0] - 1))]}" "${rest[@]}"; fail "after removing leader $leader the voters are not ${rest[*]}"; }
  sleep 1
done
new="$(leader_of "127.0.0.1:${ports[$((rest[0] - 1))]}")"
[[ " ${rest[*]} " == *" $new "* ]] || fail "leader $new after removing $leader"
check "remove-controller of the active controller $leader: voters ${rest[*]}, new leader $new"

out="$(remove "127.0.0.1:${ports[$((rest[0] - 1))]}" "${rest[1]}" "$(dir_of "${rest[1]}")")" || { echo "$out"; fail "remove-controller ${rest[1]}"; }
deadline=$((SECONDS + 30))
until voters_are "127.0.0.1:${ports[$((rest[0] - 1))]}" "${rest[0]}" > /dev/null; do
  ((SECONDS < deadline)) || fail "the quorum did not shrink to ${rest[0]}"
  sleep 1
done
out="$(remove "127.0.0.1:${ports[$((rest[0] - 1))]}" "${rest[0]}" "$(dir_of "${rest[0]}")")" && fail "removing the last voter succeeded"
grep -q "VoterNotFoundException" <<<"$out" || { echo "$out"; fail "removing the last voter: not VOTER_NOT_FOUND"; }
check "shrunk to one voter (${rest[0]}); removing the last voter is VOTER_NOT_FOUND"
step "PASS in $((SECONDS - t0))s"
