"""A KIP-848 consumer group (group.protocol=consumer) with confluent-kafka, whose wheel
bundles a librdkafka (2.12 or later) speaking the protocol, against a broker; client
settings at their defaults apart from group.protocol, client.id and auto.offset.reset
(earliest: the first member must read what was written before it joined).

usage: groups848_confluent.py BOOTSTRAP TOPIC GROUP PARTITIONS N

Creates TOPIC, writes a first wave of N keyed records; member c1 joins alone, owns every
partition, reads each record of the wave exactly once and commits synchronously: the
group's committed offsets are then the end offsets. Member c2 joins: the two members'
assignments become non-empty, disjoint and cover the topic, and the group describes as a
consumer-protocol group with those two members and those assignments. A second wave of N
records is written and each of its records is read exactly once, by the member owning its
partition. Both commit and close (leaving the group); the group is then Empty with the end
offsets committed. Exits 0 on success, 1 on a failed check (the message says which), 2 on
usage errors.
"""

import sys
import time

from confluent_kafka import (ConsumerGroupState, ConsumerGroupType, Consumer, KafkaException, Producer,
                             TopicPartition)
from confluent_kafka.admin import AdminClient, NewTopic

DEADLINE_S = 60


class CheckFailed(Exception):
    pass


def say(msg):
    print(f"confluent-kafka: {msg}", flush=True)


def await_true(what, cond, members):
    """Polls every member until cond() holds, for up to DEADLINE_S."""
    started = time.monotonic()
    while not cond():
        if time.monotonic() - started > DEADLINE_S:
            raise CheckFailed(f"not within {DEADLINE_S}s: {what} ({owners(members)})")
        for m in members:
            m.poll_once()
    say(f"ok: {what} ({time.monotonic() - started:.1f}s; {owners(members)})")


def owners(members):
    return ", ".join(f"{m.name} owns {sorted(tp[1] for tp in m.owned())}" for m in members)


class Member:
    """One group member; records what it read (value -> (member, partition, offset))."""

    def __init__(self, bootstrap, topic, group, name, reads):
        self.name = name
        self.reads = reads
        self.consumer = Consumer({
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "group.protocol": "consumer",
            "client.id": name,
            "auto.offset.reset": "earliest",
        })
        self.consumer.subscribe([topic])

    def poll_once(self):
        msg = self.consumer.poll(0.1)
        if msg is None:
            return
        if msg.error():
            raise CheckFailed(f"{self.name}: {msg.error()}")
        self.reads.setdefault(msg.value().decode(), []).append((self.name, msg.partition(), msg.offset()))

    def owned(self):
        return {(tp.topic, tp.partition) for tp in self.consumer.assignment()}

    def commit(self):
        self.consumer.commit(asynchronous=False)


def produce(bootstrap, topic, prefix, n):
    """Writes n keyed records; returns value -> (partition, offset) once all are acknowledged."""
    written, errors = {}, []

    def on_delivery(err, msg):
        if err is not None:
            errors.append(str(err))
        else:
            written[msg.value().decode()] = (msg.partition(), msg.offset())

    p = Producer({"bootstrap.servers": bootstrap, "on_delivery": on_delivery})
    for i in range(n):
        p.produce(topic, key=f"key-{i}", value=f"{prefix}-{i}")
        p.poll(0)
    if p.flush(30) != 0 or errors or len(written) != n:
        raise CheckFailed(f"produce {prefix}: {len(written)} of {n} acknowledged, errors {errors[:3]}")
    return written


def check_wave(name, written, reads, owner_of):
    """Each record of the wave read exactly once, at its offset, by owner_of(partition)."""
    for value, (partition, offset) in written.items():
        got = reads.get(value, [])
        want = [(owner_of(partition), partition, offset)]
        if got != want:
            raise CheckFailed(f"{name}: {value} read as {got}, want {want}")
    say(f"ok: {name}: each of the {len(written)} records read exactly once by its partition's owner")


def check_committed(admin, bootstrap, topic, group, partitions):
    """The group's committed offset on each partition equals the partition's end offset."""
    probe = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer"})
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        committed = {tp.partition: tp.offset for tp in probe.committed(tps, timeout=30)}
        ends = {p: probe.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in range(partitions)}
    finally:
        probe.close()
    if committed != ends:
        raise CheckFailed(f"group {group} committed {committed}, want the end offsets {ends}")
    say(f"ok: group {group} committed the end offsets {ends}")


def describe(admin, group):
    return admin.describe_consumer_groups([group])[group].result(30)


def described_as(admin, group, members, last):
    """Whether the group describes as a Stable consumer-protocol group whose members own what
    they say they own; the description goes into last[0] for a failure message."""
    d = describe(admin, group)
    got = {m.client_id: {(tp.topic, tp.partition) for tp in m.assignment.topic_partitions} for m in d.members}
    want = {m.name: m.owned() for m in members}
    last[0] = f"{d.type.name} {d.state.name}, assignor {d.partition_assignor}, members {got}"
    return d.type == ConsumerGroupType.CONSUMER and d.state == ConsumerGroupState.STABLE and got == want


def run(bootstrap, topic, group, partitions, n):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)
    everything = {(topic, p) for p in range(partitions)}
    wave1 = produce(bootstrap, topic, f"{group}-wave1", n)
    reads = {}
    c1 = Member(bootstrap, topic, group, f"{group}-c1", reads)
    await_true("c1 alone owns every partition and read wave 1",
               lambda: c1.owned() == everything and len(reads) >= n, [c1])
    check_wave("wave 1", wave1, reads, lambda p: c1.name)
    c1.commit()
    check_committed(admin, bootstrap, topic, group, partitions)

    c2 = Member(bootstrap, topic, group, f"{group}-c2", reads)
    members = [c1, c2]

    def split():
        a, b = c1.owned(), c2.owned()
        return a and b and not (a & b) and (a | b) == everything

    last = [""]
    try:
        await_true("c1 and c2 own non-empty, disjoint sets covering the topic, as the group describes",
                   lambda: split() and described_as(admin, group, members, last), members)
    finally:
        say(f"the group describes as {last[0]}")
    owner = {p: m.name for m in members for (_, p) in m.owned()}
    reads.clear()
    wave2 = produce(bootstrap, topic, f"{group}-wave2", n)
    await_true("c1 and c2 read wave 2", lambda: len(reads) >= n, members)
    check_wave("wave 2", wave2, reads, lambda p: owner[p])
    if not split() or {p: m.name for m in members for (_, p) in m.owned()} != owner:
        raise CheckFailed(f"the assignment moved while wave 2 was read: {owners(members)}")
    for m in members:
        m.commit()
        m.consumer.close()
    d = describe(admin, group)
    if d.state != ConsumerGroupState.EMPTY or d.members:
        raise CheckFailed(f"group {group} is {d.state} with {len(d.members)} members after both closed, want EMPTY")
    check_committed(admin, bootstrap, topic, group, partitions)


def main(argv):
    if len(argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    import confluent_kafka
    say(f"confluent-kafka {confluent_kafka.__version__}, librdkafka {confluent_kafka.libversion()[0]}")
    if confluent_kafka.libversion()[1] < 0x020c0000:
        say("FAIL: librdkafka older than 2.12 does not speak KIP-848 (setup.sh pins confluent-kafka)")
        return 1
    try:
        run(argv[1], argv[2], argv[3], int(argv[4]), int(argv[5]))
    except (CheckFailed, KafkaException) as e:
        say(f"FAIL: {e}")
        return 1
    say("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
