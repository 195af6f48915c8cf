# Shared by the sasl_*_test.sh interop tests; source it after sluice_lib.sh, do not run it.
#
#   sasl_start      writes the test PKI into $work (test/security/certgen) and starts a
#                   `sluice server` with listeners PLAINTEXT ($SASL_PLAIN, admin tools),
#                   SASL_PLAINTEXT ($SASL_PLAINTEXT) and SASL_SSL ($SASL_SSL), each enabling
#                   PLAIN (users admin and alice, passwords $ADMIN_PASSWORD and
#                   $ALICE_PASSWORD) and SCRAM-SHA-256/512 (credentials stored with
#                   AlterUserScramCredentials), and the debug listener ($SASL_DEBUG);
#                   $STORE_PASSWORD opens the stores ($work/truststore.p12, $work/ca.pem)
#                   (each KEY=VALUE of the array sasl_overrides is one more --override)
#   sasl_metric NAME LABELS   one sample of the server's /metrics (0 when absent)
#   sasl_add_scram USER MECHANISM PASSWORD
#                   Kafka's kafka-configs (bench/kafka-ref tool configs) on the PLAINTEXT
#                   listener: --alter --add-config 'MECHANISM=[password=...]'
#                   --entity-type users --entity-name USER
#
# The reference Kafka of bench/kafka-ref sets up no SASL listener: the tests skip in that mode.

ADMIN_PASSWORD="admin-secret-42"
ALICE_PASSWORD="alice-secret-42"
STORE_PASSWORD="interop-store-pw"
sasl_overrides=()

sasl_start() {
  step "writing the test PKI"
  (cd "$repo" && go run ./test/security/certgen -dir "$work" -password "$STORE_PASSWORD") || fail "certgen"
  local ports
  read -r -a ports <<<"$(free_ports 5)"
  SASL_PLAIN="127.0.0.1:${ports[0]}"
  SASL_PLAINTEXT="127.0.0.1:${ports[1]}"
  SASL_SSL="127.0.0.1:${ports[2]}"
  SASL_DEBUG="127.0.0.1:${ports[4]}"
  local plain_jaas="org.apache.kafka.common.security.plain.PlainLoginModule required username=\"admin\" password=\"$ADMIN_PASSWORD\" user_admin=\"$ADMIN_PASSWORD\" user_alice=\"$ALICE_PASSWORD\";"
  local scram_jaas="org.apache.kafka.common.security.scram.ScramLoginModule required;"
  local jaas=() l m o
  for o in "${sasl_overrides[@]}"; do jaas+=(--override "$o"); done
  for l in sasl_plaintext sasl_ssl; do
    jaas+=(--override "listener.name.$l.plain.sasl.jaas.config=$plain_jaas")
    for m in scram-sha-256 scram-sha-512; do
      jaas+=(--override "listener.name.$l.$m.sasl.jaas.config=$scram_jaas")
    done
  done
  SLUICE_LOG="$work/sluice.log"
  "$SLUICE_BIN" server \
    --override "listeners=PLAINTEXT://$SASL_PLAIN,SASL_PLAINTEXT://$SASL_PLAINTEXT,SASL_SSL://$SASL_SSL,CONTROLLER://127.0.0.1:${ports[3]}" \
    --override "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT" \
    --override "controller.quorum.voters=1@127.0.0.1:${ports[3]}" \
    --override "log.dirs=$work/data" \
    --override "sluice.debug.listener=$SASL_DEBUG" \
    --override "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512" \
    "${jaas[@]}" \
    --override "ssl.keystore.type=JKS" \
    --override "ssl.keystore.location=$work/broker.jks" \
    --override "ssl.keystore.password=$STORE_PASSWORD" \
    > "$SLUICE_LOG" 2>&1 < /dev/null &
  SLUICE_PID=$!
  sluice_pids+=("$SLUICE_PID")
  local deadline=$((SECONDS + 30))
  until api_versions_ok "$SASL_PLAIN"; do
    kill -0 "$SLUICE_PID" 2>/dev/null || fail "sluice server exited during start-up"
    ((SECONDS < deadline)) || fail "sluice server did not answer ApiVersions within 30s"
    sleep 0.2
  done
  step "sluice server pid $SLUICE_PID up: SASL_PLAINTEXT $SASL_PLAINTEXT, SASL_SSL $SASL_SSL"
}

sasl_metric() { # NAME LABELS
  local v
  v="$(curl -fsS "http://$SASL_DEBUG/metrics" | awk -v s="$1{$2}" '$1 == s { print $2 }')"
  echo "${v:-0}"
}

sasl_add_scram() { # USER MECHANISM PASSWORD
  check "kafka-configs --alter --add-config '$2=[password=...]' --entity-type users --entity-name $1"
  "$ref" tool configs --bootstrap-server "$SASL_PLAIN" --alter --add-config "$2=[password=$3]" \
    --entity-type users --entity-name "$1" || fail "kafka-configs: adding $2 for $1"
  local out
  out="$("$ref" tool configs --bootstrap-server "$SASL_PLAIN" --describe --entity-type users --entity-name "$1")" ||
    fail "kafka-configs --describe user $1"
  echo "$out"
  grep -q "$2=iterations=" <<<"$out" || fail "kafka-configs does not describe $1's $2 credential"
}
