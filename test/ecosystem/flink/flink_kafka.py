"""Input and output of the Flink job of flink_kafka_test.sh (test/ecosystem/flink), through
confluent-kafka (librdkafka: a different client from the job's kafka-clients).

usage: flink_kafka.py BOOTSTRAP produce TOPIC FIRST COUNT [RATE]
       flink_kafka.py BOOTSTRAP check OUTPUT TOTAL DEADLINE_S [RUN=JOB_LOG ...]

produce: records FIRST .. FIRST+COUNT-1 into TOPIC with an idempotent producer, record i
  keyed key(i) with value "key(i) i", RATE records a second (0 or absent: as fast as it
  goes), each acknowledged; prints "produced N" every 500 records.
check: a read_committed consumer of every partition of OUTPUT, from the beginning, until
  every key has as many records as inputs 0 .. TOTAL-1 hold for it (or DEADLINE_S passes).
  Then, per key, in partition order: the counts are exactly 1, 2, .., n (no input counted
  twice, none lost, nothing of an aborted transaction visible) and the inputs counted are
  exactly that key's inputs, in order; the run tags never go back. For each RUN=JOB_LOG,
  the job's "first KEY COUNT" lines (the count the run computed for the first record of
  each key it saw) must match the first committed record of that run for the key, and for
  a run after the first be above 1: the run continued from restored state, not from zero.
  Last, a read_uncommitted consumer reads the same partitions: every record it sees that
  read_committed did not is an aborted one, and their number is printed ("aborted N").
Exits 0 on success, 1 on a failed check, 2 on usage errors.
"""

import sys
import time
from collections import defaultdict

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

KEYS = 13
QUIET_S = 2


class CheckFailed(Exception):
    pass


def say(msg):
    print(f"flink_kafka: {msg}", flush=True)


def key(i):
    return f"k{i % KEYS}"


def produce(bootstrap, topic, first, count, rate=0):
    state = {"errors": [], "acked": 0}

    def on_delivery(err, msg):
        if err is not None:
            state["errors"].append(str(err))
        else:
            state["acked"] += 1

    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "on_delivery": on_delivery})
    started = time.monotonic()
    for n, i in enumerate(range(first, first + count)):
        if rate > 0:
            wait = started + n / rate - time.monotonic()
            if wait > 0:
                producer.poll(wait)
        while True:
            try:
                producer.produce(topic, key=key(i), value=f"{key(i)} {i}")
                break
            except BufferError:
                producer.poll(0.1)
        producer.poll(0)
        if (n + 1) % 500 == 0:
            say(f"produced {n + 1}")
    if producer.flush(60) != 0 or state["errors"] or state["acked"] != count:
        raise CheckFailed(f"input: {state['acked']} of {count} acknowledged, errors {state['errors'][:3]}")
    say(f"produced records {first}..{first + count - 1}")


def read_all(bootstrap, output, isolation, done, deadline_s):
    """Reads every partition of output from the start until done(records) and nothing new
    arrived for QUIET_S, or deadline_s passes; returns {partition: [(key, value)]}."""
    md = Producer({"bootstrap.servers": bootstrap}).list_topics(output, timeout=30).topics[output]
    consumer = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": f"flink-check-{time.time_ns()}",
        "isolation.level": isolation,
        "enable.auto.commit": False,
        "enable.partition.eof": True,
    })
    consumer.assign([TopicPartition(output, p, 0) for p in md.partitions])
    records = defaultdict(list)
    deadline = time.monotonic() + deadline_s
    last_new = time.monotonic()
    try:
        while time.monotonic() < deadline:
            msgs = consumer.consume(500, 0.5)
            for m in msgs:
                if m.error():
                    if m.error().code() != KafkaError._PARTITION_EOF:
                        raise CheckFailed(f"consume: {m.error()}")
                    continue
                records[m.partition()].append((m.key().decode(), m.value().decode()))
                last_new = time.monotonic()
            if done(records) and time.monotonic() - last_new >= QUIET_S:
                break
    finally:
        consumer.close()
    return records


def check(bootstrap, output, total, deadline_s, run_logs):
    want = defaultdict(list)
    for i in range(total):
        want[key(i)].append(i)

    def per_key(records):
        got = defaultdict(list)
        for part in records.values():
            for k, v in part:
                got[k].append(v)
        return got

    def complete(records):
        got = per_key(records)
        return all(len(got[k]) >= len(want[k]) for k in want)

    committed = read_all(bootstrap, output, "read_committed", complete, deadline_s)
    got = per_key(committed)
    n = sum(len(v) for v in got.values())
    say(f"read_committed: {n} records of {len(got)} keys (want {total} of {len(want)})")
    if set(got) - set(want):
        raise CheckFailed(f"keys the input does not have: {sorted(set(got) - set(want))[:5]}")

    first_of_run = defaultdict(dict)  # run -> key -> first committed count
    runs = defaultdict(int)
    for k in sorted(want, key=lambda s: int(s[1:])):
        rows = []
        for v in got[k]:
            f = v.split(" ")
            if len(f) != 4 or f[0] != k:
                raise CheckFailed(f"key {k}: malformed value {v!r}")
            rows.append((int(f[1]), int(f[2]), int(f[3])))
        counts = [r[0] for r in rows]
        if counts != list(range(1, len(want[k]) + 1)):
            bad = next((j for j, c in enumerate(counts) if c != j + 1), len(counts))
            raise CheckFailed(
                f"key {k}: {len(counts)} committed counts, want 1..{len(want[k])}; "
                f"at position {bad}: {rows[max(0, bad - 2):bad + 3]} (count, input, run)")
        if [r[1] for r in rows] != want[k]:
            raise CheckFailed(f"key {k}: the inputs counted differ from the key's inputs 0..{total - 1}")
        last_run = 0
        for c, _, run in rows:
            if run < last_run:
                raise CheckFailed(f"key {k}: run tag went back from {last_run} to {run} at count {c}")
            if run != last_run:
                first_of_run[run][k] = c
            last_run = run
            runs[run] += 1
    say("committed records per run: " + ", ".join(f"run {r}: {runs[r]}" for r in sorted(runs)))

    for spec in run_logs:
        run_s, _, path = spec.partition("=")
        run = int(run_s)
        printed = {}
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) == 3 and p[0] == "first" and p[1] not in printed:
                    printed[p[1]] = int(p[2])
        committed_first = first_of_run.get(run, {})
        if not committed_first:
            raise CheckFailed(f"run {run}: no committed record")
        for k, c in committed_first.items():
            if printed.get(k) != c:
                raise CheckFailed(f"run {run}, key {k}: first committed count {c}, the job computed {printed.get(k)}")
            if run > 1 and c <= 1:
                raise CheckFailed(f"run {run}, key {k}: began counting at {c}, not from restored state")
        say(f"run {run}: first counts per key {sorted(committed_first.values())} match the job's own")

    uncommitted = read_all(bootstrap, output, "read_uncommitted",
                           lambda r: sum(len(v) for v in r.values()) >= n, 30)
    aborted = 0
    for p, recs in uncommitted.items():
        seen = set(committed.get(p, []))
        aborted += sum(1 for r in recs if r not in seen)
    say(f"read_uncommitted: {sum(len(v) for v in uncommitted.values())} records")
    say(f"aborted {aborted}")


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    bootstrap, cmd, args = argv[1], argv[2], argv[3:]
    try:
        if cmd == "produce" and len(args) in (3, 4):
            produce(bootstrap, args[0], int(args[1]), int(args[2]), float(args[3]) if len(args) == 4 else 0)
        elif cmd == "check" and len(args) >= 3:
            check(bootstrap, args[0], int(args[1]), float(args[2]), args[3:])
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except CheckFailed as e:
        say(f"FAIL: {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
