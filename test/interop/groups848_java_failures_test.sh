#!/usr/bin/env bash
# KIP-848 consumer groups (group.protocol=consumer) with the Java KafkaConsumer when members
# fail or restart, against a real `sluice server` (SLUICE_INTEROP_BROKER=kafka-ref: against
# the reference Kafka), issue 17; session timeout 6 s, heartbeat 1 s (groups848_lib.sh):
#   - kill: of three members under a live producer, one runs in a JVM of its own that is
#     killed (SIGKILL, no leave); its partitions go to the survivors only once its session
#     times out, and the survivors read everything (Kip848KillScenario);
#   - static: a static member (group.instance.id) is closed and reopened within its
#     session; it gets its partitions back while the other members' assignments and the
#     group epoch do not change (Kip848StaticScenario).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
source "$here/groups848_lib.sh"
sluice_init groups848_java_failures

sluice_build
"$java_run" build
sluice_start
b="$SLUICE_BOOTSTRAP"

check "kill: a member's JVM killed without leaving loses its partitions after the ${cg848_session_ms} ms session timeout"
timeout 120 "$java_run" --bootstrap "$b" kip848-kill cg848-kill cg848-kill 6 "$cg848_session_ms" "$cg848_heartbeat_ms" \
  || fail "kip848-kill"

check "static: a static member closed and reopened gets its partitions back without a reassignment"
timeout 120 "$java_run" --bootstrap "$b" kip848-static cg848-static cg848-static 6 "$cg848_session_ms" \
  || fail "kip848-static"

sluice_stop
step "PASS in $((SECONDS - t0))s"
