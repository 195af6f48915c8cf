"""kafka-python producer and consumer riding through a partition leader failover.

usage: failover_kafka_python.py BOOTSTRAP TOPIC N INTERVAL_MS

A KafkaProducer with its defaults (kafka-python 3.x: acks=all, idempotent) sends N records
value-i to partition 0 of TOPIC, one every INTERVAL_MS, while a KafkaConsumer (no group,
assign + seek_to_beginning, auto_offset_reset='none' so a wrong fetch position raises
instead of silently resetting) reads the partition in another thread. The test script
kills the partition's leader meanwhile. Prints "progress acked K" lines as records are
acknowledged. Exits 0 when every record was acknowledged and read back exactly once, in
the order sent; 1 on a failed check (the message says which); 2 on usage errors.

kafka-python logs its warnings to stderr (the script checks them for non-retriable
errors).
"""

import logging
import sys
import threading
import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition

READ_DEADLINE_S = 90
QUIET_S = 2
PROGRESS_EVERY = 250


class CheckFailed(Exception):
    pass


def say(msg):
    print(f"kafka-python: {msg}", flush=True)


class Reader(threading.Thread):
    """Reads partition 0 from the beginning and records where each value was seen."""

    def __init__(self, bootstrap, tp, n):
        super().__init__(name="failover-consumer", daemon=True)
        self.bootstrap, self.tp, self.n = bootstrap, tp, n
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.seen_at = {}
        self.read = 0
        self.last_index = -1
        self.problems = []
        self.failure = None

    def run(self):
        try:
            consumer = KafkaConsumer(bootstrap_servers=self.bootstrap, enable_auto_commit=False,
                                     auto_offset_reset="none")
            try:
                consumer.assign([self.tp])
                consumer.seek_to_beginning(self.tp)
                while not self.stop.is_set():
                    for records in consumer.poll(timeout_ms=200).values():
                        for r in records:
                            self.record(r)
            finally:
                consumer.close()
        except Exception as e:  # noqa: BLE001 - any consumer failure fails the check
            self.failure = e

    def record(self, r):
        with self.lock:
            self.read += 1
            where = f"offset {r.offset}"
            value = r.value.decode() if r.value is not None else None
            if value is None or not value.startswith("value-") or not value[6:].isdigit():
                self.problems.append(f"unexpected value {value!r} at {where}")
                return
            index = int(value[6:])
            if index >= self.n:
                self.problems.append(f"unexpected value {value!r} at {where}")
                return
            if index in self.seen_at:
                self.problems.append(f"value-{index} read twice, at {self.seen_at[index]} and {where}")
                return
            if index <= self.last_index:
                self.problems.append(f"value-{index} at {where} after value-{self.last_index}")
            self.seen_at[index] = where
            self.last_index = index

    def distinct(self):
        with self.lock:
            return len(self.seen_at)


def produce(bootstrap, tp, n, interval_s):
    """Sends the records; returns how many were acknowledged, failing on the first error."""
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    acked = [0]
    failed = []
    lock = threading.Lock()

    def on_ack(_metadata):
        with lock:
            acked[0] += 1
            k = acked[0]
        if k % PROGRESS_EVERY == 0:
            say(f"progress acked {k}")

    def on_error(exc):
        with lock:
            failed.append(exc)

    try:
        for i in range(n):
            if failed:
                break
            future = producer.send(tp.topic, key=f"key-{i}".encode(), value=f"value-{i}".encode(),
                                   partition=tp.partition)
            future.add_callback(on_ack)
            future.add_errback(on_error)
            if interval_s > 0:
                time.sleep(interval_s)
        producer.flush()
    finally:
        producer.close()
    if failed:
        raise CheckFailed(f"a record was not acknowledged after {acked[0]} were: {failed[0]!r}")
    return acked[0]


def main(argv):
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    bootstrap, topic = argv[1], argv[2]
    n, interval_ms = int(argv[3]), int(argv[4])
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    tp = TopicPartition(topic, 0)
    reader = Reader(bootstrap, tp, n)
    reader.start()
    try:
        acked = produce(bootstrap, tp, n, interval_ms / 1000)
        deadline = time.monotonic() + READ_DEADLINE_S
        while reader.distinct() < acked and reader.failure is None and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(QUIET_S)
    finally:
        reader.stop.set()
        reader.join(timeout=30)
    if reader.failure is not None:
        raise CheckFailed(f"consumer: {reader.failure!r}")
    if reader.problems:
        raise CheckFailed("consumer read wrong records: " + "; ".join(reader.problems[:10]))
    if acked != n:
        raise CheckFailed(f"acked {acked} of {n}")
    missing = [i for i in range(n) if i not in reader.seen_at]
    if missing:
        raise CheckFailed(f"{len(missing)} acknowledged records never read back, first value-{missing[0]} "
                          f"(read {reader.read} records)")
    say(f"acked {acked}, read back {reader.read} records: each exactly once, in order")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except CheckFailed as e:
        print(f"kafka-python: FAIL: {e}", file=sys.stderr, flush=True)
        sys.exit(1)
