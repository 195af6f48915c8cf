package broker

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"testing"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/replication"
)

// settingsRecorder is a TopicConfigTarget keeping what it was pushed.
type settingsRecorder struct {
	pushes    []map[string]replication.TopicSettings
	forgotten []string
}

func (r *settingsRecorder) UpdateTopicSettings(s map[string]replication.TopicSettings) {
	r.pushes = append(r.pushes, s)
}

func (r *settingsRecorder) ForgetTopicSettings(topics ...string) {
	r.forgotten = append(r.forgotten, topics...)
}

func (r *settingsRecorder) last() map[string]replication.TopicSettings {
	if len(r.pushes) == 0 {
		return nil
	}
	return r.pushes[len(r.pushes)-1]
}

func topicRecords(name string, id byte) []metadata.Record {
	tid := kafka.UUID{0: id, 15: 1}
	return []metadata.Record{
		&metadata.TopicRecord{Name: name, TopicID: tid},
		&metadata.PartitionRecord{TopicID: tid, Partition: 0, Replicas: []int32{1}, ISR: []int32{1}, Leader: 1},
	}
}

func configRecord(t metadata.ConfigResourceType, resource, key, value string) metadata.Record {
	return &metadata.ConfigRecord{ResourceType: t, ResourceName: resource, Name: key, Value: &value}
}

// The publisher resolves a topic's settings when the topic appears and when
// its configs or a broker default under them change, and only then; a
// deleted topic's settings are forgotten.
func TestTopicConfigPublisherPushesOnlyWhatChanged(t *testing.T) {
	static, err := config.Parse("", map[string]string{"node.id": "1", "log.retention.hours": "5"})
	if err != nil {
		t.Fatal(err)
	}
	rec := &settingsRecorder{}
	pub := NewTopicConfigPublisher(static, rec, slog.New(slog.DiscardHandler))
	var entries [][]metadata.Record
	entries = append(entries, metadata.BootstrapRecords("c", 21))
	entries = append(entries, append(topicRecords("a", 1), topicRecords("b", 2)...))
	entries = append(entries, []metadata.Record{configRecord(metadata.ConfigResourceTopic, "a", "retention.ms", "1000")})
	entries = append(entries, []metadata.Record{configRecord(metadata.ConfigResourceBroker, "", "log.retention.ms", "7000")})
	entries = append(entries, []metadata.Record{&metadata.RemoveTopicRecord{TopicID: kafka.UUID{0: 2, 15: 1}}})
	var steps []string
	loader := metadata.NewLoader(slog.New(slog.DiscardHandler), func(d *metadata.Delta, im *metadata.Image) {
		before := len(rec.pushes)
		pub.Publish(d, im)
		if len(rec.pushes) == before || len(rec.last()) == 0 {
			steps = append(steps, "-")
			return
		}
		steps = append(steps, fmt.Sprint(slices.Sorted(maps.Keys(rec.last()))))
	})
	for i, recs := range entries {
		if err := loader.Apply(int64(i), 1, metadata.EncodeRecords(recs)); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"-", "[a b]", "[a]", "[a b]", "-"}
	if fmt.Sprint(steps) != fmt.Sprint(want) {
		t.Fatalf("pushed per entry %v, want %v", steps, want)
	}
	if !slices.Equal(rec.forgotten, []string{"b"}) {
		t.Fatalf("forgotten %v, want [b]", rec.forgotten)
	}
	// b follows the broker default (static, then dynamic); a keeps its
	// own value over both.
	if got := rec.pushes[0]["b"].Log.RetentionMs.Hours(); got != 5 {
		t.Fatalf("b's retention %vh, want the static 5h", got)
	}
	if got := rec.pushes[2]["b"].Log.RetentionMs.Milliseconds(); got != 7000 {
		t.Fatalf("b's retention %dms after the dynamic default, want 7000", got)
	}
	if got := rec.pushes[2]["a"].Log.RetentionMs.Milliseconds(); got != 1000 {
		t.Fatalf("a's retention %dms, want its own 1000", got)
	}
	// A whole image (start-up, snapshot) resolves every topic.
	pub.Publish(nil, loader.Image())
	if got := slices.Sorted(maps.Keys(rec.last())); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("whole image pushed %v, want [a]", got)
	}
}
