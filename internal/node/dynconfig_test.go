package node

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/metadata"
)

func dynRecord(resource, key string, value *string) metadata.Record {
	return &metadata.ConfigRecord{ResourceType: metadata.ConfigResourceBroker, ResourceName: resource, Name: key, Value: value}
}

func ptr(s string) *string { return &s }

// TestBrokerConfigsTellAppliersWhatChanged: the first delivery marks every
// key; then only a change of this broker's or the cluster default's
// records reaches the appliers, with the keys it changed and the layers
// resolved (per broker over cluster default over the file); another
// broker's records and a rewrite to the same value do not.
func TestBrokerConfigsTellAppliersWhatChanged(t *testing.T) {
	static, err := config.Parse("", map[string]string{"node.id": "1", "log.cleaner.threads": "2"})
	if err != nil {
		t.Fatal(err)
	}
	d := newBrokerConfigs(static, slog.New(slog.DiscardHandler))
	var steps []string
	d.register("record", []config.Key{config.LogCleanerThreads, config.MaxConnections}, func(ch brokerConfigChange) {
		keys := "all"
		if ch.changed != nil {
			keys = strings.Join(slices.Sorted(maps.Keys(ch.changed)), ",")
		}
		steps = append(steps, fmt.Sprintf("%s threads=%d", keys, ch.cfg.Int(config.LogCleanerThreads)))
	})
	entries := [][]metadata.Record{
		metadata.BootstrapRecords("c", 21),
		{dynRecord("", "log.cleaner.threads", ptr("3"))},
		{dynRecord("2", "log.cleaner.threads", ptr("8"))},
		{dynRecord("1", "log.cleaner.threads", ptr("4"))},
		{dynRecord("1", "log.cleaner.threads", ptr("4"))},
		{dynRecord("1", "log.cleaner.threads", nil)},
		{dynRecord("", "log.cleaner.threads", nil), dynRecord("", "max.connections", ptr("5"))},
	}
	loader := metadata.NewLoader(slog.New(slog.DiscardHandler), d.publish)
	for i, recs := range entries {
		if err := loader.Apply(int64(i), 1, metadata.EncodeRecords(recs)); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"all threads=2",
		"log.cleaner.threads threads=3",
		"log.cleaner.threads threads=4",
		"log.cleaner.threads threads=3",
		"log.cleaner.threads,max.connections threads=2",
	}
	if !slices.Equal(steps, want) {
		t.Fatalf("appliers were told\n%s\nwant\n%s", strings.Join(steps, "\n"), strings.Join(want, "\n"))
	}
	if got := d.current.Load().Int(config.MaxConnections); got != 5 {
		t.Fatalf("current max.connections = %d, want 5", got)
	}
}
