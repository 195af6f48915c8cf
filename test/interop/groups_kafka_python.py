"""kafka-python consumer groups against a broker, client settings at their defaults.

usage: groups_kafka_python.py BOOTSTRAP TOPIC GROUP produce FIRST N
       groups_kafka_python.py BOOTSTRAP TOPIC GROUP consume FIRST N

produce sends records value-FIRST .. value-(FIRST+N-1) with a default KafkaProducer and
requires every one acknowledged. consume joins GROUP with a KafkaConsumer whose only
non-default setting is auto_offset_reset='earliest' (a new group must start somewhere),
requires exactly the values value-FIRST .. value-(FIRST+N-1), nothing else within a quiet
period after them, then closes, which commits (auto commit is on by default). Run consume
twice, in two processes, to see a restarted member resume at the group's commits.
Exits 0 on success, 1 on a failed check (the message says which), 2 on usage errors.
"""

import sys
import time

from kafka import KafkaConsumer, KafkaProducer

DEADLINE_S = 60
QUIET_MS = 2000


class CheckFailed(Exception):
    pass


def say(msg):
    print(f"kafka-python groups: {msg}", flush=True)


def produce(bootstrap, topic, first, n):
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    try:
        futures = [producer.send(topic, key=f"key-{i}".encode(), value=f"value-{i}".encode())
                   for i in range(first, first + n)]
        producer.flush(timeout=DEADLINE_S)
        for i, f in enumerate(futures):
            try:
                f.get(timeout=DEADLINE_S)
            except Exception as e:  # the future's own error names the broker's answer
                raise CheckFailed(f"record {first + i} not acknowledged: {e!r}")
        say(f"acked value-{first}..value-{first + n - 1}")
    finally:
        producer.close(timeout=10)


def consume(bootstrap, topic, group, first, n):
    want = {f"value-{i}".encode() for i in range(first, first + n)}
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest")
    got = []
    try:
        deadline = time.monotonic() + DEADLINE_S
        # Until the records are read and the group has assigned partitions: with N=0 the
        # quiet period must start only once the member could receive something.
        while (len(got) < n or not consumer.assignment()) and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=500).values():
                got.extend(r.value for r in records)
        quiet_until = time.monotonic() + QUIET_MS / 1000
        while time.monotonic() < quiet_until:
            for records in consumer.poll(timeout_ms=200).values():
                got.extend(r.value for r in records)
        unexpected = [v for v in got if v not in want]
        missing = want - set(got)
        if unexpected or missing or len(got) != n:
            raise CheckFailed(f"read {len(got)} records, want exactly {n} (value-{first}..): "
                              f"{len(missing)} missing, {len(unexpected)} unexpected "
                              f"(first unexpected: {unexpected[:3]!r})")
        assignment = sorted(tp.partition for tp in consumer.assignment())
        if not assignment:
            raise CheckFailed(f"no partition assigned within {DEADLINE_S}s")
        say(f"group {group} read exactly the {n} records from value-{first} on, partitions {assignment}")
    finally:
        consumer.close()  # commits what was read: auto commit is on by default


def main(argv):
    if len(argv) != 7 or argv[4] not in ("produce", "consume"):
        print(__doc__, file=sys.stderr)
        return 2
    bootstrap, topic, group, mode, first, n = argv[1], argv[2], argv[3], argv[4], int(argv[5]), int(argv[6])
    try:
        if mode == "produce":
            produce(bootstrap, topic, first, n)
        else:
            consume(bootstrap, topic, group, first, n)
    except CheckFailed as e:
        say(f"FAIL: {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
