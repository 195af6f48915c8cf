# Shared helpers for the sluice_*_test.sh interop tests; source it, do not run it.
#
#   sluice_init NAME        work dir, step/fail helpers, a trap that stops every server started
#   sluice_build            the sluice binary (built once per interop run, see below) in $SLUICE_BIN
#   sluice_start [DATADIR]  starts `sluice server` on free 127.0.0.1 ports with a data dir,
#                           waits until it answers ApiVersions; sets SLUICE_BOOTSTRAP,
#                           SLUICE_PID, SLUICE_LOG, SLUICE_DATA; each KEY=VALUE of the array
#                           sluice_overrides is passed as one more --override (to the
#                           reference Kafka as a --config file)
#   sluice_stop             TERM the server started last, KILL after 15 s
#
# SLUICE_INTEROP_BROKER=kafka-ref runs the same checks against the reference Apache Kafka
# (bench/kafka-ref, private state dir) instead: a check that fails there is a wrong check,
# not a Sluice bug. Tests that need Sluice's own data dir (the kill test) refuse that mode.
#
# The binary: `go build` into one directory per user under TMPDIR, under a lock, so the
# first test of a run compiles and the others find it up to date (go build relinks only
# when a source changed). SLUICE_BIN set in the environment skips the build.

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
ref="$repo/bench/kafka-ref"
java_run="$here/java/run"

sluice_pids=()
sluice_overrides=()

# SLUICE_KEEP_WORK=1 keeps each test's work dir (node logs, configs) for a look after it.
sluice_init() {
  sluice_test_name="$1"
  work="$(mktemp -d "${TMPDIR:-/tmp}/sluice-interop-$1.XXXXXX")"
  t0=$SECONDS
  trap sluice_cleanup EXIT
}

step() { echo "$sluice_test_name: [$((SECONDS - t0))s] $*"; }
check() { echo "$sluice_test_name: [$((SECONDS - t0))s] CHECK $*"; }

# fail prints the reason and the tail of the server log (the first thing to read when a
# client check fails), then exits non-zero; the trap stops the server.
fail() {
  echo "$sluice_test_name: FAIL: $*" >&2
  if [[ -n "${SLUICE_LOG:-}" && -f "$SLUICE_LOG" ]]; then
    echo "---- last 40 lines of $SLUICE_LOG" >&2
    tail -n 40 "$SLUICE_LOG" >&2
    echo "----" >&2
  fi
  exit 1
}

sluice_cleanup() {
  local pid
  against_kafka_ref && "$ref" stop > /dev/null 2>&1
  for pid in "${sluice_pids[@]}"; do
    stop_pid "$pid"
  done
  if [[ -n "${SLUICE_KEEP_WORK:-}" && -n "${work:-}" ]]; then
    echo "$sluice_test_name: work dir (node logs) kept in $work" >&2
    return 0
  fi
  [[ -n "${work:-}" && -d "$work" ]] && rm -rf "$work"
}

# stop_pid sends TERM, waits up to 15 s, then KILL: a server that ignores TERM must not
# outlive its test.
stop_pid() {
  local pid="$1" deadline=$((SECONDS + 15))
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "$sluice_test_name: sluice pid $pid ignored TERM for 15 s; sending KILL" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

against_kafka_ref() { [[ "${SLUICE_INTEROP_BROKER:-sluice}" == kafka-ref ]]; }

sluice_build() {
  if against_kafka_ref; then
    step "SLUICE_INTEROP_BROKER=kafka-ref: checks run against Apache Kafka $("$ref" version), not Sluice"
    return 0
  fi
  if [[ -n "${SLUICE_BIN:-}" ]]; then
    [[ -x "$SLUICE_BIN" ]] || fail "SLUICE_BIN=$SLUICE_BIN is not an executable"
    return 0
  fi
  local dir="${TMPDIR:-/tmp}/sluice-interop-bin.$(id -u)"
  mkdir -p "$dir"
  SLUICE_BIN="$dir/sluice"
  local started=$SECONDS
  (
    flock 9
    cd "$repo" && go build -o "$SLUICE_BIN" ./cmd/sluice
  ) 9> "$dir/lock" > "$work/build.log" 2>&1 || { cat "$work/build.log" >&2; fail "go build ./cmd/sluice"; }
  step "sluice binary ready in $((SECONDS - started))s ($SLUICE_BIN)"
  export SLUICE_BIN
}

# sluice_build_fault sets fault_bin to a binary built with -tags sluicefault (its log dirs
# can be made to fail: SLUICE_FAULT_LOG_DIR and a "<dir>.fail" file), SLUICE_FAULT_BIN when
# given; built once per machine beside sluice_build's binary (go build is incremental).
sluice_build_fault() {
  if [[ -n "${SLUICE_FAULT_BIN:-}" ]]; then
    fault_bin="$SLUICE_FAULT_BIN"
    return 0
  fi
  local dir="${TMPDIR:-/tmp}/sluice-interop-bin.$(id -u)"
  mkdir -p "$dir"
  fault_bin="$dir/sluice-fault"
  (
    flock 9
    cd "$repo" && go build -tags sluicefault -o "$fault_bin" ./cmd/sluice
  ) 9> "$dir/lock" > "$work/build-fault.log" 2>&1 || { cat "$work/build-fault.log" >&2; fail "go build -tags sluicefault"; }
}

# free_ports prints N distinct ports that are free on 127.0.0.1 right now, chosen below
# the kernel's ephemeral range: a port from that range can be taken, while a killed node
# is down, as the local port of some client's connection (or by a self-connection of a
# peer redialing it), and the node's restart would then fail to bind.
free_ports() {
  python3 - "$1" <<'PY'
import random, socket, sys
low = 32768
try:
    low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
except (OSError, ValueError, IndexError):
    pass
socks = []
while len(socks) < int(sys.argv[1]):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", random.randrange(max(1024, low - 12000), low)))
    except OSError:
        s.close()
        continue
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks: s.close()
PY
}

# api_versions_ok sends ApiVersions v0 over bash's /dev/tcp and checks for error code 0
# (the same probe bench/kafka-ref uses for the reference broker).
api_versions_ok() {
  local host="${1%:*}" port="${1##*:}" reply
  reply="$(timeout 5 bash -c '
    exec 3<>"/dev/tcp/$0/$1" || exit 1
    printf "\x00\x00\x00\x0a\x00\x12\x00\x00\x00\x00\x00\x01\x00\x00" >&3
    head -c 10 <&3 | od -An -tx1 | tr -d " \n"' "$host" "$port" 2>/dev/null)" || return 1
  [[ "${reply:8:12}" == "000000010000" ]]
}

sluice_start() {
  if against_kafka_ref; then
    start_kafka_ref
    return
  fi
  SLUICE_DATA="${1:-$work/data}"
  mkdir -p "$SLUICE_DATA"
  local ports
  read -r -a ports <<<"$(free_ports 2)"
  SLUICE_PORT="${ports[0]}"
  SLUICE_CONTROLLER_PORT="${ports[1]}"
  SLUICE_BOOTSTRAP="127.0.0.1:$SLUICE_PORT"
  SLUICE_LOG="$work/sluice-$SLUICE_PORT.log"
  local extra=() o
  for o in "${sluice_overrides[@]}"; do extra+=(--override "$o"); done
  "$SLUICE_BIN" server "${extra[@]}" \
    --override "listeners=PLAINTEXT://127.0.0.1:$SLUICE_PORT,CONTROLLER://127.0.0.1:$SLUICE_CONTROLLER_PORT" \
    --override "controller.quorum.voters=1@127.0.0.1:$SLUICE_CONTROLLER_PORT" \
    --override "log.dirs=$SLUICE_DATA" \
    > "$SLUICE_LOG" 2>&1 < /dev/null &
  SLUICE_PID=$!
  sluice_pids+=("$SLUICE_PID")
  local started=$SECONDS deadline=$((SECONDS + ${SLUICE_START_TIMEOUT:-30}))
  until api_versions_ok "$SLUICE_BOOTSTRAP"; do
    kill -0 "$SLUICE_PID" 2>/dev/null || fail "sluice server exited during start-up"
    ((SECONDS < deadline)) || fail "sluice server did not answer ApiVersions within ${SLUICE_START_TIMEOUT:-30}s"
    sleep 0.2
  done
  step "sluice server pid $SLUICE_PID up at $SLUICE_BOOTSTRAP in $((SECONDS - started))s (data $SLUICE_DATA)"
}

start_kafka_ref() {
  export KAFKA_REF_STATE="$work/kafka-ref-state"
  local config=()
  if [[ ${#sluice_overrides[@]} -gt 0 ]]; then
    printf '%s\n' "${sluice_overrides[@]}" > "$work/kafka-ref-overrides.properties"
    config=(--config "$work/kafka-ref-overrides.properties")
  fi
  SLUICE_BOOTSTRAP="$("$ref" start "${config[@]}" | tail -n 1)" || fail "bench/kafka-ref start"
  SLUICE_LOG="$("$ref" status | awk '/^run dir:/ { print $3 }')/node1/logs/server.log"
  SLUICE_PID=""
  step "reference Kafka up at $SLUICE_BOOTSTRAP"
}

sluice_stop() {
  if against_kafka_ref; then
    "$ref" stop > /dev/null 2>&1 || true
    return
  fi
  stop_pid "$SLUICE_PID"
  step "sluice server pid $SLUICE_PID stopped"
}
