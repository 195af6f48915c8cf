#!/usr/bin/env bash
# kcat (librdkafka) against a real `sluice server` with SCRAM over SASL_SSL, librdkafka's
# defaults plus the security settings (security.protocol, sasl.mechanisms, sasl.username,
# sasl.password, ssl.ca.location; the broker's certificate names 127.0.0.1, so
# librdkafka's default hostname check applies):
#   - alice's SCRAM-SHA-512 credential is created with Kafka's kafka-configs;
#   - as alice: 200 records produced (acks=all) and read back in order, metadata listed;
#   - a wrong password fails the client and is counted.
# Sluice only: the reference Kafka of bench/kafka-ref sets up no SASL listener.
set -euo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
source "$here/sluice_lib.sh"
source "$here/sasl_lib.sh"
sluice_init sasl-kcat
against_kafka_ref && { step "SKIP: needs SASL listeners, which bench/kafka-ref does not set up"; exit 0; }
command -v kcat > /dev/null || fail "kcat is not installed (setup.sh installs it)"
records=200

sluice_build
sasl_start
sasl_add_scram alice SCRAM-SHA-512 "$ALICE_PASSWORD"

kcat_as() { # PASSWORD ARGS...
  local password="$1"; shift
  kcat -b "$SASL_SSL" -X security.protocol=SASL_SSL -X sasl.mechanisms=SCRAM-SHA-512 \
    -X sasl.username=alice -X sasl.password="$password" -X ssl.ca.location="$work/ca.pem" "$@"
}

check "kcat -L over SASL_SSL SCRAM-SHA-512"
kcat_as "$ALICE_PASSWORD" -L -m 10 > "$work/metadata.txt" 2>&1 || { cat "$work/metadata.txt"; fail "kcat -L"; }
grep -q "1 brokers" "$work/metadata.txt" || { cat "$work/metadata.txt"; fail "kcat -L lists no broker"; }

check "kcat produces $records records (acks=all) as alice"
seq 1 "$records" | sed 's/^/record-/' > "$work/sent.txt"
kcat_as "$ALICE_PASSWORD" -P -t kcat-scram -X acks=all -X topic.request.required.acks=-1 < "$work/sent.txt" ||
  fail "kcat produce over SASL_SSL"

check "kcat reads exactly those $records records back"
kcat_as "$ALICE_PASSWORD" -C -t kcat-scram -o beginning -e -q -c "$records" > "$work/received.txt" || fail "kcat consume over SASL_SSL"
diff "$work/sent.txt" "$work/received.txt" > /dev/null || { diff "$work/sent.txt" "$work/received.txt" | head; fail "records differ"; }

check "a wrong password fails kcat"
before="$(sasl_metric sluice_failed_authentication_total 'listener="SASL_SSL",mechanism="SCRAM-SHA-512",reason="credentials"')"
rc=0
timeout 60 kcat -b "$SASL_SSL" -X security.protocol=SASL_SSL -X sasl.mechanisms=SCRAM-SHA-512 \
  -X sasl.username=alice -X sasl.password=wrong-password -X ssl.ca.location="$work/ca.pem" \
  -L -m 5 > "$work/wrong.txt" 2>&1 || rc=$?
[[ $rc -ne 0 ]] || { cat "$work/wrong.txt"; fail "kcat with a wrong password listed metadata"; }
grep -qi "authentication" "$work/wrong.txt" || { cat "$work/wrong.txt"; fail "kcat's failure does not name the authentication"; }
after="$(sasl_metric sluice_failed_authentication_total 'listener="SASL_SSL",mechanism="SCRAM-SHA-512",reason="credentials"')"
(( ${after%.*} > ${before%.*} )) || fail "the wrong password was not counted ($before, then $after)"
ok="$(sasl_metric sluice_successful_authentication_total 'listener="SASL_SSL",mechanism="SCRAM-SHA-512"')"
step "SCRAM-SHA-512 on SASL_SSL: $ok successful, ${after%.*} failed authentications"

sluice_stop
step "PASS in $((SECONDS - t0))s"
