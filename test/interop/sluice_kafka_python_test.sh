#!/usr/bin/env bash
# kafka-python against a real `sluice server`, with the client's defaults (kafka-python 3.x:
# acks=all, idempotent; it infers the broker release from ApiVersions, which the script
# prints): KafkaAdminClient creates a 1-partition topic, a KafkaProducer sends 1,000 keyed
# records (each acknowledged at partition 0, offset i), a KafkaConsumer with no group
# assigns the partition, seeks to the beginning and must read exactly those records back.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init kafka_python
records=1000

python3 -c 'import kafka' 2>/dev/null || fail "kafka-python not importable by python3 (setup.sh installs it)"
step "kafka-python $(python3 -c 'import kafka; print(kafka.__version__)')"
sluice_build
sluice_start

check "admin create_topics, producer defaults $records records acked in order, consumer assign+seek_to_beginning reads them back"
timeout 120 python3 "$here/sluice_kafka_python.py" "$SLUICE_BOOTSTRAP" python-topic "$records" \
  || fail "kafka-python scenario (exit $?)"

sluice_stop
step "PASS in $((SECONDS - t0))s"
