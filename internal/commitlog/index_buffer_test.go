package commitlog

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/internal/records"

	"github.com/sluice-io/sluice/internal/vfs"
)

// indexFiles returns the contents of every .index and .timeindex file of dir.
func indexFiles(t *testing.T, fsys vfs.FS, dir string) map[string][]byte {
	t.Helper()
	names, err := fsys.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, n := range names {
		if !strings.HasSuffix(n, indexSuffix) && !strings.HasSuffix(n, timeIndexSuffix) {
			continue
		}
		data, err := vfs.ReadFile(fsys, dir+"/"+n)
		if err != nil {
			t.Fatal(err)
		}
		out[n] = data
	}
	return out
}

// TestBufferedIndexEntriesAfterKill appends across several rolls, flushes
// part way, then drops the log without closing it (kill -9: what was
// written survives, the index entries still in memory do not). The reopened
// log must rebuild them from the recovery point: every offset reads back,
// and after a clean close its index files equal those of a log that was
// never killed.
func TestBufferedIndexEntriesAfterKill(t *testing.T) {
	opts := testOptions()
	write := func(env *testEnv, crash func(l *Log) StartState) {
		l := env.open(opts, StartState{})
		for i := 0; i < 40; i++ {
			if _, err := l.Append(makeBatch(batchSpec{records: 3, valueSize: 90, timestamp: testStart.UnixMilli() + int64(i)}), 0); err != nil {
				t.Fatal(err)
			}
			if i == 25 {
				if err := l.Flush(); err != nil {
					t.Fatal(err)
				}
			}
		}
		st := crash(l)
		l = env.open(opts, st)
		for off := int64(0); off < l.LogEndOffset(); off++ {
			res, err := l.Read(off, 1, l.LogEndOffset(), true)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := res.Bytes()
			h, err := records.ParseHeader(data)
			if err != nil || h.BaseOffset != off/3*3 {
				t.Fatalf("read %d after restart: header %+v %v", off, h, err)
			}
		}
		if l.LogEndOffset() != 120 {
			t.Fatalf("log end offset %d after restart, want 120", l.LogEndOffset())
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	clean := newMemEnv(t)
	write(clean, func(l *Log) StartState {
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		return StartState{CleanShutdown: true}
	})
	killed := newMemEnv(t)
	write(killed, func(l *Log) StartState {
		st := StartState{RecoveryPoint: l.RecoveryPoint()}
		if st.RecoveryPoint == 0 || st.RecoveryPoint >= l.LogEndOffset() {
			t.Fatalf("recovery point %d of %d: the test needs an unflushed tail", st.RecoveryPoint, l.LogEndOffset())
		}
		return st
	})
	want, got := indexFiles(t, clean.fs, clean.dir), indexFiles(t, killed.fs, killed.dir)
	if len(want) == 0 || len(want) != len(got) {
		t.Fatalf("index files: %d after a clean stop, %d after the kill", len(want), len(got))
	}
	for name, w := range want {
		if !bytes.Equal(w, got[name]) {
			t.Errorf("%s differs after the kill: %d bytes, want %d", name, len(got[name]), len(w))
		}
	}
}
