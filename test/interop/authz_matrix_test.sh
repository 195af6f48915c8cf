#!/usr/bin/env bash
# The differential authorization matrix (issue 16): test/interop/authzmatrix sends, for
# every API key a client can call, a raw request at a pinned version as alice (an mTLS
# principal) holding nothing and then after the super user (admin) grants what Kafka
# checks, and prints one line per request: every error code and KIP-430 operations of the
# answer keyed by resource name, topics alice may not see absent. It runs against a `sluice
# server` and the reference Kafka (bench/kafka-ref --ssl-listener, started together), both
# with an SSL listener requiring client certificates, the CN as the principal, Kafka's
# StandardAuthorizer and the same ACLs; Kafka's transcript must equal authz_matrix.expected
# and Sluice's must equal Kafka's. The last line lists the keys covered.
# AUTHZ_MATRIX_UPDATE=1 rewrites authz_matrix.expected from Kafka's.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init authz_matrix

export KAFKA_REF_STATE="$work/kafka-ref-state"
stop_both() { "$ref" stop > /dev/null 2>&1 || true; sluice_cleanup; }
trap stop_both EXIT
unset SLUICE_INTEROP_BROKER

password="matrix-store-pw"
(cd "$repo" && go build -o "$work/authzmatrix" ./test/interop/authzmatrix) > "$work/build.log" 2>&1 \
  || { cat "$work/build.log"; fail "go build ./test/interop/authzmatrix"; }
"$work/authzmatrix" pki -dir "$work" -password "$password" || fail "authzmatrix pki"

# The PLAINTEXT and CONTROLLER listeners (the brokers' own traffic, the start-up probe)
# are User:ANONYMOUS, a super user as the brokers' principals must be.
security=(
  "ssl.keystore.type=JKS"
  "ssl.keystore.location=$work/broker.jks"
  "ssl.keystore.password=$password"
  "ssl.truststore.type=JKS"
  "ssl.truststore.location=$work/truststore.jks"
  "ssl.truststore.password=$password"
  "ssl.client.auth=required"
  'ssl.principal.mapping.rules=RULE:^CN=([a-z]+),.*$/$1/,DEFAULT'
  "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer"
  "super.users=User:admin;User:ANONYMOUS"
  "group.initial.rebalance.delay.ms=0"
)
printf '%s\n' "${security[@]}" > "$work/kafka.properties"
"$ref" start --ssl-listener --config "$work/kafka.properties" > "$work/kafka-start.out" 2> "$work/kafka-start.err" &
kafka_starter=$!

sluice_build
read -r -a ports <<<"$(free_ports 3)"
sluice_ssl="127.0.0.1:${ports[1]}"
SLUICE_LOG="$work/sluice.log"
extra=()
for o in "${security[@]}"; do extra+=(--override "$o"); done
"$SLUICE_BIN" server "${extra[@]}" \
  --override "listeners=PLAINTEXT://127.0.0.1:${ports[0]},SSL://$sluice_ssl,CONTROLLER://127.0.0.1:${ports[2]}" \
  --override "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:SSL,CONTROLLER:PLAINTEXT" \
  --override "controller.quorum.voters=1@127.0.0.1:${ports[2]}" \
  --override "log.dirs=$work/data" \
  > "$SLUICE_LOG" 2>&1 < /dev/null &
SLUICE_PID=$!
sluice_pids+=("$SLUICE_PID")
deadline=$((SECONDS + 30))
until api_versions_ok "127.0.0.1:${ports[0]}"; do
  kill -0 "$SLUICE_PID" 2>/dev/null || { tail -n 30 "$SLUICE_LOG"; fail "sluice server exited during start-up"; }
  ((SECONDS < deadline)) || fail "sluice server did not answer ApiVersions within 30s"
  sleep 0.2
done
wait "$kafka_starter" || { cat "$work/kafka-start.err"; fail "bench/kafka-ref start"; }
kafka_ssl="$(cat "$KAFKA_REF_STATE/ssl_bootstrap")"
step "reference Kafka $("$ref" version) SSL at $kafka_ssl, sluice SSL at $sluice_ssl"

transcript() {
  timeout 200 "$work/authzmatrix" run -bootstrap "$2" -dir "$work" > "$work/$1.txt" 2> "$work/$1.err" \
    || { cat "$work/$1.txt" "$work/$1.err"; fail "authzmatrix against $1 ($2)"; }
  step "$1: $(wc -l < "$work/$1.txt") lines"
}

check "the matrix against Kafka ($kafka_ssl) and Sluice ($sluice_ssl)"
transcript kafka "$kafka_ssl"
transcript sluice "$sluice_ssl"

if [[ "${AUTHZ_MATRIX_UPDATE:-}" == 1 ]]; then
  cp "$work/kafka.txt" "$here/authz_matrix.expected"
  step "rewrote authz_matrix.expected from Kafka's transcript"
fi
if ! diff -u "$here/authz_matrix.expected" "$work/kafka.txt" > "$work/kafka.diff"; then
  cat "$work/kafka.diff"
  fail "Kafka's answers differ from authz_matrix.expected (- expected, + Kafka): a nondeterministic step, or a new pin (AUTHZ_MATRIX_UPDATE=1)"
fi
if ! diff -u "$work/kafka.txt" "$work/sluice.txt" > "$work/sluice.diff"; then
  cat "$work/sluice.diff"
  fail "Sluice answers differently from Kafka (- Kafka, + Sluice)"
fi
step "Sluice's $(wc -l < "$work/sluice.txt") lines equal Kafka's; $(tail -n 1 "$work/sluice.txt")"
sluice_stop
step "PASS in $((SECONDS - t0))s"
