package replication

import (
	"path/filepath"
	"testing"

	"github.com/sluice-io/sluice/internal/commitlog/checkpoint"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/vfs"
)

// TestHighWatermarkCheckpointRoundTrip: the hosted partitions' high
// watermarks are written in Kafka's format to the dir of their log, an
// online dir without partitions gets an empty file, and reading them back
// gives the same values (a missing file is empty).
func TestHighWatermarkCheckpointRoundTrip(t *testing.T) {
	fsys := vfs.NewMem()
	f := newFixture(t, fsys)
	f.produce(t, 1, AppendPartition{TP: tp("t", 0), Records: batch(t, 5, testStart.UnixMilli())})
	byDir := f.rm.HighWatermarksByDir()
	if len(byDir) != 1 {
		t.Fatalf("high watermarks by dir %v, want one dir", byDir)
	}
	var dir string
	for d, hws := range byDir {
		dir = d
		if hws[tp("t", 0)] != 5 || len(hws) != 3 {
			t.Fatalf("dir %s: %v, want t-0 at 5 among 3 partitions", d, hws)
		}
	}
	empty := "/other-dir"
	if err := fsys.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteHighWatermarkCheckpoints(fsys, []string{dir, empty}, byDir); err != nil {
		t.Fatal(err)
	}
	data, err := vfs.ReadFile(fsys, filepath.Join(dir, checkpoint.ReplicationFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := "0\n3\nc 0 0\nt 0 5\nt 1 0\n"; string(data) != want {
		t.Fatalf("replication-offset-checkpoint %q, want %q", data, want)
	}
	if data, _ := vfs.ReadFile(fsys, filepath.Join(empty, checkpoint.ReplicationFile)); string(data) != "0\n0\n" {
		t.Fatalf("empty dir's checkpoint %q", data)
	}
	got, err := ReadHighWatermarkCheckpoints(fsys, []string{dir, empty, "/missing"})
	if err != nil {
		t.Fatal(err)
	}
	if hw, ok := CheckpointedHighWatermarks(got).CheckpointedHighWatermark(tp("t", 0)); !ok || hw != 5 || len(got) != 3 {
		t.Fatalf("read back %v", got)
	}
}

// TestHighWatermarkCheckpointMalformed: a malformed file is reported and
// skipped; the other dirs' values are still read.
func TestHighWatermarkCheckpointMalformed(t *testing.T) {
	fsys := vfs.NewMem()
	for _, d := range []string{"/a", "/b"} {
		if err := fsys.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := vfs.WriteFileAtomic(fsys, "/a/"+checkpoint.ReplicationFile, []byte("0\n2\nx 0 1\n")); err != nil {
		t.Fatal(err)
	}
	good := map[string]map[kafka.TopicPartition]int64{"/b": {tp("y", 1): 7}}
	if err := WriteHighWatermarkCheckpoints(fsys, []string{"/b"}, good); err != nil {
		t.Fatal(err)
	}
	got, err := ReadHighWatermarkCheckpoints(fsys, []string{"/a", "/b"})
	if err == nil || got[tp("y", 1)] != 7 || len(got) != 1 {
		t.Fatalf("got %v, err %v; want y-1 at 7 and an error for /a", got, err)
	}
}
