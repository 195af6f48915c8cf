#!/usr/bin/env bash
# Kafka's kafka-acls tool (bench/kafka-ref tool acls) against a `sluice server` and the
# reference Kafka, both with Kafka's StandardAuthorizer and the PLAINTEXT listener's
# User:ANONYMOUS a super user, started together: the same fixed sequence of commands (add
# with --allow/--deny principals and hosts, operations, literal and prefixed patterns, the
# '*' topic, the --producer/--consumer/--idempotent conveniences, transactional ids and the
# cluster; list all, by resource, by principal and with a MATCH filter; remove with --force;
# the tool's refusals) runs against each, and Sluice's transcript must equal Kafka's (the
# order of resources and of the entries within one is the tool's HashMap order, so both are
# sorted before comparing). ACLS_KEEP=DIR keeps both transcripts there.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init acls_kafka_tool

export KAFKA_REF_STATE="$work/kafka-ref-state"
stop_both() { "$ref" stop > /dev/null 2>&1 || true; sluice_cleanup; }
trap stop_both EXIT
unset SLUICE_INTEROP_BROKER

security=(
  "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer"
  "super.users=User:ANONYMOUS"
)
printf '%s\n' "${security[@]}" > "$work/kafka.properties"
"$ref" start --config "$work/kafka.properties" > "$work/kafka-start.out" 2> "$work/kafka-start.err" &
kafka_starter=$!

sluice_build
read -r -a ports <<<"$(free_ports 2)"
sluice_addr="127.0.0.1:${ports[0]}"
SLUICE_LOG="$work/sluice.log"
extra=()
for o in "${security[@]}"; do extra+=(--override "$o"); done
"$SLUICE_BIN" server "${extra[@]}" \
  --override "listeners=PLAINTEXT://$sluice_addr,CONTROLLER://127.0.0.1:${ports[1]}" \
  --override "controller.quorum.voters=1@127.0.0.1:${ports[1]}" \
  --override "log.dirs=$work/data" \
  > "$SLUICE_LOG" 2>&1 < /dev/null &
SLUICE_PID=$!
sluice_pids+=("$SLUICE_PID")
deadline=$((SECONDS + 30))
until api_versions_ok "$sluice_addr"; do
  kill -0 "$SLUICE_PID" 2>/dev/null || { tail -n 30 "$SLUICE_LOG"; fail "sluice server exited during start-up"; }
  ((SECONDS < deadline)) || fail "sluice server did not answer ApiVersions within 30s"
  sleep 0.2
done
wait "$kafka_starter" || { cat "$work/kafka-start.err"; fail "bench/kafka-ref start"; }
kafka_addr="$(tail -n 1 "$work/kafka-start.out")"
step "reference Kafka at $kafka_addr, sluice at $sluice_addr"

# The commands, one per line (arguments split on spaces; no argument holds one).
commands=(
  "--add --allow-principal User:alice --operation Read --operation Write --topic orders"
  "--add --allow-principal User:alice --allow-host 10.0.0.1 --operation Describe --topic orders"
  "--add --allow-principal User:alice --operation Read --group app- --resource-pattern-type prefixed"
  "--add --deny-principal User:mallory --deny-host 10.0.0.9 --operation All --topic *"
  "--add --allow-principal User:bob --producer --topic payments --transactional-id tx- --resource-pattern-type prefixed"
  "--add --allow-principal User:bob --idempotent --producer --topic audit"
  "--add --allow-principal User:carol --consumer --topic orders --group reports"
  "--add --allow-principal User:ops --operation Alter --operation DescribeConfigs --cluster"
  "--add --allow-principal User:* --operation Describe --topic public"
  "--list"
  "--list --topic orders"
  "--list --principal User:alice"
  "--list --topic orders-2024 --resource-pattern-type match"
  "--list --group app-1 --resource-pattern-type match"
  "--remove --allow-principal User:alice --operation Write --topic orders --force"
  "--remove --topic * --force"
  "--remove --transactional-id tx- --resource-pattern-type prefixed --force"
  "--list"
  "--add --allow-principal alice --operation Read --topic x"
  "--add --allow-principal User:alice --operation Read --topic x --resource-pattern-type match"
  "--add --allow-principal User:alice --operation Fly --topic x"
  "--list --topic nothing-here"
)

# normalise sorts the entries within each block and the blocks (blocks begin with a line
# that does not start with a tab or a space) and drops the JVM's log lines.
normalise() {
  python3 -c '
import sys
blocks, cur = [], None
for line in sys.stdin.read().splitlines():
    if line.startswith(("SLF4J", "[")) or not line.strip():
        continue
    if line.startswith(("\t", " ")) and cur is not None:
        cur[1].append(line.strip())
    else:
        cur = (line, [])
        blocks.append(cur)
for head, entries in sorted(blocks, key=lambda b: (b[0], sorted(b[1]))):
    print(head)
    for e in sorted(entries):
        print("\t" + e)
'
}

transcript() { # NAME BOOTSTRAP
  local out="$work/$1.txt" c rc
  : > "$out"
  for c in "${commands[@]}"; do
    echo "== kafka-acls $c" >> "$out"
    rc=0
    # shellcheck disable=SC2086
    timeout 60 "$ref" tool acls --bootstrap-server "$2" $c > "$work/cmd.out" 2>&1 < /dev/null || rc=$?
    # The tool's usage text follows a refusal; its first line says why.
    if [[ $rc -ne 0 ]]; then
      # A list in brackets is a Java Set's order: sorted.
      echo "exit $rc: $(grep -v '^SLF4J' "$work/cmd.out" | head -n 1)" | python3 -c '
import re, sys
print(re.sub(r"\[([^]]*)\]", lambda m: "[" + ", ".join(sorted(m.group(1).split(", "))) + "]", sys.stdin.read().rstrip("\n")))
' >> "$out"
    else
      normalise < "$work/cmd.out" >> "$out"
    fi
  done
  step "$1: $(grep -c '^== ' "$out") commands, $(wc -l < "$out") lines"
}

set -f # the '*' topic is an argument, not a glob
check "kafka-acls against Kafka ($kafka_addr) and Sluice ($sluice_addr)"
transcript kafka "$kafka_addr"
transcript sluice "$sluice_addr"
set +f
grep -q 'principal=User:bob, host=\*, operation=IDEMPOTENT_WRITE' "$work/kafka.txt" \
  || { cat "$work/kafka.txt"; fail "Kafka's transcript lacks the --idempotent binding: the commands did not run as meant"; }
if ! diff -u "$work/kafka.txt" "$work/sluice.txt" > "$work/sluice.diff"; then
  cat "$work/sluice.diff"
  fail "kafka-acls against Sluice differs from against Kafka (- Kafka, + Sluice)"
fi
step "the tool's $(wc -l < "$work/sluice.txt") lines against Sluice equal those against Kafka"
[[ -n "${ACLS_KEEP:-}" ]] && cp "$work/kafka.txt" "$work/sluice.txt" "$ACLS_KEEP/"
sluice_stop
step "PASS in $((SECONDS - t0))s"
