"""Avro producers and consumers against a Confluent-compatible schema registry (Karapace),
with Confluent's Python client: its SchemaRegistryClient, AvroSerializer and
AvroDeserializer. Used by test/ecosystem/registry_avro_test.sh:

  avro_check.py evolve REGISTRY BOOTSTRAP TOPIC N STATE
      subject TOPIC-value at compatibility BACKWARD; version 1 registered, N records
      produced with it; version 2 (a defaulted field added) passes the compatibility test
      and is registered, N more records with it; an incompatible version 3 (a field with no
      default) is refused with 409; all 2N records are consumed and decoded, each with the
      id of its writer schema, and decoded again with version 2 as the reader schema (the
      default fills version 1's records). Writes what the registry said to STATE (JSON).
  avro_check.py verify REGISTRY BOOTSTRAP TOPIC N STATE
      against a registry started afresh on the same Kafka topic: the subject, its versions,
      ids, schemas and compatibility are those in STATE; the incompatible change is still
      refused; registering version 2 again gives its old id; a new compatible version gets
      a new, higher id; a new client (empty caches) decodes all 2N records again.

Prints one line per check and exits non-zero at the first that fails.
"""

import json
import sys
import uuid

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.serialization import MessageField, SerializationContext

FIELDS_V1 = [
    {"name": "id", "type": "long"},
    {"name": "customer", "type": "string"},
    {"name": "amount", "type": "double"},
]
# BACKWARD-compatible: a reader of version 2 reads version 1's records, taking the default.
FIELD_CURRENCY = {"name": "currency", "type": "string", "default": "EUR"}
# Not BACKWARD-compatible: a reader of this cannot read older records, which lack the field.
FIELD_CHANNEL = {"name": "channel", "type": "string"}
# Compatible again (for the check after the restart).
FIELD_NOTE = {"name": "note", "type": "string", "default": ""}


def schema(fields):
    return json.dumps({"type": "record", "name": "Payment", "namespace": "sluice.ecosystem", "fields": fields})


V1 = schema(FIELDS_V1)
V2 = schema(FIELDS_V1 + [FIELD_CURRENCY])
V3_BAD = schema(FIELDS_V1 + [FIELD_CURRENCY, FIELD_CHANNEL])
V3 = schema(FIELDS_V1 + [FIELD_CURRENCY, FIELD_NOTE])


def ok(msg):
    print(f"avro_check: ok: {msg}", flush=True)


def fail(msg):
    print(f"avro_check: FAIL: {msg}", flush=True)
    sys.exit(1)


def expect(cond, msg):
    if not cond:
        fail(msg)
    ok(msg)


def record(i, version):
    r = {"id": i, "customer": f"customer-{i % 7}", "amount": round(i * 1.25, 2)}
    if version == 2:
        r["currency"] = ["EUR", "USD", "JPY"][i % 3]
    return r


def refused(sr, subject, text):
    """The registry refuses an incompatible version: test says False, register says 409."""
    expect(sr.test_compatibility(subject, Schema(text, "AVRO")) is False,
           "compatibility test of the incompatible version 3 says false")
    try:
        sid = sr.register_schema(subject, Schema(text, "AVRO"))
    except SchemaRegistryError as e:
        expect(e.http_status_code == 409, f"registering it is refused with HTTP 409 ({e.error_message})")
        return
    fail(f"the incompatible version 3 was registered with id {sid}")


def produce(bootstrap, topic, sr, text, first, n, version):
    ser = AvroSerializer(sr, text, conf={"auto.register.schemas": False, "use.latest.version": False})
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all"})
    errors = []
    for i in range(first, first + n):
        value = ser(record(i, version), SerializationContext(topic, MessageField.VALUE))
        p.produce(topic, key=str(i).encode(), value=value,
                  on_delivery=lambda err, _msg: errors.append(err) if err else None)
        p.poll(0)
    left = p.flush(30)
    expect(left == 0 and not errors, f"{n} records of version {version} produced (errors {errors[:3]})")


def consume_all(bootstrap, topic, n):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"avro-check-{uuid.uuid4()}",
                  "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    c.assign([TopicPartition(topic, 0, 0)])
    out = []
    idle = 0
    while len(out) < n and idle < 30:
        msg = c.poll(1.0)
        if msg is None:
            idle += 1
            continue
        if msg.error():
            raise KafkaException(msg.error())
        out.append((int(msg.key()), msg.value()))
    c.close()
    expect(len(out) == n, f"{n} records consumed from {topic} (got {len(out)})")
    return out


def schemas_topic_keys(bootstrap):
    """The keys of every record in Karapace's topic, read from the beginning: the registry's
    whole state is there, so a registry with no local state rebuilds from it."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"avro-check-{uuid.uuid4()}",
                  "enable.auto.commit": False})
    _, high = c.get_watermark_offsets(TopicPartition("_schemas", 0), timeout=10)
    c.assign([TopicPartition("_schemas", 0, 0)])
    keys = []
    next_offset = 0  # offsets, not a count: compaction may leave gaps
    while next_offset < high:
        msg = c.poll(10.0)
        if msg is None:
            fail(f"_schemas: read up to offset {next_offset} of {high}, then nothing for 10 s")
        if msg.error():
            raise KafkaException(msg.error())
        keys.append(json.loads(msg.key()))
        next_offset = msg.offset() + 1
    c.close()
    return keys


def decode_and_check(sr, topic, records, ids, n):
    """records: 2n (key, raw value) in offset order; the first n written with version 1."""
    ctx = SerializationContext(topic, MessageField.VALUE)
    writer = AvroDeserializer(sr)
    reader_v2 = AvroDeserializer(sr, V2)
    for idx, (key, raw) in enumerate(records):
        version = 1 if idx < n else 2
        expect_id = ids[str(version)]
        if raw[0] != 0 or int.from_bytes(raw[1:5], "big") != expect_id:
            fail(f"record {key}: wire header {raw[:5].hex()}, want magic 0 and schema id {expect_id}")
        got = writer(raw, ctx)
        if key != idx or got != record(idx, version):
            fail(f"record at offset {idx} (key {key}) decoded as {got}, want {record(idx, version)}")
        want_v2 = dict(record(idx, version))
        want_v2.setdefault("currency", "EUR")
        got_v2 = reader_v2(raw, ctx)
        if got_v2 != want_v2:
            fail(f"record {key} read with version 2 as {got_v2}, want {want_v2}")
    ok(f"{2 * n} records decoded: the first {n} with schema id {ids['1']} (version 1), "
       f"the rest with id {ids['2']} (version 2); read as version 2, version 1's records take the default")


def evolve(url, bootstrap, topic, n, state_file):
    subject = f"{topic}-value"
    sr = SchemaRegistryClient({"url": url})
    sr.set_compatibility(subject_name=subject, level="BACKWARD")
    expect(sr.get_compatibility(subject) == "BACKWARD", "subject compatibility set to BACKWARD")

    id1 = sr.register_schema(subject, Schema(V1, "AVRO"))
    # get_version, not get_latest_version: the client caches the latest version.
    v1 = sr.get_version(subject, 1)
    expect(sr.get_versions(subject) == [1] and v1.version == 1 and v1.schema_id == id1, f"version 1 registered with id {id1}")
    produce(bootstrap, topic, sr, V1, 0, n, 1)

    expect(sr.test_compatibility(subject, Schema(V2, "AVRO")) is True,
           "compatibility test of version 2 (a defaulted field added) says true")
    id2 = sr.register_schema(subject, Schema(V2, "AVRO"))
    v2 = sr.get_version(subject, 2)
    expect(sr.get_versions(subject) == [1, 2] and v2.version == 2 and v2.schema_id == id2 and id2 != id1, f"version 2 registered with id {id2}")
    produce(bootstrap, topic, sr, V2, n, n, 2)

    refused(sr, subject, V3_BAD)
    expect(sr.get_versions(subject) == [1, 2], "the subject still has versions [1, 2]")

    ids = {"1": id1, "2": id2}
    decode_and_check(sr, topic, consume_all(bootstrap, topic, 2 * n), ids, n)
    keys = schemas_topic_keys(bootstrap)
    versions = sorted(k["version"] for k in keys if k.get("keytype") == "SCHEMA" and k.get("subject") == subject)
    expect(versions == [1, 2], f"_schemas holds the subject's SCHEMA records for versions {versions}")
    expect(any(k.get("keytype") == "CONFIG" and k.get("subject") == subject for k in keys),
           "_schemas holds the subject's CONFIG record")
    with open(state_file, "w") as f:
        json.dump({"subject": subject, "ids": ids, "schemas": {"1": sr.get_schema(id1).schema_str,
                                                              "2": sr.get_schema(id2).schema_str}}, f)


def verify(url, bootstrap, topic, n, state_file):
    with open(state_file) as f:
        state = json.load(f)
    subject, ids = state["subject"], state["ids"]
    sr = SchemaRegistryClient({"url": url})
    expect(subject in sr.get_subjects(), f"subject {subject} is listed")
    expect(sr.get_versions(subject) == [1, 2], "its versions are [1, 2]")
    for v in ("1", "2"):
        rs = sr.get_version(subject, int(v))
        expect(rs.schema_id == ids[v] and json.loads(rs.schema.schema_str) == json.loads(state["schemas"][v]),
               f"version {v} has id {ids[v]} and the same schema")
        expect(json.loads(sr.get_schema(ids[v]).schema_str) == json.loads(state["schemas"][v]),
               f"schema id {ids[v]} resolves to version {v}'s schema")
    expect(sr.get_compatibility(subject) == "BACKWARD", "the subject's compatibility is still BACKWARD")
    refused(sr, subject, V3_BAD)
    expect(sr.register_schema(subject, Schema(V2, "AVRO")) == ids["2"],
           f"registering version 2 again gives its id {ids['2']}, no new one")
    id3 = sr.register_schema(subject, Schema(V3, "AVRO"))
    expect(id3 > max(ids.values()) and sr.get_versions(subject) == [1, 2, 3] and sr.get_version(subject, 3).schema_id == id3,
           f"a new compatible version 3 gets id {id3}, after the ids in use (no id reused)")
    decode_and_check(sr, topic, consume_all(bootstrap, topic, 2 * n), ids, n)


def main():
    cmd, url, bootstrap, topic, n, state = sys.argv[1:7]
    {"evolve": evolve, "verify": verify}[cmd](url, bootstrap, topic, int(n), state)


if __name__ == "__main__":
    main()
