"""Input and output of the ecosystem Streams apps (App.java), through confluent-kafka.

  streams_io.py BOOTSTRAP lines TOPIC FIRST COUNT [RATE]
      WordCount input: lines FIRST .. FIRST+COUNT-1 (line i holds words(i)), idempotent,
      RATE lines a second (0: as fast as it goes), each acknowledged; "produced N" every
      500 lines.
  streams_io.py BOOTSTRAP wordcount OUTPUT LINES eos|alos DEADLINE_S [MAX_EXCESS]
      Reads every partition of OUTPUT from the start until the last count of every word
      of lines 0 .. LINES-1 reaches its exact count (eos) or at least it (alos), within
      DEADLINE_S, then 2 s more. eos (read_committed): per word the counts rise strictly
      and end exact. alos: no word short (a lost record), no word the input lacks, and
      the words counted twice (replays after a failure) at most MAX_EXCESS in total.
  streams_io.py BOOTSTRAP events TOPIC BASE_MS FIRST COUNT
      Windowed input: events FIRST .. FIRST+COUNT-1, event i with key s{i % 5} and
      timestamp BASE_MS + (i * 7919) % 60000 (out of order, in the 10 s windows from
      BASE_MS to BASE_MS + 60 s); prints the expected counts of events 0 .. FIRST+COUNT-1
      per key and window as "KEY WINDOW_START COUNT" lines (windows aligned to the epoch).
  streams_io.py BOOTSTRAP kv TOPIC KEY=VALUE|KEY ...
      Records with Java's partitioner (murmur2), so they co-partition with Streams'; a
      bare KEY is a tombstone (null value). Timestamps are now.
  streams_io.py BOOTSTRAP read TOPIC COUNT DEADLINE_S
      Prints "KEY VALUE" of the first COUNT records of TOPIC (every partition, from the
      start, read_committed), by partition then offset; fails on fewer within DEADLINE_S.
Exits 0 on success, 1 on a failed check, 2 on usage errors.
"""

import struct
import sys
import time
from collections import Counter

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

QUIET_S = 2
WINDOW_MS = 10000


class CheckFailed(Exception):
    pass


def say(msg):
    print(f"streams_io: {msg}", flush=True)


def words(i):
    """The words of line i: a few small cycles, so that counts differ from word to word."""
    return [f"w{i % 7}", f"v{i % 13}", f"u{i % 29}", "every"]


def producer(bootstrap, state):
    def on_delivery(err, msg):
        if err is not None:
            state["errors"].append(str(err))
        else:
            state["acked"] += 1
    return Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True,
                     "partitioner": "murmur2_random", "linger.ms": 20,
                     "on_delivery": on_delivery})


def send_all(bootstrap, records, rate=0, progress=0):
    """records: (key, value, timestamp_ms or None); all acknowledged or CheckFailed."""
    state = {"errors": [], "acked": 0}
    p = producer(bootstrap, state)
    started = time.monotonic()
    n = 0
    for n, (topic, key, value, ts) in enumerate(records, 1):
        if rate > 0:
            wait = started + (n - 1) / rate - time.monotonic()
            if wait > 0:
                p.poll(wait)
        kw = {"timestamp": ts} if ts is not None else {}
        while True:
            try:
                p.produce(topic, key=key, value=value, **kw)
                break
            except BufferError:
                p.poll(0.1)
        p.poll(0)
        if progress and n % progress == 0:
            say(f"produced {n}")
    if p.flush(120) != 0 or state["errors"] or state["acked"] != n:
        raise CheckFailed(f"input: {state['acked']} of {n} acknowledged, errors {state['errors'][:3]}")
    return n


def lines(bootstrap, topic, first, count, rate=0):
    send_all(bootstrap, ((topic, f"l{i}", " ".join(words(i)), None) for i in range(first, first + count)),
             rate, 500)
    say(f"produced lines {first}..{first + count - 1}")


def consumer(bootstrap, topic, committed=True):
    md = Producer({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=30).topics[topic]
    if md.error is not None:
        raise CheckFailed(f"{topic}: {md.error}")
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"unused-{topic}",
                  "enable.auto.commit": False,
                  "isolation.level": "read_committed" if committed else "read_uncommitted"})
    c.assign([TopicPartition(topic, p, 0) for p in sorted(md.partitions)])
    return c


def poll(c, timeout):
    msg = c.poll(timeout)
    if msg is None:
        return None
    if msg.error() is not None:
        if msg.error().code() == KafkaError._PARTITION_EOF:
            return None
        raise CheckFailed(f"consumer error {msg.error()}")
    return msg


def wordcount(bootstrap, output, nlines, mode, deadline_s, max_excess=0):
    want = Counter(w for i in range(nlines) for w in words(i))
    c = consumer(bootstrap, output, committed=(mode == "eos"))
    updates, last, reads = {}, {}, 0
    started = time.monotonic()
    deadline = started + deadline_s
    reached = None

    def done():
        if mode == "eos":
            return last == want
        return all(last.get(w, 0) >= n for w, n in want.items())
    try:
        while time.monotonic() < ((reached + QUIET_S) if reached else deadline):
            if reached is None and done():
                reached = time.monotonic()
            msg = poll(c, 0.5)
            if msg is None:
                continue
            word, count = msg.key().decode(), struct.unpack(">q", msg.value())[0]
            updates.setdefault(word, []).append(count)
            last[word] = count
            reads += 1
    finally:
        c.close()
    foreign = sorted(set(updates) - set(want))
    if foreign:
        raise CheckFailed(f"words not in the input: {foreign[:5]}")
    short = {w: (last.get(w), n) for w, n in want.items() if last.get(w, 0) < n}
    if short:
        raise CheckFailed(f"after {deadline_s}s, {len(short)} words short of their counts "
                          f"(got, want): {dict(list(short.items())[:5])}")
    if mode == "eos":
        for word, counts in sorted(updates.items()):
            if any(b <= a for a, b in zip(counts, counts[1:])):
                raise CheckFailed(f"word {word!r}: committed counts do not rise strictly: {counts}")
        over = {w: (last[w], n) for w, n in want.items() if last[w] != n}
        if over:
            raise CheckFailed(f"counts over the exact ones (got, want): {dict(list(over.items())[:5])}")
        say(f"{len(want)} words, total {sum(want.values())}, {reads} committed updates, all exact and strictly rising "
            f"(reached after {reached - started:.1f}s)")
        say(f"reached-at-ms {int((time.time() - (time.monotonic() - reached)) * 1000)}")
        return
    excess = sum(last[w] - n for w, n in want.items())
    if excess > max_excess:
        raise CheckFailed(f"{excess} words counted twice, more than the {max_excess} the failures could replay")
    say(f"{len(want)} words, total {sum(want.values())}, {reads} updates, none short, "
        f"{excess} counted twice (at most {max_excess} allowed) (reached after {reached - started:.1f}s)")
    say(f"reached-at-ms {int((time.time() - (time.monotonic() - reached)) * 1000)}")


def events(bootstrap, topic, base_ms, first, count):
    def event(i):
        return (topic, f"s{i % 5}", f"e{i}", base_ms + (i * 7919) % 60000)
    send_all(bootstrap, [event(i) for i in range(first, first + count)])
    want = Counter((k, ts - ts % WINDOW_MS) for _, k, _, ts in map(event, range(first + count)))
    for (k, start), n in sorted(want.items()):
        print(f"{k} {start} {n}")


def kv(bootstrap, topic, pairs):
    recs = []
    for pair in pairs:
        key, eq, value = pair.partition("=")
        recs.append((topic, key, value if eq else None, None))
    send_all(bootstrap, recs)


def entry(msg):
    value = msg.value().decode() if msg.value() is not None else "<null>"
    return (msg.partition(), msg.offset(), msg.key().decode(), value)


def read(bootstrap, topic, count, deadline_s):
    c = consumer(bootstrap, topic)
    got = []
    deadline = time.monotonic() + deadline_s
    try:
        while len(got) < count and time.monotonic() < deadline:
            msg = poll(c, 0.5)
            if msg is not None:
                got.append(entry(msg))
        # A little longer: more than COUNT would be wrong too.
        end = time.monotonic() + QUIET_S
        while time.monotonic() < end:
            msg = poll(c, 0.5)
            if msg is not None:
                got.append(entry(msg))
    finally:
        c.close()
    for _, _, k, v in sorted(got):
        print(f"{k} {v}")
    if len(got) != count:
        raise CheckFailed(f"{topic}: {len(got)} records, want {count}")


if __name__ == "__main__":
    a = sys.argv[1:]
    try:
        if len(a) in (5, 6) and a[1] == "lines":
            lines(a[0], a[2], int(a[3]), int(a[4]), float(a[5]) if len(a) == 6 else 0)
        elif len(a) in (6, 7) and a[1] == "wordcount" and a[4] in ("eos", "alos"):
            wordcount(a[0], a[2], int(a[3]), a[4], float(a[5]), int(a[6]) if len(a) == 7 else 0)
        elif len(a) == 6 and a[1] == "events":
            events(a[0], a[2], int(a[3]), int(a[4]), int(a[5]))
        elif len(a) >= 4 and a[1] == "kv":
            kv(a[0], a[2], a[3:])
        elif len(a) == 5 and a[1] == "read":
            read(a[0], a[2], int(a[3]), float(a[4]))
        else:
            print(__doc__, file=sys.stderr)
            sys.exit(2)
    except CheckFailed as e:
        say(f"FAIL: {e}")
        sys.exit(1)
