"""Input and output of the Kafka Streams WordCount (test/interop/streams) for the
exactly-once tests, through confluent-kafka.

usage: streams_wordcount.py BOOTSTRAP produce TOPIC FIRST COUNT [RATE]
       streams_wordcount.py BOOTSTRAP check OUTPUT LINES [DEADLINE_S]

produce: lines FIRST .. FIRST+COUNT-1 (line i holds the words of words(i)) into TOPIC with
  an idempotent producer, RATE lines a second (0 or absent: as fast as it goes), each
  acknowledged; prints "produced N" every 500 lines.
check: a read_committed consumer of every partition of OUTPUT, from the beginning, until
  the last count of every word equals its count in lines 0 .. LINES-1 (or DEADLINE_S,
  default 60, passes). Then, per word, the committed counts must rise strictly (each
  committed update follows a new occurrence; a duplicate or a replay of uncommitted work
  would repeat or overshoot) and end at the exact count, with no word that the input does
  not have. Prints the words, total count and updates read.
Exits 0 on success, 1 on a failed check, 2 on usage errors.
"""

import struct
import sys
import time
from collections import Counter

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition


QUIET_S = 2


class CheckFailed(Exception):
    pass


def say(msg):
    print(f"wordcount: {msg}", flush=True)


def words(i):
    """The words of line i: a few small cycles, so that counts differ from word to word."""
    return [f"w{i % 7}", f"v{i % 13}", f"u{i % 29}", "every"]


def expected(lines):
    return Counter(w for i in range(lines) for w in words(i))


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
                producer.produce(topic, key=f"l{i}", value=" ".join(words(i)))
                break
            except BufferError:
                producer.poll(0.1)
        producer.poll(0)
        if (n + 1) % 500 == 0:
            say(f"produced {n + 1}")
    if producer.flush(60) != 0 or state["errors"] or state["acked"] != count:
        raise CheckFailed(f"input: {state['acked']} of {count} acknowledged, errors {state['errors'][:3]}")
    say(f"produced lines {first}..{first + count - 1}")


def check(bootstrap, output, lines, deadline_s=60):
    want = expected(lines)
    md = Producer({"bootstrap.servers": bootstrap}).list_topics(output, timeout=30).topics[output]
    consumer = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": f"unused-{output}",  # librdkafka wants one; nothing is committed
        "enable.auto.commit": False,
        "isolation.level": "read_committed",
    })
    consumer.assign([TopicPartition(output, p, 0) for p in md.partitions])
    updates, last, reads = {}, {}, 0
    deadline = time.monotonic() + deadline_s
    quiet_until = None  # once exact, read on for QUIET_S to catch an overshoot
    try:
        while time.monotonic() < (quiet_until or deadline):
            if quiet_until is None and last == want:
                quiet_until = time.monotonic() + QUIET_S
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            if msg.error() is not None:
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    continue
                raise CheckFailed(f"consumer error {msg.error()}")
            word, count = msg.key().decode(), struct.unpack(">q", msg.value())[0]
            updates.setdefault(word, []).append(count)
            last[word] = count
            reads += 1
    finally:
        consumer.close()
    for word, counts in sorted(updates.items()):
        if word not in want:
            raise CheckFailed(f"word {word!r} is not in the input (counts {counts[:5]})")
        if any(b <= a for a, b in zip(counts, counts[1:])):
            raise CheckFailed(f"word {word!r}: committed counts do not rise strictly: {counts}")
        if counts[-1] > want[word]:
            raise CheckFailed(f"word {word!r}: count {counts[-1]} over the exact {want[word]}: {counts}")
    if last != want:
        short = {w: (last.get(w), n) for w, n in want.items() if last.get(w) != n}
        raise CheckFailed(f"after {deadline_s}s, {len(short)} words short of their exact counts "
                          f"(got, want): {dict(list(short.items())[:5])}")
    say(f"{len(want)} words, total {sum(want.values())} = {lines} lines x {len(words(0))}, "
        f"{reads} committed updates, all exact and strictly rising")


if __name__ == "__main__":
    args = sys.argv[1:]
    try:
        if len(args) in (5, 6) and args[1] == "produce":
            produce(args[0], args[2], int(args[3]), int(args[4]), float(args[5]) if len(args) == 6 else 0)
        elif len(args) in (4, 5) and args[1] == "check":
            check(args[0], args[2], int(args[3]), float(args[4]) if len(args) == 5 else 60)
        else:
            print(__doc__, file=sys.stderr)
            sys.exit(2)
    except CheckFailed as e:
        say(f"FAIL: {e}")
        sys.exit(1)
