#!/usr/bin/env bash
# Java kafka-clients (the pinned Kafka release) against a real `sluice server` with SCRAM
# over SASL_SSL, every client setting at its default plus the security settings, read from
# a client properties file (INTEROP_CLIENT_CONFIG, see java/.../Clients.java):
#   - Kafka's kafka-configs creates alice's SCRAM-SHA-256 credential
#     (--alter --add-config 'SCRAM-SHA-256=[password=...]' --entity-type users) and
#     describes it;
#   - as alice over SASL_SSL: an AdminClient round trip, a producer (acks=all, idempotent)
#     sends 500 records, all acknowledged, a consumer reads exactly those back;
#   - a wrong password is refused (the client fails with Kafka's authentication error);
#   - the server counted the successful and the failed authentications;
#   - connections.max.reauth.ms=1500: the clients re-authenticate on their own (KIP-368)
#     and no connection is closed with an expired session or fails re-authentication.
# Sluice only: the reference Kafka of bench/kafka-ref sets up no SASL listener.
set -euo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
source "$here/sluice_lib.sh"
source "$here/sasl_lib.sh"
sluice_init sasl-java
against_kafka_ref && { step "SKIP: needs SASL listeners, which bench/kafka-ref does not set up"; exit 0; }
records=500

sluice_build
sasl_overrides=("connections.max.reauth.ms=1500")
sasl_start
sasl_add_scram alice SCRAM-SHA-256 "$ALICE_PASSWORD"

client_props() { # FILE PASSWORD
  cat > "$1" <<PROPS
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-256
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="$2";
ssl.truststore.type=PKCS12
ssl.truststore.location=$work/truststore.p12
ssl.truststore.password=$STORE_PASSWORD
PROPS
}
client_props "$work/alice.properties" "$ALICE_PASSWORD"
client_props "$work/wrong.properties" "not-alices-password"

check "SASL_SSL SCRAM-SHA-256: admin round trip as alice"
INTEROP_CLIENT_CONFIG="$work/alice.properties" "$java_run" --bootstrap "$SASL_SSL" admin || fail "java admin over SASL_SSL"

check "SASL_SSL SCRAM-SHA-256: produce $records records (acks=all, idempotent), all acknowledged"
out="$work/produce.txt"
rc=0
INTEROP_CLIENT_CONFIG="$work/alice.properties" "$java_run" --bootstrap "$SASL_SSL" produce java-scram "$records" > "$out" 2>&1 || rc=$?
cat "$out"
[[ $rc -eq 0 ]] && grep -qx "acked $records" "$out" || fail "java produce over SASL_SSL (exit $rc)"
check "SASL_SSL SCRAM-SHA-256: consume-values: exactly $records records with their keys and values"
INTEROP_CLIENT_CONFIG="$work/alice.properties" "$java_run" --bootstrap "$SASL_SSL" consume-values java-scram 0 "$records" ||
  fail "java consume-values over SASL_SSL"

check "a wrong password is refused with Kafka's authentication error"
rc=0
INTEROP_CLIENT_CONFIG="$work/wrong.properties" timeout 120 "$java_run" --bootstrap "$SASL_SSL" admin > "$work/wrong.txt" 2>&1 || rc=$?
[[ $rc -ne 0 ]] || { cat "$work/wrong.txt"; fail "the admin client with a wrong password succeeded"; }
grep -q "SaslAuthenticationException\|Authentication failed" "$work/wrong.txt" ||
  { cat "$work/wrong.txt"; fail "the wrong password's failure is not Kafka's authentication error"; }

check "the server counted the authentications"
ok="$(sasl_metric sluice_successful_authentication_total 'listener="SASL_SSL",mechanism="SCRAM-SHA-256"')"
bad="$(sasl_metric sluice_failed_authentication_total 'listener="SASL_SSL",mechanism="SCRAM-SHA-256",reason="credentials"')"
step "successful $ok, failed $bad"
[[ "${ok%.*}" -ge 3 ]] || fail "successful SCRAM authentications counted: $ok, want at least 3"
[[ "${bad%.*}" -ge 1 ]] || fail "failed SCRAM authentications counted: $bad, want at least 1"

check "KIP-368: no session expired under the clients and no re-authentication failed"
reauth="$(sasl_metric sluice_successful_reauthentication_total 'listener="SASL_SSL",mechanism="SCRAM-SHA-256"')"
expired="$(sasl_metric sluice_expired_connections_killed_total 'listener="SASL_SSL"')"
reauth_failed="$(sasl_metric sluice_failed_reauthentication_total 'listener="SASL_SSL",mechanism="SCRAM-SHA-256",reason="credentials"')"
step "re-authentications $reauth, expired sessions closed $expired, failed re-authentications $reauth_failed"
[[ "${expired%.*}" -eq 0 && "${reauth_failed%.*}" -eq 0 ]] || fail "a Java client's session expired or its re-authentication failed"

sluice_stop
step "PASS in $((SECONDS - t0))s"
