package metadata

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/sluice-io/sluice/internal/kafka"
)

// testTopicID turns the small numbers of the golden files into topic ids.
func testTopicID(s string) kafka.UUID {
	n, _ := strconv.Atoi(s)
	return kafka.UUID{14: byte(n >> 8), 15: byte(n)}
}

func int32List(s string) []int32 {
	if s == "null" {
		return nil
	}
	out := []int32{}
	for _, f := range strings.Split(s, ",") {
		if f == "" {
			continue
		}
		n, _ := strconv.Atoi(f)
		out = append(out, int32(n))
	}
	return out
}

// testDirs reads dirs=a,b,...: small numbers become ids ending in 100+n (so
// not reserved), "unassigned", "lost" and "migrating" Kafka's reserved ids;
// an absent key is nil, "dirs=" an empty list.
func testDirs(kv map[string]string) []kafka.UUID {
	v, ok := kv["dirs"]
	if !ok {
		return nil
	}
	out := []kafka.UUID{}
	for _, f := range strings.Split(v, ",") {
		switch f {
		case "":
		case "unassigned":
			out = append(out, DirUnassigned)
		case "lost":
			out = append(out, DirLost)
		case "migrating":
			out = append(out, DirMigrating)
		default:
			n, _ := strconv.Atoi(f)
			out = append(out, kafka.UUID{0: 0xd1, 15: byte(n)})
		}
	}
	return out
}

// parseRecord reads one line of the golden files' record language:
// "<type> key=value ...".
func parseRecord(line string) (Record, error) {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return nil, fmt.Errorf("empty line")
	}
	kv := map[string]string{}
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return nil, fmt.Errorf("bad field %q", f)
		}
		kv[k] = v
	}
	i32 := func(k string, def int32) int32 {
		v, ok := kv[k]
		if !ok {
			return def
		}
		n, _ := strconv.Atoi(v)
		return int32(n)
	}
	i64 := func(k string) int64 { n, _ := strconv.ParseInt(kv[k], 10, 64); return n }
	optStr := func(k string) *string {
		v, ok := kv[k]
		if !ok {
			return nil
		}
		return &v
	}
	switch fields[0] {
	case "cluster-id":
		return &ClusterIDRecord{ClusterID: kv["id"]}, nil
	case "feature":
		return &FeatureLevelRecord{Name: kv["name"], Level: int16(i32("level", 0))}, nil
	case "topic":
		return &TopicRecord{Name: kv["name"], TopicID: testTopicID(kv["id"])}, nil
	case "partition":
		return &PartitionRecord{TopicID: testTopicID(kv["id"]), Partition: i32("p", 0), Replicas: int32List(kv["replicas"]),
			ISR: int32List(kv["isr"]), Leader: i32("leader", NoLeader), LeaderEpoch: i32("leader-epoch", 0), PartitionEpoch: i32("partition-epoch", 0),
			Directories: testDirs(kv)}, nil
	case "partition-change":
		r := &PartitionChangeRecord{TopicID: testTopicID(kv["id"]), Partition: i32("p", 0), Leader: i32("leader", NoLeaderChange)}
		if v, ok := kv["isr"]; ok {
			r.ISR = int32List(v)
		}
		if v, ok := kv["replicas"]; ok {
			r.Replicas = int32List(v)
		}
		r.Directories = testDirs(kv)
		return r, nil
	case "remove-topic":
		return &RemoveTopicRecord{TopicID: testTopicID(kv["id"])}, nil
	case "config":
		t := ConfigResourceTopic
		if kv["type"] == "broker" {
			t = ConfigResourceBroker
		}
		return &ConfigRecord{ResourceType: t, ResourceName: kv["resource"], Name: kv["key"], Value: optStr("value")}, nil
	case "producer-ids":
		return &ProducerIDsRecord{BrokerID: i32("broker", 0), BrokerEpoch: i64("epoch"), NextProducerID: i64("next")}, nil
	case "register-broker":
		r := &RegisterBrokerRecord{BrokerID: i32("id", 0), IncarnationID: testTopicID(kv["incarnation"]), BrokerEpoch: i64("epoch"),
			Rack: optStr("rack"), Fenced: kv["fenced"] == "true", LogDirs: testDirs(kv)}
		if ep, ok := kv["endpoint"]; ok {
			name, rest, _ := strings.Cut(ep, "://")
			host, port, _ := strings.Cut(rest, ":")
			p, _ := strconv.Atoi(port)
			r.Endpoints = []Endpoint{{Name: name, Host: host, Port: int32(p)}}
		}
		return r, nil
	case "unregister-broker":
		return &UnregisterBrokerRecord{BrokerID: i32("id", 0), BrokerEpoch: i64("epoch")}, nil
	case "fence-broker":
		return &FenceBrokerRecord{BrokerID: i32("id", 0), BrokerEpoch: i64("epoch")}, nil
	case "unfence-broker":
		return &UnfenceBrokerRecord{BrokerID: i32("id", 0), BrokerEpoch: i64("epoch")}, nil
	case "broker-change":
		return &BrokerRegistrationChangeRecord{BrokerID: i32("id", 0), BrokerEpoch: i64("epoch"), Fenced: int8(i32("fenced", 0)), LogDirs: testDirs(kv)}, nil
	}
	if rec, ok := parseSecurityRecord(fields[0], kv); ok {
		return rec, nil
	}
	return nil, fmt.Errorf("unknown record %q", fields[0])
}

// TestReplay replays the golden files' record sequences. Each "replay" block
// is one delta: its records go through the encoder and decoder, are replayed
// at consecutive offsets, and the resulting image and delta are printed.
func TestReplay(t *testing.T) {
	datadriven.Walk(t, "testdata/replay", func(t *testing.T, path string) {
		image := EmptyImage()
		offset := int64(0)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "replay":
				delta := NewDelta(image)
				var out strings.Builder
				for _, line := range strings.Split(d.Input, "\n") {
					rec, err := parseRecord(line)
					if err != nil {
						t.Fatalf("%s: %v", line, err)
					}
					decoded, err := DecodeRecord(EncodeRecord(rec))
					if err != nil {
						t.Fatalf("%s: round trip: %v", line, err)
					}
					if err := delta.Replay(offset, 1, decoded); err != nil {
						fmt.Fprintf(&out, "error: %v\n", err)
						continue
					}
					offset++
				}
				image = delta.Apply()
				for _, tp := range delta.ChangedTopics() {
					fmt.Fprintf(&out, "delta: changed topic %s\n", tp.Name)
				}
				for _, tp := range delta.RemovedTopics() {
					fmt.Fprintf(&out, "delta: removed topic %s\n", tp.Name)
				}
				if b := delta.ChangedBrokers(); len(b) > 0 {
					fmt.Fprintf(&out, "delta: changed brokers %v\n", b)
				}
				writeSecurityDelta(&out, delta)
				out.WriteString(image.String())
				return out.String()
			case "image":
				return image.String()
			}
			return "unknown command " + d.Cmd
		})
	})
}
