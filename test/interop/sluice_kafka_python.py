"""kafka-python against a broker, every client setting at its default.

usage: sluice_kafka_python.py BOOTSTRAP TOPIC N

Creates TOPIC (1 partition) with KafkaAdminClient, produces N keyed records with a default
KafkaProducer and requires every future to resolve, then reads them back with a default
KafkaConsumer (no group) using assign + seek_to_beginning and requires exactly N records,
the one at offset i with key key-i and value value-i. Exits 0 on success, 1 on a failed
check (the message says which), 2 on usage errors.
"""

import sys
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic

DEADLINE_S = 60
QUIET_MS = 2000


class CheckFailed(Exception):
    pass


def say(msg):
    print(f"kafka-python: {msg}", flush=True)


def create_topic(bootstrap, topic):
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        result = admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
        errors = [t for t in getattr(result, "topic_errors", []) if t[1] != 0]
        if errors:
            raise CheckFailed(f"create_topics {topic}: {errors}")
        say(f"created {topic}")
    finally:
        admin.close()


def produce(bootstrap, topic, n):
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    try:
        cfg = producer.config
        say(f"producer defaults: acks={cfg['acks']} enable_idempotence={cfg.get('enable_idempotence')} "
            f"api_version={cfg['api_version']}")
        futures = [producer.send(topic, key=f"key-{i}".encode(), value=f"value-{i}".encode()) for i in range(n)]
        producer.flush(timeout=DEADLINE_S)
        for i, f in enumerate(futures):
            try:
                meta = f.get(timeout=DEADLINE_S)
            except Exception as e:  # the future's own error names the broker's answer
                raise CheckFailed(f"record {i} not acknowledged: {e!r}")
            if meta.partition != 0 or meta.offset != i:
                raise CheckFailed(f"record {i} acknowledged at partition {meta.partition} offset {meta.offset}, "
                                  f"want 0/{i}")
        say(f"acked {n}")
    finally:
        producer.close(timeout=10)


def consume(bootstrap, topic, n):
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    tp = TopicPartition(topic, 0)
    got = 0
    try:
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        deadline = time.monotonic() + DEADLINE_S
        while got < n and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=500).values():
                for r in records:
                    check_record(r, got, n)
                    got += 1
        if got != n:
            raise CheckFailed(f"consumed {got} of {n} within {DEADLINE_S}s")
        extra = sum(len(rs) for rs in consumer.poll(timeout_ms=QUIET_MS).values())
        if extra:
            raise CheckFailed(f"{extra} record(s) after the {n} expected")
        say(f"consumed {got} records, keys and values match offsets 0..{got - 1}")
    finally:
        consumer.close()


def check_record(r, index, n):
    if index >= n:
        raise CheckFailed(f"more than {n} records: offset {r.offset} key {r.key!r}")
    want_key, want_value = f"key-{index}".encode(), f"value-{index}".encode()
    if r.offset != index or r.key != want_key or r.value != want_value:
        raise CheckFailed(f"record {index}: offset {r.offset} key {r.key!r} value {r.value!r}, "
                          f"want offset {index} key {want_key!r} value {want_value!r}")


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    bootstrap, topic, n = argv[1], argv[2], int(argv[3])
    try:
        create_topic(bootstrap, topic)
        produce(bootstrap, topic, n)
        consume(bootstrap, topic, n)
    except CheckFailed as e:
        say(f"FAIL: {e}")
        return 1
    say("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
