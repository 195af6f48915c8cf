#!/usr/bin/env bash
# KIP-848 consumer groups (group.protocol=consumer) subscribed by regular expression, with the
# Java KafkaConsumer (the pinned kafka-clients) against a real `sluice server`
# (SLUICE_INTEROP_BROKER=kafka-ref: against the reference Kafka), issue 17; session timeout
# 6 s, heartbeat 1 s (groups848_lib.sh):
#   - regex-broker: two members subscribed by a broker-side regular expression
#     (SubscriptionPattern) pick up a matching topic created while they run, read it, and
#     never a non-matching one; the new topic grows by a partition, which the assignment
#     follows and whose records are read (Kip848RegexScenario);
#   - regex-client: the same with a client-side java.util.regex.Pattern, whose matches
#     the members send as topic names (metadata.max.age.ms 2 s, so that the client sees
#     the new topic within the test).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
source "$here/groups848_lib.sh"
sluice_init groups848_regex

sluice_build
"$java_run" build
sluice_start
b="$SLUICE_BOOTSTRAP"

# Both modes run even when the first fails: they go through different broker paths.
failed=()
for mode in broker client; do
  check "regex-$mode: a topic matching a $mode-side regular expression, created while the group runs, is read"
  timeout 120 "$java_run" --bootstrap "$b" kip848-regex "cg848-rx-$mode" "cg848-rx-$mode" 3 "$mode" \
    || failed+=("kip848-regex ($mode side)")
done
[[ ${#failed[@]} -eq 0 ]] || fail "${failed[*]}"

sluice_stop
step "PASS in $((SECONDS - t0))s"
