package quorum

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/vfs"
)

func entry(index, term uint64, data string) *raftpb.Entry {
	e := &raftpb.Entry{Index: proto.Uint64(index), Term: proto.Uint64(term), Type: raftpb.EntryNormal.Enum()}
	if data != "" {
		e.Data = []byte(data)
	}
	return e
}

func describe(entries []*raftpb.Entry) string {
	var parts []string
	for _, e := range entries {
		parts = append(parts, fmt.Sprintf("%d/%d:%s", e.GetIndex(), e.GetTerm(), e.GetData()))
	}
	return strings.Join(parts, " ")
}

func TestLogEntryStoreTruncatesAndReopens(t *testing.T) {
	dir := t.TempDir()
	logger := slog.New(slog.DiscardHandler)
	open := func() *LogEntryStore {
		s, err := OpenLogEntryStore(vfs.Default, dir, clock.Real{}, logger)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	if err := s.Append([]*raftpb.Entry{entry(1, 1, ""), entry(2, 1, "a"), entry(3, 1, "b"), entry(4, 2, "c"), entry(5, 2, "d")}); err != nil {
		t.Fatal(err)
	}
	// A new leader overwrites the suffix from index 3.
	if err := s.Append([]*raftpb.Entry{entry(3, 3, "x"), entry(4, 3, "y")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Append([]*raftpb.Entry{entry(9, 3, "gap")}); err == nil {
		t.Fatal("append after a gap accepted")
	}
	want := "1/1: 2/1:a 3/3:x 4/3:y"
	got, err := s.Load()
	if err != nil || describe(got) != want {
		t.Fatalf("Load = %q, %v; want %q", describe(got), err, want)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open()
	defer s.Close()
	got, err = s.Load()
	if err != nil || describe(got) != want {
		t.Fatalf("after reopen Load = %q, %v; want %q", describe(got), err, want)
	}
	// The segment is Kafka's format: batch base offset = index-1, epoch = term.
	seg, err := os.ReadFile(filepath.Join(dir, "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	var epochs []string
	if _, err := records.Batches(seg, func(h records.Header, _ []byte) error {
		epochs = append(epochs, fmt.Sprintf("%d@%d", h.BaseOffset, h.PartitionLeaderEpoch))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(epochs, " ") != "0@1 1@1 2@3 3@3" {
		t.Fatalf("segment batches %v", epochs)
	}
}

func TestMemoryEntryStoreMatchesLogStore(t *testing.T) {
	s := NewMemoryEntryStore()
	for _, batch := range [][]*raftpb.Entry{
		{entry(1, 1, "a"), entry(2, 1, "b")},
		{entry(2, 2, "c")},
		{entry(3, 2, "d")},
	} {
		if err := s.Append(batch); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := s.Load(); describe(got) != "1/1:a 2/2:c 3/2:d" {
		t.Fatalf("Load = %q", describe(got))
	}
}

func TestQuorumStateFile(t *testing.T) {
	dir := t.TempDir()
	hs, err := readHardState(vfs.Default, dir)
	if err != nil || hs.GetTerm() != 0 || hs.GetCommit() != 0 {
		t.Fatalf("missing file: %v %v", hs, err)
	}
	want := &raftpb.HardState{Term: proto.Uint64(4), Vote: proto.Uint64(2), Commit: proto.Uint64(17)}
	if err := writeHardState(vfs.Default, dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := readHardState(vfs.Default, dir)
	if err != nil || !proto.Equal(got, want) {
		t.Fatalf("read back %v, %v", got, err)
	}
	for _, bad := range []string{"{", `{"term":1,"data_version":9}`} {
		if err := os.WriteFile(filepath.Join(dir, QuorumStateFile), []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readHardState(vfs.Default, dir); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// A commit index beyond the stored entries means lost entries: refuse to start.
	if err := writeHardState(vfs.Default, dir, want); err != nil {
		t.Fatal(err)
	}
	_, err = New(Options{NodeID: 0, Voters: []int32{0}, FS: vfs.Default, Dir: dir, Store: NewMemoryEntryStore(), Apply: func(Committed) error { return nil }})
	if err == nil {
		t.Fatal("driver started with commit beyond its log")
	}
}

func FuzzBatchToEntry(f *testing.F) {
	s := &LogEntryStore{clk: clock.Real{}}
	for _, e := range []*raftpb.Entry{entry(1, 1, ""), entry(7, 3, "payload")} {
		b, err := s.entryBatch(e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := records.ParseHeader(b)
		if err != nil || h.Size() > int64(len(b)) {
			return
		}
		e, err := batchToEntry(h, b[:h.Size()])
		if err != nil {
			return
		}
		again, err := s.entryBatch(e)
		if err != nil {
			return
		}
		h2, err := records.ParseHeader(again)
		if err != nil {
			t.Fatal(err)
		}
		e2, err := batchToEntry(h2, again)
		if err != nil || !proto.Equal(e, e2) {
			t.Fatalf("re-encoded entry differs: %v vs %v (%v)", e, e2, err)
		}
	})
}
