#!/usr/bin/env bash
# Decommission time for a broker holding SIZE_GIB GiB (default 10) against the machine's
# sequential write rate on the same disk.
#
#   bench/ops/decommission.sh [SIZE_GIB] [PARTITIONS]
#
# 1. dd writes SIZE_GIB GiB (1 MiB blocks, fdatasync) in the bench's work dir: the disk's
#    sequential write rate W.
# 2. Three combined Sluice nodes start; a topic of PARTITIONS (default 8) partitions of RF 1
#    is created all on broker 3 (Kafka's kafka-topics --replica-assignment) and filled with
#    SIZE_GIB GiB by `sluice bench produce` (16 KiB records, acks=all).
# 3. `sluice broker decommission 3` moves every replica to brokers 1 and 2 (unthrottled)
#    and is timed from start to "holds no replicas": rate D = bytes on broker 3 / time.
# Prints W, D and D/W (the issue's target: >= 0.5). Run by hand (needs about 3x SIZE_GIB
# free in TMPDIR); take the heavy lock when other tests run:
#   flock /tmp/eco-heavy.lock bench/ops/decommission.sh 10
set -euo pipefail
size_gib="${1:-10}"
partitions="${2:-8}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
ref="$repo/bench/kafka-ref"
work="$(mktemp -d "${TMPDIR:-/tmp}/sluice-decommission-bench.XXXXXX")"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
say() { echo "decommission-bench: $*"; }
now() { date +%s.%N; }

bin="${SLUICE_BIN:-$work/sluice}"
[[ -n "${SLUICE_BIN:-}" ]] || (cd "$repo" && go build -o "$bin" ./cmd/sluice)
say "load before: $(cat /proc/loadavg)"

# 1. The disk's sequential write rate.
t0="$(now)"
dd if=/dev/zero of="$work/dd.bin" bs=1M count=$((size_gib * 1024)) conv=fdatasync status=none
t1="$(now)"
rm -f "$work/dd.bin"
write_rate="$(python3 -c "print($size_gib*1024/($t1-$t0))")"
say "dd: ${size_gib} GiB in $(python3 -c "print(round($t1-$t0,1))") s = $(python3 -c "print(round($write_rate,1))") MiB/s"

# 2. A cluster with SIZE_GIB GiB on broker 3.
read -r -a ports <<<"$(python3 - <<'PY'
import socket
s=[socket.socket() for _ in range(6)]
for x in s: x.bind(("127.0.0.1",0))
print(" ".join(str(x.getsockname()[1]) for x in s))
PY
)"
voters="1@127.0.0.1:${ports[1]},2@127.0.0.1:${ports[3]},3@127.0.0.1:${ports[5]}"
cluster_id="$("$bin" storage random-uuid)"
node_args() {
  local i="$1"
  echo "--override process.roles=broker,controller --override node.id=$i" \
    "--override controller.quorum.voters=$voters --override controller.listener.names=CONTROLLER" \
    "--override listeners=PLAINTEXT://127.0.0.1:${ports[$(((i - 1) * 2))]},CONTROLLER://127.0.0.1:${ports[$(((i - 1) * 2 + 1))]}" \
    "--override advertised.listeners=PLAINTEXT://127.0.0.1:${ports[$(((i - 1) * 2))]}" \
    "--override log.dirs=$work/node-$i --override offsets.topic.replication.factor=1"
}
for i in 1 2 3; do
  # shellcheck disable=SC2046
  "$bin" storage format --cluster-id "$cluster_id" --config /dev/null $(node_args "$i") > /dev/null
  # shellcheck disable=SC2046
  "$bin" server $(node_args "$i") > "$work/node-$i.log" 2>&1 < /dev/null &
  pids+=("$!")
done
for i in 1 2 3; do
  until grep -qs 'msg="node started"' "$work/node-$i.log"; do sleep 0.2; done
done
bootstrap="127.0.0.1:${ports[0]},127.0.0.1:${ports[2]}"
assignment="$(python3 -c "print(','.join(['3']*$partitions))")"
until timeout 120 "$ref" tool topics --bootstrap-server "$bootstrap" --create --topic decom --replica-assignment "$assignment" > "$work/create.txt" 2>&1; do
  grep -q "already exists" "$work/create.txt" && break
  sleep 1
done
record=16384
count=$((size_gib * 1024 * 1024 * 1024 / record))
t0="$(now)"
"$bin" bench produce decom --brokers "$bootstrap" --count "$count" --record-size "$record" \
  --batch-size 1048576 --linger 20ms --json > "$work/fill.json" 2>/dev/null
t1="$(now)"
bytes="$(du -sb "$work"/node-3/decom-* | awk '{s += $1} END {print s}')"
say "filled broker 3 with $(python3 -c "print(round($bytes/2**30,2))") GiB in $(python3 -c "print(round($t1-$t0,1))") s"

# 3. The decommission.
t0="$(now)"
"$bin" broker decommission 3 --brokers "$bootstrap" --progress-interval 2s | tee "$work/decommission.txt"
t1="$(now)"
grep -q "Broker 3 holds no replicas." "$work/decommission.txt" || { say "FAIL: broker 3 not drained"; exit 1; }
secs="$(python3 -c "print($t1-$t0)")"
rate="$(python3 -c "print($bytes/2**20/$secs)")"
say "decommission: $(python3 -c "print(round($bytes/2**30,2))") GiB off broker 3 in $(python3 -c "print(round($secs,1))") s = $(python3 -c "print(round($rate,1))") MiB/s"
say "ratio decommission/dd write rate: $(python3 -c "print(round($rate/$write_rate,2))") (target >= 0.5)"
say "load after: $(cat /proc/loadavg)"
