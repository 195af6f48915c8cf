"""librdkafka transactions through confluent-kafka (librdkafka bundled in the wheel) against
a broker, client settings at their defaults except transactional.id, the consumers'
isolation.level where read_uncommitted is wanted, and a group's auto.offset.reset.

usage: txn_confluent_kafka.py BOOTSTRAP commit-abort TOPIC COMMITS ABORTS PER_TXN [TXN_ID]
       txn_confluent_kafka.py BOOTSTRAP ctp IN OUT GROUP N
       txn_confluent_kafka.py BOOTSTRAP hold-open TOPIC PARTITION TXN_ID N
       txn_confluent_kafka.py BOOTSTRAP commit-read TOPIC PARTITION TXN_ID VALUE

commit-abort: one transactional producer runs COMMITS + ABORTS transactions of PER_TXN keyed
  records over every partition of TOPIC (every third aborted while aborts are left; each
  aborted one flushed and every record acknowledged before the abort); then a
  read_committed consumer (librdkafka's default) reads exactly the committed records, each
  once, to the end of every partition, and a read_uncommitted one reads every record sent.
ctp: consume-transform-produce: N records into IN (plain producer), then a group member of
  GROUP reads IN and, per poll batch, in one transaction writes upper-cased copies to OUT
  and commits its offsets with send_offsets_to_transaction; its second batch is aborted
  instead and the consumer rewinds to the group's committed offsets, so that batch is
  processed again in a later transaction. A read_committed reader of OUT then finds every
  input's copy exactly once, and the group's committed offsets are IN's end offsets.
hold-open: a transactional producer opens a transaction, writes N records to PARTITION of
  TOPIC, flushes, prints "open" and sleeps: the caller kill -9s it, leaving the transaction
  open on the partition for the coordinator to finish.
commit-read: one transaction of one record VALUE to PARTITION of TOPIC, committed; then a
  read_committed consumer of the partition must read VALUE before the partition's end (the
  last stable offset), which no transaction left open before it may hold back.
Exits 0 on success, 1 on a failed check (the message says which), 2 on usage errors.
"""

import sys
import time

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

DEADLINE_S = 60


class CheckFailed(Exception):
    pass


def say(msg):
    print(f"confluent-kafka: {msg}", flush=True)


def acked_producer(conf):
    """A producer whose delivery reports are collected: (errors, acked count)."""
    state = {"errors": [], "acked": 0}

    def on_delivery(err, msg):
        if err is not None:
            state["errors"].append(f"{msg.topic()}[{msg.partition()}]: {err}")
        else:
            state["acked"] += 1

    conf = dict(conf, on_delivery=on_delivery)
    return Producer(conf), state


def partitions_of(bootstrap, topic):
    md = Producer({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=30)
    t = md.topics.get(topic)
    if t is None or t.error is not None or not t.partitions:
        raise CheckFailed(f"topic {topic} not found: {t and t.error}")
    return sorted(t.partitions)


def commit_abort(bootstrap, topic, commits, aborts, per_txn, txn_id=None):
    producer, state = acked_producer({
        "bootstrap.servers": bootstrap,
        "transactional.id": txn_id or f"interop-librdkafka-{topic}",
    })
    producer.init_transactions(DEADLINE_S)
    committed, aborted = set(), set()
    t, commits_left, aborts_left = 0, commits, aborts
    while commits_left + aborts_left > 0:
        abort = aborts_left > 0 and (t % 3 == 1 or commits_left == 0)
        kind = "aborted" if abort else "committed"
        values = [f"{kind}-t{t}-r{i}" for i in range(per_txn)]
        producer.begin_transaction()
        for i, v in enumerate(values):
            producer.produce(topic, key=f"t{t}-r{i}", value=v)
        if abort:
            if producer.flush(DEADLINE_S) != 0:
                raise CheckFailed(f"transaction {t}: records still unacknowledged before the abort")
            producer.abort_transaction(DEADLINE_S)
            aborted.update(values)
            aborts_left -= 1
        else:
            producer.commit_transaction(DEADLINE_S)
            committed.update(values)
            commits_left -= 1
        if state["errors"]:
            raise CheckFailed(f"transaction {t}: delivery failed: {state['errors'][:3]}")
        t += 1
    if state["acked"] != len(committed) + len(aborted):
        raise CheckFailed(f"{state['acked']} records acknowledged, sent {len(committed) + len(aborted)}")
    say(f"produced {commits} committed and {aborts} aborted transactions of {per_txn} records")
    parts = partitions_of(bootstrap, topic)
    got_committed = read_all(bootstrap, topic, parts, "read_committed")
    check_exactly("read_committed", got_committed, committed, aborted)
    got_all = read_all(bootstrap, topic, parts, "read_uncommitted")
    check_exactly("read_uncommitted", got_all, committed | aborted, set())
    say(f"committed {len(committed)} aborted {len(aborted)} read_committed {len(got_committed)} "
        f"read_uncommitted {len(got_all)}")


def read_all(bootstrap, topic, parts, isolation):
    """Every value of the partitions from the beginning until each reports its end."""
    consumer = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": f"unused-{topic}-{isolation}",  # librdkafka wants one; nothing is committed
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        "isolation.level": isolation,
    })
    tps = [TopicPartition(topic, p, 0) for p in parts]
    consumer.assign(tps)
    got, at_end = [], set()
    deadline = time.monotonic() + DEADLINE_S
    try:
        while len(at_end) < len(parts):
            if time.monotonic() > deadline:
                raise CheckFailed(f"{isolation}: partitions {sorted(set(parts) - at_end)} not read to their end "
                                  f"within {DEADLINE_S}s ({len(got)} records)")
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            if msg.error() is not None:
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    at_end.add(msg.partition())
                    continue
                raise CheckFailed(f"{isolation}: consumer error {msg.error()}")
            at_end.discard(msg.partition())
            got.append(msg.value().decode())
        # At the end the position must be the partition's end for this isolation level
        # (its last stable offset for read_committed): nothing left behind an open marker.
        for tp in consumer.position(tps):
            _, high = consumer.get_watermark_offsets(tp, timeout=10, cached=False)
            if tp.offset < high:
                raise CheckFailed(f"{isolation}: partition {tp.partition} ended at {tp.offset}, high watermark {high}")
    finally:
        consumer.close()
    say(f"{isolation}: {len(got)} records")
    return got


def check_exactly(what, got, want, forbidden):
    seen = set()
    for v in got:
        if v in forbidden:
            raise CheckFailed(f"{what}: read a record of an aborted transaction: {v}")
        if v not in want:
            raise CheckFailed(f"{what}: read a record never sent: {v}")
        if v in seen:
            raise CheckFailed(f"{what}: read {v} twice")
        seen.add(v)
    if seen != want:
        missing = sorted(want - seen)
        raise CheckFailed(f"{what}: {len(missing)} of {len(want)} records missing, e.g. {missing[:3]}")


def ctp(bootstrap, topic_in, topic_out, group, n):
    producer, state = acked_producer({"bootstrap.servers": bootstrap})
    for i in range(n):
        producer.produce(topic_in, key=f"k{i}", value=f"in-{i}")
    if producer.flush(DEADLINE_S) != 0 or state["errors"] or state["acked"] != n:
        raise CheckFailed(f"input: {state['acked']} of {n} acknowledged, errors {state['errors'][:3]}")
    parts_in = partitions_of(bootstrap, topic_in)

    consumer = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
    })
    txn, _ = acked_producer({"bootstrap.servers": bootstrap, "transactional.id": f"interop-librdkafka-ctp-{group}"})
    txn.init_transactions(DEADLINE_S)
    consumer.subscribe([topic_in])
    processed, batches, aborted_batch = 0, 0, None
    deadline = time.monotonic() + DEADLINE_S
    try:
        while not caught_up(consumer, topic_in, parts_in):
            if time.monotonic() > deadline:
                raise CheckFailed(f"ctp: input not all processed within {DEADLINE_S}s ({processed} records)")
            msgs = consumer.consume(num_messages=50, timeout=0.5)
            msgs = [m for m in msgs if m.error() is None]
            if not msgs:
                continue
            batches += 1
            txn.begin_transaction()
            for m in msgs:
                txn.produce(topic_out, key=m.key(), value=m.value().decode().replace("in-", "OUT-"))
            txn.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                            consumer.consumer_group_metadata(), DEADLINE_S)
            if batches == 2:
                # Abort this batch after its records and offsets went out; rewind to the
                # group's committed offsets so it is processed again.
                if txn.flush(DEADLINE_S) != 0:
                    raise CheckFailed("ctp: records still unacknowledged before the abort")
                txn.abort_transaction(DEADLINE_S)
                aborted_batch = len(msgs)
                for tp in consumer.committed(consumer.assignment(), timeout=DEADLINE_S):
                    consumer.seek(TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else 0))
                continue
            txn.commit_transaction(DEADLINE_S)
            processed += len(msgs)
    finally:
        consumer.close()
    if aborted_batch is None:
        raise CheckFailed("ctp: fewer than 2 batches, nothing was aborted")
    say(f"ctp: {processed} records processed in {batches} transactions, one of {aborted_batch} aborted and redone")
    got = read_all(bootstrap, topic_out, partitions_of(bootstrap, topic_out), "read_committed")
    check_exactly("ctp output read_committed", got, {f"OUT-{i}" for i in range(n)}, set())
    check_group_offsets(bootstrap, group, topic_in, parts_in)
    say(f"ctp: output has each of the {n} inputs exactly once; group offsets at the input's end")


def caught_up(consumer, topic, parts):
    """True once the member owns every partition and its positions are at their ends."""
    assignment = consumer.assignment()
    if len(assignment) != len(parts):
        return False
    for tp in consumer.position(assignment):
        _, high = consumer.get_watermark_offsets(tp, timeout=10, cached=False)
        if tp.offset < high:
            return False
    return True


def check_group_offsets(bootstrap, group, topic, parts):
    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        tps = [TopicPartition(topic, p) for p in parts]
        for tp in reader.committed(tps, timeout=DEADLINE_S):
            _, high = reader.get_watermark_offsets(tp, timeout=10, cached=False)
            if tp.offset != high:
                raise CheckFailed(f"group {group}: committed {tp.offset} on partition {tp.partition}, end {high}")
    finally:
        reader.close()


def hold_open(bootstrap, topic, partition, txn_id, n):
    producer, state = acked_producer({
        "bootstrap.servers": bootstrap,
        "transactional.id": txn_id,
        # The caller inspects the open transaction with Kafka's tools before the
        # coordinator's timeout (60 s by default) would abort it.
        "transaction.timeout.ms": 600000,
    })
    producer.init_transactions(DEADLINE_S)
    producer.begin_transaction()
    for i in range(n):
        producer.produce(topic, partition=partition, key=f"open-{i}", value=f"open-{i}")
    if producer.flush(DEADLINE_S) != 0 or state["errors"] or state["acked"] != n:
        raise CheckFailed(f"hold-open: {state['acked']} of {n} acknowledged, errors {state['errors'][:3]}")
    say("open")
    while True:
        time.sleep(60)


def commit_read(bootstrap, topic, partition, txn_id, value):
    producer, state = acked_producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id})
    producer.init_transactions(DEADLINE_S)
    producer.begin_transaction()
    producer.produce(topic, partition=partition, key="k", value=value)
    producer.commit_transaction(DEADLINE_S)
    if state["errors"] or state["acked"] != 1:
        raise CheckFailed(f"commit-read: not acknowledged: {state['errors'][:3]}")
    got = read_all(bootstrap, topic, [partition], "read_committed")
    if value not in got:
        raise CheckFailed(f"commit-read: read_committed of {topic}-{partition} reads {got[:5]}, not {value!r}")
    say(f"commit-read: {value!r} committed and read_committed")


if __name__ == "__main__":
    modes = {
        "commit-abort": (lambda b, a: commit_abort(b, a[0], int(a[1]), int(a[2]), int(a[3]), *a[4:5]), (4, 5)),
        "ctp": (lambda b, a: ctp(b, a[0], a[1], a[2], int(a[3])), (4, 4)),
        "hold-open": (lambda b, a: hold_open(b, a[0], int(a[1]), a[2], int(a[3])), (4, 4)),
        "commit-read": (lambda b, a: commit_read(b, a[0], int(a[1]), a[2], a[3]), (4, 4)),
    }
    if len(sys.argv) < 3 or sys.argv[2] not in modes:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    run, (lo, hi) = modes[sys.argv[2]]
    rest = sys.argv[3:]
    if not lo <= len(rest) <= hi:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    try:
        run(sys.argv[1], rest)
    except (CheckFailed, KafkaException) as e:
        say(f"FAIL: {e}")
        sys.exit(1)
    say("PASS")
