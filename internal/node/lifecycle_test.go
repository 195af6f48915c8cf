package node

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/internal/broker"
	"github.com/sluice-io/sluice/internal/commitlog/logdir"
	"github.com/sluice-io/sluice/internal/commitlog/metafile"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/vfs"
)

func testConfig(t *testing.T, dir string, overrides map[string]string) *config.Config {
	t.Helper()
	kv := map[string]string{
		"log.dirs":  dir,
		"listeners": "PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0",
	}
	for k, v := range overrides {
		kv[k] = v
	}
	cfg, err := config.Parse("", kv)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestNewFormatsLocksAndCloses(t *testing.T) {
	dir := t.TempDir()
	n, err := New(testConfig(t, dir, nil), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := metafile.ReadMetaProperties(vfs.Default, filepath.Join(dir, metafile.MetaPropertiesFile))
	if err != nil || meta.ClusterID != n.ClusterID() || meta.NodeID != 1 {
		t.Fatalf("meta.properties %+v (%v), node cluster %s", meta, err, n.ClusterID())
	}
	if _, err := New(testConfig(t, dir, nil), nil, nil); err == nil || !strings.Contains(err.Error(), "in use by another process") {
		t.Fatalf("a second node on a locked dir: %v", err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	again, err := New(testConfig(t, dir, nil), nil, nil)
	if err != nil {
		t.Fatalf("reopen after Close: %v", err)
	}
	if again.ClusterID() != n.ClusterID() {
		t.Fatalf("cluster id changed from %s to %s", n.ClusterID(), again.ClusterID())
	}
	again.Close()
}

func TestNewRefusesForeignDirs(t *testing.T) {
	dir := t.TempDir()
	if err := logdir.Format(vfs.Default, []string{dir}, "AAAAAAAAAAAAAAAAAAAAAQ", 2, false); err != nil {
		t.Fatal(err)
	}
	if _, err := New(testConfig(t, dir, nil), nil, nil); err == nil || !strings.Contains(err.Error(), "node id 2 does not match node.id 1") {
		t.Fatalf("another node's dir: %v", err)
	}
	if err := logdir.Format(vfs.Default, []string{dir}, "AAAAAAAAAAAAAAAAAAAAAQ", 1, false); err == nil {
		t.Fatal("formatting a formatted dir succeeded")
	}
	if err := logdir.Format(vfs.Default, []string{t.TempDir()}, "not-a-uuid", 1, false); err == nil {
		t.Fatal("a malformed cluster id was accepted")
	}

	// Two dirs of different clusters.
	a, b := t.TempDir(), t.TempDir()
	if err := logdir.Format(vfs.Default, []string{a}, "AAAAAAAAAAAAAAAAAAAAAQ", 1, false); err != nil {
		t.Fatal(err)
	}
	if err := logdir.Format(vfs.Default, []string{b}, "AAAAAAAAAAAAAAAAAAAAAg", 1, false); err != nil {
		t.Fatal(err)
	}
	if _, err := New(testConfig(t, a, map[string]string{"log.dirs": a + "," + b}), nil, nil); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("log dirs of two clusters: %v", err)
	}
}

func TestOptionsMapping(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), map[string]string{"log.segment.bytes": "1048576", "log.retention.hours": "1"})
	topic, err := cfg.ResolveTopic(map[string]string{"cleanup.policy": "compact,delete", "message.timestamp.type": "LogAppendTime"})
	if err != nil {
		t.Fatal(err)
	}
	settings := broker.TopicSettings(topic)
	opts := settings.Log
	if opts.SegmentBytes != 1<<20 || opts.RetentionMs.Hours() != 1 || opts.FlushMs <= 0 {
		t.Fatalf("log options %+v", opts)
	}
	dp := settings.Data
	if !dp.Compact || !dp.Delete || dp.TimestampType != 1 || dp.MinInsyncReplicas != 1 {
		t.Fatalf("data-plane config %+v", dp)
	}
	mo := managerOptions(cfg, opts)
	if mo.RetentionCheckInterval.Minutes() != 5 || len(mo.Dirs) != 1 {
		t.Fatalf("manager options %+v", mo)
	}
	if _, err := os.Stat(mo.Dirs[0]); err != nil {
		t.Fatal(err)
	}
}
