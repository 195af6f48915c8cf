#!/usr/bin/env bash
# Restart after kill -9 with several GiB of log, run by hand (3 to 6 minutes):
#   bash test/ops/flush_restart_kill.sh [GB] [PARTITIONS] [WAIT_S] [SEGMENT_MB]
# One Sluice node under Kafka's default flush policy (nothing fsynced on
# append). `sluice bench produce` (acks=1, 1 KiB records) fills GB (default 3)
# GiB into PARTITIONS (default 1) partitions with segment.bytes SEGMENT_MB
# (default 1024, Kafka's); the script then waits WAIT_S (default 65, past
# log.flush.offset.checkpoint.interval.ms) so the rolls' background flushes
# and the recovery-point checkpoint land, records the end offsets, kills the
# node with SIGKILL and times exec to the first acknowledged produce (acks=all).
# Every acknowledged record must be there after the restart (end offsets
# at least those before the kill). Prints the recovery-point checkpoint, the
# bytes above it (what recovery re-validates) and the load average.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../interop/sluice_lib.sh"
sluice_init flush_restart_kill
sluice_build
gb="${1:-3}" parts="${2:-1}" wait_s="${3:-65}" seg_mb="${4:-1024}"

read -r -a ports <<<"$(free_ports 2)"
bootstrap="127.0.0.1:${ports[0]}"
data="$work/data"
start_node() {
  SLUICE_LOG="$work/node.log"
  "$SLUICE_BIN" server --override "listeners=PLAINTEXT://$bootstrap,CONTROLLER://127.0.0.1:${ports[1]}" \
    --override "controller.quorum.voters=1@127.0.0.1:${ports[1]}" --override "log.dirs=$data" \
    --override "log.segment.bytes=$((seg_mb << 20))" >> "$SLUICE_LOG" 2>&1 < /dev/null &
  node_pid=$!
  sluice_pids+=("$node_pid")
}
produce_one() { "$SLUICE_BIN" bench produce probe -b "$bootstrap" --count 1 --acks all --timeout 2s --json > /dev/null 2>&1; }
end_offsets() { # the sum of the fill topic's end offsets
  kcat -b "$bootstrap" -Q $(for ((p = 0; p < parts; p++)); do printf -- '-t fill:%d:-1 ' "$p"; done) 2>/dev/null |
    awk '{ for (i = 1; i <= NF; i++) if ($i == "offset") s += $(i + 1) } END { printf "%d\n", s }'
}

start_node
deadline=$((SECONDS + 60))
until api_versions_ok "$bootstrap"; do ((SECONDS < deadline)) || fail "sluice did not start"; sleep 0.2; done
count=$((gb * 1024 * 1024))
step "filling $gb GiB ($count records of 1 KiB) into $parts partitions, segment.bytes $seg_mb MiB; load $(cut -d' ' -f1-3 /proc/loadavg)"
"$SLUICE_BIN" bench produce fill -b "$bootstrap" --count "$count" --record-size 1024 --partitions "$parts" \
  --acks 1 --idempotent=false --json > "$work/fill.json" || fail "fill"
until produce_one; do sleep 0.2; done
step "filled: $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print({k: r[k] for k in r if k in ("records_per_sec","mb_per_sec","MBPerSec","RecordsPerSec")} or r)' "$work/fill.json" | cut -c1-200)"
sleep "$wait_s"
before="$(end_offsets)"
((before >= count)) || fail "end offsets $before before the kill, $count records acknowledged"
kill -9 "$node_pid"
wait "$node_pid" 2>/dev/null || true
cp="$(cat "$data/recovery-point-offset-checkpoint" 2>/dev/null || true)" # none before the first interval
log_bytes=$(find "$data" -name '*.log' -path '*fill-*' -printf '%s\n' | awk '{ s += $1 } END { printf "%.0f\n", s }')
above=$(python3 - "$data" "$cp" <<'PY'
import os, sys
data, cp = sys.argv[1], sys.argv[2].split("\n")[2:]
rp = {}
for line in cp:
    if line.strip():
        t, p, o = line.split()
        rp[f"{t}-{p}"] = int(o)
def above_in(path, rp):  # bytes of the batches at or above rp (walks the batch headers)
    pos, size = 0, os.path.getsize(path)
    with open(path, "rb") as f:
        while pos + 61 <= size:
            f.seek(pos)
            h = f.read(61)
            base, length = int.from_bytes(h[0:8], "big"), int.from_bytes(h[8:12], "big")
            if base + int.from_bytes(h[23:27], "big") + 1 > rp:
                break
            pos += 12 + length
    return size - min(pos, size)
total = 0
for d in os.listdir(data):
    if not d.startswith("fill-"):
        continue
    segs = sorted(int(f[:-4]) for f in os.listdir(os.path.join(data, d)) if f.endswith(".log"))
    for i, base in enumerate(segs):
        nxt = segs[i + 1] if i + 1 < len(segs) else None
        if nxt is None or nxt > rp.get(d, 0):  # holds offsets at or above the recovery point
            path = os.path.join(data, d, f"{base:020d}.log")
            # Recovery re-validates from the recovery point, inside its segment.
            total += above_in(path, rp.get(d, 0)) if base < rp.get(d, 0) else os.path.getsize(path)
print(total)
PY
)
step "killed with $((log_bytes >> 20)) MiB of fill log, $((above >> 20)) MiB at or above the checkpointed recovery point; load $(cut -d' ' -f1-3 /proc/loadavg)"
t_start=$(date +%s.%N)
start_node
until produce_one; do
  kill -0 "$node_pid" 2>/dev/null || fail "sluice exited during recovery"
  sleep 0.02
done
t_end=$(date +%s.%N)
secs=$(python3 -c "print(f'{$t_end - $t_start:.2f}')")
after="$(end_offsets)"
((after >= before)) || fail "end offsets $after after the restart, $before before the kill: acknowledged records lost"
check "start-up to first acknowledged produce after kill -9: $secs s ($((log_bytes >> 20)) MiB of log, $((above >> 20)) MiB re-validated, $parts partitions, segment.bytes $seg_mb MiB); end offsets $before -> $after; load $(cut -d' ' -f1-3 /proc/loadavg)"
kill "$node_pid"
wait "$node_pid" 2>/dev/null || true
