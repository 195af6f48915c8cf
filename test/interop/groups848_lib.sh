# Shared settings of the groups848_*_test.sh scripts (KIP-848, group.protocol=consumer);
# source it after sluice_lib.sh, before sluice_start.
#
# The broker's consumer-group session timeout and heartbeat interval are lowered (Kafka's
# defaults are 45 s and 5 s, with minimums of the same) so that a killed member expires,
# and members see a new assignment, within seconds: the interop suite's time is short.
cg848_session_ms=6000
cg848_heartbeat_ms=1000
sluice_overrides+=(
  "group.consumer.session.timeout.ms=$cg848_session_ms"
  "group.consumer.min.session.timeout.ms=$cg848_session_ms"
  "group.consumer.heartbeat.interval.ms=$cg848_heartbeat_ms"
  "group.consumer.min.heartbeat.interval.ms=$cg848_heartbeat_ms"
)
