#!/usr/bin/env bash
# A damaged batch in a sealed segment (issue 14), read by the Java consumer (kafka-clients,
# the pinned release, default settings):
#   - a topic of 1 MiB segments gets 3,000 records of 1 KB (several sealed segments);
#   - the server is stopped cleanly and the magic byte of a batch in the middle of the first
#     segment is overwritten, as a failing disk might;
#   - after a restart the consumer (assign, seek to beginning) reads every record before the
#     damaged batch, intact, and then poll() throws Kafka's "Encountered corrupt message when
#     fetching offset N" for the CORRUPT_MESSAGE answer;
#   - the server logged the damage with the file, position and offset.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init storage-corruption-java
against_kafka_ref && fail "the corruption test damages Sluice's data dir; it has no kafka-ref mode"
topic=damaged

sluice_build
sluice_start

check "write 3,000 records of 1 KB to a topic of 1 MiB segments, 100 a batch"
"$SLUICE_BIN" topic create "$topic" -b "$SLUICE_BOOTSTRAP" -p 1 -r 1 -c segment.bytes=1048576 \
  || fail "create topic"
for ((first = 0; first < 3000; first += 100)); do
  python3 -c '
import os, sys
first = int(sys.argv[1])
for i in range(first, first + 100):
    print(("record-%d;" % i) + os.urandom(495).hex())
' "$first" | "$SLUICE_BIN" produce "$topic" -b "$SLUICE_BOOTSTRAP" -p 0 --acks all > /dev/null || fail "produce"
done
sluice_stop

check "damage the magic byte of a batch in the middle of the first (sealed) segment"
read -r segment pos bad < <(python3 - "$SLUICE_DATA/$topic-0" <<'PY'
import glob, os, struct, sys
segs = sorted(glob.glob(os.path.join(sys.argv[1], "*.log")))
if len(segs) < 3:
    sys.exit("only %d segments" % len(segs))
data = open(segs[0], "rb").read()
batches, pos = [], 0
while pos + 61 <= len(data):
    base, length = struct.unpack(">qi", data[pos:pos + 12])
    batches.append((pos, base))
    pos += 12 + length
if len(batches) < 3:
    sys.exit("only %d batches in the first segment" % len(batches))
pos, base = batches[len(batches) // 2]
with open(segs[0], "r+b") as f:
    f.seek(pos + 16)
    f.write(b"\x7f")
print(segs[0], pos, base)
PY
) || fail "damage the segment"
step "damaged the batch at offset $bad, position $pos of $segment"

sluice_start "$SLUICE_DATA"
check "consume-until-corrupt: offsets 0..$((bad - 1)) intact, then the consumer's corrupt-message error at $bad"
"$java_run" --bootstrap "$SLUICE_BOOTSTRAP" consume-until-corrupt "$topic" 0 "$bad" \
  || fail "java consume-until-corrupt scenario"

check "the server logged the damage once, with the file, position and offset"
grep -F "corrupt record batch on disk" "$SLUICE_LOG" | grep -F "file=$segment position=$pos offset=$bad" > /dev/null \
  || fail "no log line for the damage"
[[ "$(grep -c "corrupt record batch on disk" "$SLUICE_LOG")" == 1 ]] || fail "the damage was logged more than once"

sluice_stop
step "PASS in $((SECONDS - t0))s"
