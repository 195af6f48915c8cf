package commitlog

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/internal/vfs"
)

func TestReplaceSegmentsAbortsWhenSegmentsChanged(t *testing.T) {
	e := newMemEnv(t)
	l := e.open(testOptions(), StartState{})
	defer l.Close()
	for range 3 {
		if _, err := l.Append(makeBatch(batchSpec{records: 5, valueSize: 10, timestamp: testStart.UnixMilli()}), 0); err != nil {
			t.Fatal(err)
		}
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
	}
	segs := l.Segments()
	c, err := l.BeginCleanedSegment(segs[0].BaseOffset, segs[0].BaseOffset+1)
	if err != nil {
		t.Fatal(err)
	}
	res, err := l.Read(0, 1<<20, segs[0].NextOffset, true)
	if err != nil {
		t.Fatal(err)
	}
	data, err := res.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Append(data); err != nil {
		t.Fatal(err)
	}
	if err := c.Append(data); err == nil {
		t.Fatal("appending offsets again was accepted")
	}
	if err := l.IncrementLogStartOffset(segs[1].BaseOffset); err != nil {
		t.Fatal(err)
	}
	if err := l.ReplaceSegments(c); !errors.Is(err, ErrCleaningAborted) {
		t.Fatalf("replace after the segment was deleted: %v, want ErrCleaningAborted", err)
	}
	if l.Offline() {
		t.Fatal("an aborted clean took the log offline")
	}
	names, err := e.fs.List(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasSuffix(n, cleanedSuffix) || strings.HasSuffix(n, swapSuffix) {
			t.Fatalf("leftover %s: %v", n, names)
		}
	}
}

func TestOpenRemovesUncommittedSwapFiles(t *testing.T) {
	e := newMemEnv(t)
	l := e.open(testOptions(), StartState{})
	if _, err := l.Append(makeBatch(batchSpec{records: 5, valueSize: 10, timestamp: testStart.UnixMilli()}), 0); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// An index renamed .swap before its .log: the swap never committed.
	stray := e.dir + "/" + segmentFileName(0, indexSuffix) + swapSuffix
	if err := vfs.WriteFileAtomic(e.fs, stray, make([]byte, 16)); err != nil {
		t.Fatal(err)
	}
	l = e.open(testOptions(), StartState{CleanShutdown: true})
	defer l.Close()
	if _, err := e.fs.Stat(stray); !vfs.IsNotExist(err) {
		t.Fatalf("stray %s survived Open: %v", stray, err)
	}
	if l.LogEndOffset() != 5 {
		t.Fatalf("log end offset %d, want 5", l.LogEndOffset())
	}
}
