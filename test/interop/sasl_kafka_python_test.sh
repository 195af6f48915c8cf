#!/usr/bin/env bash
# kafka-python against a real `sluice server` with SASL PLAIN over SASL_PLAINTEXT, the
# library's defaults plus the security settings (security_protocol, sasl_mechanism,
# sasl_plain_username, sasl_plain_password):
#   - as alice (a user of the listener's PlainLoginModule): 300 records produced
#     (acks=all) and read back in order by a consumer;
#   - a wrong password fails the client and is counted.
# Sluice only: the reference Kafka of bench/kafka-ref sets up no SASL listener.
set -euo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
source "$here/sluice_lib.sh"
source "$here/sasl_lib.sh"
sluice_init sasl-kafka-python
against_kafka_ref && { step "SKIP: needs SASL listeners, which bench/kafka-ref does not set up"; exit 0; }
python3 -c 'import kafka' 2> /dev/null || fail "kafka-python is not installed (setup.sh installs it)"

sluice_build
sasl_start

check "kafka-python: 300 records produced (acks=all) and consumed as alice over SASL_PLAINTEXT PLAIN"
python3 - "$SASL_PLAINTEXT" "$ALICE_PASSWORD" <<'PY' || fail "kafka-python over SASL PLAIN"
import sys
from kafka import KafkaConsumer, KafkaProducer

bootstrap, password = sys.argv[1], sys.argv[2]
sec = dict(security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
           sasl_plain_username="alice", sasl_plain_password=password)
n = 300
producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", **sec)
futures = [producer.send("py-plain", key=str(i).encode(), value=("value-%d" % i).encode()) for i in range(n)]
producer.flush(60)
offsets = [f.get(timeout=60).offset for f in futures]
assert offsets == list(range(n)), "offsets %s..." % offsets[:5]
producer.close()
print("kafka-python: %d records acknowledged" % n)

consumer = KafkaConsumer("py-plain", bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                         enable_auto_commit=False, consumer_timeout_ms=30000, **sec)
got = []
for r in consumer:
    got.append((r.offset, r.key.decode(), r.value.decode()))
    if len(got) == n:
        break
consumer.close()
want = [(i, str(i), "value-%d" % i) for i in range(n)]
assert got == want, "read %d records, first differing: %s" % (len(got), next((g for g, w in zip(got, want) if g != w), None))
print("kafka-python: %d records read back in order" % n)
PY

check "a wrong password fails kafka-python"
before="$(sasl_metric sluice_failed_authentication_total 'listener="SASL_PLAINTEXT",mechanism="PLAIN",reason="credentials"')"
python3 - "$SASL_PLAINTEXT" > "$work/wrong.txt" 2>&1 <<'PY' || { cat "$work/wrong.txt"; fail "kafka-python with a wrong password"; }
import logging, sys
from kafka import KafkaProducer
from kafka.errors import KafkaError

logging.basicConfig(level=logging.WARNING)

try:
    KafkaProducer(bootstrap_servers=sys.argv[1], security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
                  sasl_plain_username="alice", sasl_plain_password="wrong-password", max_block_ms=10000)
except KafkaError as e:
    print("refused:", type(e).__name__, e)
    sys.exit(0)
print("a wrong password was accepted")
sys.exit(1)
PY
cat "$work/wrong.txt" | tail -3
# Whether kafka-python's own error names the authentication failure depends on its version
# and timing (its newer network layer retries and reports "Unable to bootstrap"); the
# server's count below is what shows the refusal was for the credentials.
if grep -q "Authentication failed" "$work/wrong.txt"; then
  step "kafka-python reported Kafka's authentication error"
else
  step "kafka-python gave up without naming the authentication error (its version's behaviour)"
fi
after="$(sasl_metric sluice_failed_authentication_total 'listener="SASL_PLAINTEXT",mechanism="PLAIN",reason="credentials"')"
(( ${after%.*} > ${before%.*} )) || fail "the wrong password was not counted ($before, then $after)"
step "PLAIN on SASL_PLAINTEXT: $(sasl_metric sluice_successful_authentication_total 'listener="SASL_PLAINTEXT",mechanism="PLAIN"') successful, ${after%.*} failed authentications"

sluice_stop
step "PASS in $((SECONDS - t0))s"
