#!/usr/bin/env python3
"""The changes connect_debezium_test.sh makes in PostgreSQL, and the checks of the change
events Debezium writes for them through Kafka Connect (confluent-kafka reads them).

    changes.py sql K                         the SQL of batch K (0: rows the snapshot reads)
    changes.py check BOOTSTRAP PREFIX K SECS customers and orders events of batches 0..K
    changes.py ticks-sql FIRST N             N single-row inserts into ticks, 40 a second
    changes.py wait-ticks BOOTSTRAP TOPIC N SECS   until N committed tick events are there
    changes.py check-ticks BOOTSTRAP TOPIC N SECS  read_committed: ticks 1..N exactly once

Events are JsonConverter's with schemas.enable=false: key {"id": ..}, value Debezium's
envelope {"before", "after", "source": {"lsn", "txId", ..}, "op"}; a delete is followed by
a tombstone (the key, a null value).

At-least-once (check): Connect commits source offsets periodically, so after a worker
restart or a kill -9 Debezium may send again changes whose offsets were not committed. A
record is a replay of an earlier one for the same key when it has the same source.lsn,
source.txId and op, and then it must equal it in before and after; any other record is a
new change. Per key, the new changes, in topic order, must be exactly the expected ones
(none missing, none extra, in order); the replays are counted and printed. Every d event
(replayed or not) must be followed, next for its key, by a tombstone.

Exactly-once (check-ticks): a read_committed consumer must see each tick once and nothing
else: no replay at all.
"""
import json
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition


def batch_sql_and_events(k, rows):
    """Returns the SQL of batch k and the events it makes, as (table, id, op, before,
    after) in commit order; rows (the customers table's content) is updated."""
    sql, events = [], []
    if k == 0:
        values = []
        for i in range(1, 6):
            rows[i] = {"id": i, "name": f"c{i}", "balance": i * 10}
            values.append(f"({i}, 'c{i}', {i * 10})")
            events.append(("customers", i, "r", None, dict(rows[i])))
        sql.append("INSERT INTO customers VALUES " + ", ".join(values) + ";")
        return sql, events
    base = k * 100
    ids = list(range(base, base + 10))
    sql.append("BEGIN;")
    sql.append("INSERT INTO customers VALUES " + ", ".join(f"({i}, 'c{i}', {i * 10})" for i in ids) + ";")
    sql.append("INSERT INTO orders VALUES " + ", ".join(f"({i}, {i}, {i * 3})" for i in ids) + ";")
    sql.append("COMMIT;")
    for i in ids:
        rows[i] = {"id": i, "name": f"c{i}", "balance": i * 10}
        events.append(("customers", i, "c", None, dict(rows[i])))
    for i in ids:
        events.append(("orders", i, "c", None, {"id": i, "customer_id": i, "amount": i * 3}))
    sql.append(f"UPDATE customers SET balance = balance + {1000 + k}, name = name || '-u' "
               f"WHERE id BETWEEN {base} AND {base + 4};")
    for i in ids[:5]:
        before = dict(rows[i])
        rows[i] = {"id": i, "name": before["name"] + "-u", "balance": before["balance"] + 1000 + k}
        events.append(("customers", i, "u", before, dict(rows[i])))
    gone = ids[8:]
    sql.append("BEGIN;")
    sql.append(f"DELETE FROM customers WHERE id IN ({gone[0]}, {gone[1]});")
    sql.append(f"DELETE FROM orders WHERE id IN ({gone[0]}, {gone[1]});")
    sql.append("COMMIT;")
    for i in gone:
        events.append(("customers", i, "d", rows.pop(i), None))
    for i in gone:
        # orders keeps the default replica identity: before holds the key alone.
        events.append(("orders", i, "d", {"id": i, "customer_id": None, "amount": None}, None))
    # A row of the batch before changes again, in its own transaction.
    old = (k - 1) * 100 if k > 1 else 1
    before = dict(rows[old])
    rows[old] = dict(before, balance=before["balance"] + 7)
    sql.append(f"UPDATE customers SET balance = balance + 7 WHERE id = {old};")
    events.append(("customers", old, "u", before, dict(rows[old])))
    return sql, events


def model(upto):
    rows, sql, events = {}, [], []
    for k in range(upto + 1):
        s, e = batch_sql_and_events(k, rows)
        sql.append((k, s))
        events.extend(e)
    return rows, sql, events


def consume(bootstrap, topics, done, secs, isolation):
    """Reads topics from the beginning until done(records) holds and the consumer has
    reached the end of every partition (so extras after the expected ones are seen too),
    or secs pass. Returns records as (topic, key, value) in each topic's order. Partitions
    are assigned, not subscribed: no group, so no rebalance can make it read a record twice."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "changes-check",
                  "enable.auto.commit": False, "isolation.level": isolation})
    records = []
    deadline = time.time() + secs
    try:
        while True:
            md = c.list_topics(timeout=10)
            parts = [TopicPartition(t, p, OFFSET_BEGINNING) for t in topics
                     if t in md.topics and md.topics[t].error is None
                     for p in md.topics[t].partitions]
            if len({tp.topic for tp in parts}) == len(topics):
                break
            if time.time() > deadline:
                print(f"changes: topics {topics} not all there", file=sys.stderr)
                return records
            time.sleep(0.5)
        c.assign(parts)
        while time.time() < deadline:
            m = c.poll(0.5)
            if m is not None and m.error() is None:
                key = json.loads(m.key()) if m.key() else None
                value = json.loads(m.value()) if m.value() is not None else None
                records.append((m.topic(), key, value))
                continue
            if m is not None and m.error() is not None:
                print(f"changes: consumer error {m.error()}", file=sys.stderr)
            if done(records) and at_end(c):
                break
    finally:
        c.close()
    return records


def at_end(c):
    assignment = c.assignment()
    if not assignment:
        return False
    for tp in c.position(assignment):
        _, high = c.get_watermark_offsets(TopicPartition(tp.topic, tp.partition), timeout=5, cached=False)
        # read_committed stops at the last stable offset, which equals the high watermark
        # once no transaction is open (the scenario checks only then).
        if (tp.offset < 0 and high > 0) or tp.offset < high:
            return False
    return True


def envelope(value):
    return value["op"], value.get("before"), value.get("after")


def check(bootstrap, prefix, upto, secs):
    rows, _, expected = model(upto)
    want = {}
    for table, i, op, before, after in expected:
        want.setdefault((table, i), []).append((op, before, after))
    topics = [f"{prefix}.public.customers", f"{prefix}.public.orders"]
    total = len(expected)

    def changes_of(records):
        per_key, replays, errors = {}, 0, []
        seen = {}
        last = {}
        for topic, key, value in records:
            table = topic.rsplit(".", 1)[1]
            k = (table, key["id"])
            if value is None:
                if last.get(k) != "d":
                    errors.append(f"{k}: a tombstone not right after a d event")
                last[k] = None
                continue
            if last.get(k) == "d":
                errors.append(f"{k}: a d event not followed by a tombstone")
            op, before, after = envelope(value)
            src = value["source"]
            ident = (k, src["lsn"], src.get("txId"), op)
            last[k] = op
            if ident in seen:
                if seen[ident] != (before, after):
                    errors.append(f"{k}: lsn {src['lsn']} op {op} twice with different rows")
                replays += 1
                continue
            seen[ident] = (before, after)
            per_key.setdefault(k, []).append((op, before, after))
        errors += [f"{k}: no tombstone after its last d event" for k, op in last.items() if op == "d"]
        return per_key, replays, errors

    def done(records):
        per_key, _, _ = changes_of(records)
        return sum(len(v) for v in per_key.values()) >= total

    records = consume(bootstrap, topics, done, secs, "read_uncommitted")
    per_key, replays, errors = changes_of(records)
    for k in sorted(set(want) | set(per_key)):
        if per_key.get(k, []) != want.get(k, []):
            errors.append(f"{k}: got {per_key.get(k, [])}, want {want.get(k, [])}")
    got = sum(len(v) for v in per_key.values())
    print(f"changes: batches 0..{upto}: {len(records)} records, {got} changes of {total} expected, "
          f"{replays} replays (same lsn, txId, op)")
    for e in errors[:20]:
        print(f"changes: {e}", file=sys.stderr)
    return 0 if not errors else 1


def ticks_sql(first, n):
    for i in range(first, first + n):
        print(f"INSERT INTO ticks VALUES ({i}, 'tick {i}');")
        print("SELECT pg_sleep(0.025);")


def ticks_of(records):
    return [(value["op"], value["after"]["id"], value["after"]["v"]) if value else None
            for _, _, value in records]


def wait_ticks(bootstrap, topic, n, secs):
    records = consume(bootstrap, [topic], lambda r: len(r) >= n, secs, "read_committed")
    print(f"changes: {len(records)} committed tick events")
    return 0 if len(records) >= n else 1


def check_ticks(bootstrap, topic, n, secs):
    records = consume(bootstrap, [topic], lambda r: len(r) >= n, secs, "read_committed")
    got = ticks_of(records)
    want = [("c", i, f"tick {i}") for i in range(1, n + 1)]
    if got == want:
        everything = consume(bootstrap, [topic], lambda r: len(r) >= n, 10, "read_uncommitted")
        print(f"changes: read_committed: ticks 1..{n} exactly once, in order "
              f"(read_uncommitted: {len(everything)} events, {len(everything) - n} of aborted transactions)")
        return 0
    counts = {}
    for t in got:
        counts[t] = counts.get(t, 0) + 1
    dup = sorted(t[1] for t, c in counts.items() if t and c > 1)
    missing = sorted(set(i for _, i, _ in want) - set(t[1] for t in got if t))
    print(f"changes: read_committed: {len(got)} events for {n} ticks; twice: {dup[:20]}; "
          f"missing: {missing[:20]}", file=sys.stderr)
    return 1


def main(argv):
    cmd = argv[1]
    if cmd == "sql":
        rows = {}
        for k in range(int(argv[2]) + 1):
            sql, _ = batch_sql_and_events(k, rows)
        print("\n".join(sql))
        return 0
    if cmd == "check":
        return check(argv[2], argv[3], int(argv[4]), float(argv[5]))
    if cmd == "rows":
        rows, _, _ = model(int(argv[2]))
        for i in sorted(rows):
            print(f"{i}|{rows[i]['name']}|{rows[i]['balance']}")
        return 0
    if cmd == "ticks-sql":
        ticks_sql(int(argv[2]), int(argv[3]))
        return 0
    if cmd == "wait-ticks":
        return wait_ticks(argv[2], argv[3], int(argv[4]), float(argv[5]))
    if cmd == "check-ticks":
        return check_ticks(argv[2], argv[3], int(argv[4]), float(argv[5]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
