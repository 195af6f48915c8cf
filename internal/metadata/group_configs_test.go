package metadata

import (
	"log/slog"
	"reflect"
	"testing"
)

// A group's configs replay from ConfigRecords of type 32, survive a
// snapshot and a restore, and a deleted key leaves the image.
func TestGroupConfigsReplayAndSnapshot(t *testing.T) {
	s := func(v string) *string { return &v }
	log := []Record{
		&ClusterIDRecord{ClusterID: "c1"},
		&ConfigRecord{ResourceType: ConfigResourceGroup, ResourceName: "orders", Name: "share.auto.offset.reset", Value: s("earliest")},
		&ConfigRecord{ResourceType: ConfigResourceGroup, ResourceName: "orders", Name: "share.record.lock.duration.ms", Value: s("20000")},
		&ConfigRecord{ResourceType: ConfigResourceGroup, ResourceName: "orders", Name: "share.record.lock.duration.ms"},
		&ConfigRecord{ResourceType: ConfigResourceGroup, ResourceName: "gone", Name: "consumer.session.timeout.ms", Value: s("50000")},
		&ConfigRecord{ResourceType: ConfigResourceGroup, ResourceName: "gone", Name: "consumer.session.timeout.ms"},
		&ConfigRecord{ResourceType: ConfigResourceTopic, ResourceName: "orders", Name: "cleanup.policy", Value: s("compact")},
	}
	l := NewLoader(slog.New(slog.DiscardHandler))
	for i, rec := range log {
		if err := l.Apply(int64(i), 1, EncodeRecords([]Record{rec})); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	check := func(im *Image) {
		t.Helper()
		if got, want := im.GroupConfigs("orders"), map[string]string{"share.auto.offset.reset": "earliest"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("GroupConfigs(orders) = %v, want %v", got, want)
		}
		if got := im.GroupConfigs("gone"); len(got) != 0 {
			t.Fatalf("GroupConfigs(gone) = %v after its only key was deleted", got)
		}
		if got := im.ConfiguredGroups(); !reflect.DeepEqual(got, []string{"orders"}) {
			t.Fatalf("ConfiguredGroups = %v", got)
		}
		// A topic of the same name is another resource.
		if v, _ := im.Config(ConfigResource{Type: ConfigResourceTopic, Name: "orders"}, "share.auto.offset.reset"); v != "" {
			t.Fatal("group config leaked into the topic of the same name")
		}
	}
	check(l.Image())
	data := l.Snapshot()
	restored := NewLoader(slog.New(slog.DiscardHandler))
	if err := restored.Restore(l.Image().Offset(), l.Image().Epoch(), data); err != nil {
		t.Fatal(err)
	}
	check(restored.Image())
	if ConfigResourceGroup.String() != "GROUP" {
		t.Fatalf("String() = %q", ConfigResourceGroup.String())
	}
	// The record itself round-trips with the type code Kafka uses.
	rec, err := DecodeRecord(EncodeRecord(log[1]))
	if err != nil || !reflect.DeepEqual(rec, log[1]) {
		t.Fatalf("decoded %#v, %v", rec, err)
	}
	if rec.(*ConfigRecord).ResourceType != 32 {
		t.Fatal("not type 32")
	}
}
