#!/usr/bin/env bash
# Fault test of moves between log dirs (AlterReplicaLogDirs), run by hand (about 2 minutes):
#   bash test/ops/jbod_move_kill.sh [ROUNDS] [MB]
# One Sluice node with log.dirs=d1,d2 and a partition of MB (default 200) MB of
# uncompressed records. First an uninterrupted move d1 -> d2 is timed (the copy rate).
# Then ROUNDS (default 4) times: kafka-reassign-partitions --execute with log_dirs moves
# the partition to the other dir while kcat produces 20 MB to it with acks=all; once that
# is acknowledged the node is killed with SIGKILL after a random 0-1.5 s and restarted;
# the move must end (resumed, or
# completed at start-up) with one log in the destination, and the partition must hold
# every acknowledged record exactly once at contiguous offsets.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../interop/sluice_lib.sh"
sluice_init jbod_move_kill
sluice_build
rounds="${1:-4}" mb="${2:-200}"

read -r -a ports <<<"$(free_ports 2)"
bootstrap="127.0.0.1:${ports[0]}"
d1="$work/d1" d2="$work/d2"
start_node() {
  SLUICE_LOG="$work/node.log"
  "$SLUICE_BIN" server --override "listeners=PLAINTEXT://$bootstrap,CONTROLLER://127.0.0.1:${ports[1]}" \
    --override "controller.quorum.voters=1@127.0.0.1:${ports[1]}" --override "log.dirs=$d1,$d2" \
    --override log.segment.delete.delay.ms=1000 >> "$SLUICE_LOG" 2>&1 < /dev/null &
  node_pid=$!
  sluice_pids+=("$node_pid")
  local deadline=$((SECONDS + 60))
  until api_versions_ok "$bootstrap"; do
    ((SECONDS < deadline)) || fail "sluice did not start"
    sleep 0.2
  done
}
reassign() { timeout 120 "$ref" tool reassign-partitions --bootstrap-server "$bootstrap" "$@" 2>&1; }
where() { if [[ -d "$d1/mv-0" ]]; then echo "$d1"; else echo "$d2"; fi; }
moving() { compgen -G "$d1/mv-0.*-future" > /dev/null || compgen -G "$d2/mv-0.*-future" > /dev/null; }
lines() { python3 -c 'import sys
tag, n = sys.argv[1], int(sys.argv[2])
pad = "x" * 1000
for i in range(n): print(f"{tag}-{i}-{pad}")' "$@"; }
produced=0
produce() { # produce TAG N: acks=all, must deliver all
  lines "$1" "$2" | timeout 300 kcat -b "$bootstrap" -P -t mv -p 0 -X acks=all -X enable.idempotence=true -z none > "$work/p.out" 2>&1 || return 1
  ! grep -q "Delivery failed" "$work/p.out"
}

start_node
timeout 60 "$ref" tool topics --bootstrap-server "$bootstrap" --create --topic mv --partitions 1 --replication-factor 1 > /dev/null
n=$((mb * 1000))
produce pre "$n" || fail "preload"
produced=$n
step "preloaded $mb MB ($n records) into mv-0 in $(where); load $(cut -d' ' -f1-3 /proc/loadavg)"

move_to() { printf '{"version":1,"partitions":[{"topic":"mv","partition":0,"replicas":[1],"log_dirs":["%s"]}]}\n' "$1" > "$work/move.json"
  reassign --reassignment-json-file "$work/move.json" --execute > "$work/exec.txt" || { cat "$work/exec.txt"; fail "--execute"; }; }
other() { if [[ "$(where)" == "$d1" ]]; then echo "$d2"; else echo "$d1"; fi; }

dest="$(other)"
move_to "$dest"
while moving || [[ "$(where)" != "$dest" ]]; do sleep 0.05; done
size=$(du -sm "$dest/mv-0" | cut -f1)
# The copy's time from the node's own log: the future log's creation to the swap.
secs="$(python3 - "$SLUICE_LOG" <<'PY'
import re, sys, datetime
t = {}
for line in open(sys.argv[1]):
    for key, msg in (("start", "moving partition to another log dir"), ("end", "partition moved to another log dir")):
        if f'msg="{msg}"' in line:
            t[key] = datetime.datetime.fromisoformat(re.search(r"time=(\S+)", line).group(1).replace("Z", "+00:00"))
print(f"{(t['end'] - t['start']).total_seconds():.2f}")
PY
)"
step "uninterrupted move of $size MB to $dest: ${secs} s from the future log's creation to the swap, $(python3 -c "print(round($size/$secs))") MB/s (load $(cut -d' ' -f1-3 /proc/loadavg))"

verify() {
  timeout 300 kcat -b "$bootstrap" -C -t mv -p 0 -o beginning -e -q -f '%o %s\n' | cut -c1-40 > "$work/read.txt"
  local got; got=$(wc -l < "$work/read.txt")
  [[ "$got" -eq "$produced" ]] || fail "read $got records, $produced acknowledged"
  awk '$1 != NR - 1 { exit 1 }' "$work/read.txt" || fail "offsets not contiguous from 0"
  [[ "$(cut -d' ' -f2 "$work/read.txt" | cut -d- -f1-2 | sort | uniq -d | wc -l)" -eq 0 ]] || fail "a record read twice"
}
for r in $(seq 1 "$rounds"); do
  dest="$(other)"
  ( produce "r$r" 20000 ) &
  prod=$!
  move_to "$dest"
  wait "$prod" || fail "round $r: kcat (acks=all) failed during the move"
  produced=$((produced + 20000))
  delay=$(python3 -c 'import random; print(round(random.uniform(0, 1.5), 2))')
  sleep "$delay"
  state="copying"; moving || state="swapped"
  kill -KILL "$node_pid"; wait "$node_pid" 2> /dev/null || true
  start_node
  deadline=$((SECONDS + 120))
  while moving || [[ "$(where)" != "$dest" ]]; do
    ((SECONDS < deadline)) || fail "round $r: the move to $dest did not complete after the restart"
    sleep 0.1
  done
  step "round $r: 20000 records produced during the move, killed ${delay}s later ($state), restarted: the log is in $dest"
done
step "verifying: every record at contiguous offsets"
verify
step "PASS in $((SECONDS - t0))s"
