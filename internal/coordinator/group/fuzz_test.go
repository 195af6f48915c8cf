package group

import (
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/kafka"
)

// FuzzReplay feeds arbitrary records to a Manager's replay: it must refuse
// or accept them without panicking, and a loaded group must still serve.
func FuzzReplay(f *testing.F) {
	now := time.Unix(1700000000, 0)
	mgr := NewManager(DefaultConfig(), now)
	g := newGroup(mgr, "g", now)
	g.protocolType, g.protocolName, g.generation = "consumer", "range", 3
	g.addMember(&member{id: "m", clientID: "c", sessionTimeout: time.Second, protocols: []Protocol{{Name: "range", Metadata: []byte{0, 0, 0, 0, 0, 1, 0, 1, 't'}}}}, now)
	rec := g.metadataRecord(now)
	f.Add(rec.Key, rec.Value)
	off := offsetRecord("g", kafka.TopicPartition{Topic: "t", Partition: 1}, OffsetAndMetadata{Offset: 5, Metadata: "x", CommitTime: now})
	f.Add(off.Key, off.Value)
	f.Add(off.Key, []byte(nil))
	f.Add([]byte{0, 9}, []byte{1})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		// Plain, and as a transaction's record that a marker then commits.
		for _, producer := range []int64{kafka.NoProducerID, 7} {
			m := NewManager(DefaultConfig(), now)
			if err := m.Replay(now, 0, producer, key, value); err != nil {
				return
			}
			m.FinishLoad(now)
			for _, id := range m.GroupIDs() {
				m.FetchOffsets(id, nil, true)
			}
			m.CompleteTransaction(now, producer, true)
			for _, id := range m.GroupIDs() {
				m.Describe(id)
				m.FetchOffsets(id, nil, true)
				m.DeleteOffsets(now, id, []kafka.TopicPartition{{Topic: "t"}}, func(int16, []int16) {})
			}
			m.ExpireOffsets(now.Add(365 * 24 * time.Hour))
			m.Tick(now.Add(time.Hour))
		}
	})
}

// FuzzParseSubscriptionTopics checks the subscription reader never panics.
func FuzzParseSubscriptionTopics(f *testing.F) {
	f.Add([]byte{0, 3, 0, 0, 0, 1, 0, 1, 't', 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		parseSubscriptionTopics(b)
	})
}
