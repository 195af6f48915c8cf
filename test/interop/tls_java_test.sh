#!/usr/bin/env bash
# Java kafka-clients (the pinned Kafka release) against a real `sluice server` over TLS and
# mutual TLS, every client setting at its default plus the security settings, read from a
# client properties file (INTEROP_CLIENT_CONFIG, see java/.../Clients.java):
#   - listener SSL (ssl.client.auth=none): AdminClient round trip, a producer (acks=all,
#     idempotent) sends 500 records, all acknowledged, a consumer reads exactly those back;
#   - listener MTLS (listener.name.mtls.ssl.client.auth=required): the same produce and
#     consume with a PKCS12 client keystore (CN=alice,OU=eng), mapped by
#     ssl.principal.mapping.rules; the server counts the handshakes of both listeners.
# The broker's keystore and truststore are JKS, the clients' PKCS12, made by
# test/security/certgen. Sluice only: the reference Kafka of bench/kafka-ref has no SSL
# listener.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init tls-java
against_kafka_ref && { step "SKIP: needs SSL listeners, which bench/kafka-ref does not set up"; exit 0; }
records=500
password="interop-store-pw"

sluice_build
step "writing the test PKI"
(cd "$repo" && go run ./test/security/certgen -dir "$work" -password "$password") || fail "certgen"

read -r -a ports <<<"$(free_ports 5)"
plain="127.0.0.1:${ports[0]}"
ssl="127.0.0.1:${ports[1]}"
mtls="127.0.0.1:${ports[2]}"
debug="127.0.0.1:${ports[4]}"
SLUICE_LOG="$work/sluice.log"
"$SLUICE_BIN" server \
  --override "listeners=PLAINTEXT://$plain,SSL://$ssl,MTLS://$mtls,CONTROLLER://127.0.0.1:${ports[3]}" \
  --override "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL,CONTROLLER:PLAINTEXT" \
  --override "controller.quorum.voters=1@127.0.0.1:${ports[3]}" \
  --override "log.dirs=$work/data" \
  --override "sluice.debug.listener=$debug" \
  --override "ssl.keystore.type=JKS" \
  --override "ssl.keystore.location=$work/broker.jks" \
  --override "ssl.keystore.password=$password" \
  --override "ssl.truststore.type=JKS" \
  --override "ssl.truststore.location=$work/truststore.jks" \
  --override "ssl.truststore.password=$password" \
  --override "listener.name.mtls.ssl.client.auth=required" \
  --override 'ssl.principal.mapping.rules=RULE:^CN=([a-z]+),OU=eng,.*$/$1/,DEFAULT' \
  > "$SLUICE_LOG" 2>&1 < /dev/null &
SLUICE_PID=$!
sluice_pids+=("$SLUICE_PID")
deadline=$((SECONDS + 30))
until api_versions_ok "$plain"; do
  kill -0 "$SLUICE_PID" 2>/dev/null || fail "sluice server exited during start-up"
  ((SECONDS < deadline)) || fail "sluice server did not answer ApiVersions within 30s"
  sleep 0.2
done
step "sluice server pid $SLUICE_PID up: SSL $ssl, MTLS $mtls"

cat > "$work/tls.properties" <<PROPS
security.protocol=SSL
ssl.truststore.type=PKCS12
ssl.truststore.location=$work/truststore.p12
ssl.truststore.password=$password
PROPS
cat "$work/tls.properties" > "$work/mtls.properties"
cat >> "$work/mtls.properties" <<PROPS
ssl.keystore.type=PKCS12
ssl.keystore.location=$work/client.p12
ssl.keystore.password=$password
PROPS

produce_consume() { # LISTENER ADDR PROPERTIES TOPIC
  local out="$work/produce-$1.txt" rc=0
  check "$1: produce $records records (acks=all, idempotent), all acknowledged"
  INTEROP_CLIENT_CONFIG="$3" "$java_run" --bootstrap "$2" produce "$4" "$records" > "$out" 2>&1 || rc=$?
  cat "$out"
  [[ $rc -eq 0 ]] && grep -qx "acked $records" "$out" || fail "$1: java produce (exit $rc)"
  check "$1: consume-values: exactly $records records with their keys and values"
  INTEROP_CLIENT_CONFIG="$3" "$java_run" --bootstrap "$2" consume-values "$4" 0 "$records" || fail "$1: java consume-values"
}

check "SSL: admin round trip over TLS"
INTEROP_CLIENT_CONFIG="$work/tls.properties" "$java_run" --bootstrap "$ssl" admin || fail "java admin over TLS"
produce_consume SSL "$ssl" "$work/tls.properties" java-tls
produce_consume MTLS "$mtls" "$work/mtls.properties" java-mtls

handshakes() { # LISTENER
  curl -fsS "http://$debug/metrics" | awk -v l="sluice_tls_handshakes_total{listener=\"$1\"}" '$1 == l { print $2 }'
}
check "the server counted TLS handshakes on both listeners"
for l in SSL MTLS; do
  n="$(handshakes "$l")"
  [[ -n "$n" && "${n%.*}" -ge 1 ]] || fail "no TLS handshake counted on $l (got '${n:-none}')"
  step "$l: $n handshakes"
done
if grep -q 'TLS handshake failed' "$SLUICE_LOG"; then
  grep 'TLS handshake failed' "$SLUICE_LOG" | head -5
  fail "a Java client's TLS handshake failed"
fi

sluice_stop
step "PASS in $((SECONDS - t0))s"
