package commitlog

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/vfs"
)

// ddState is the state of one datadriven file: a log on a MemFS with a
// manual clock.
type ddState struct {
	fs   *vfs.MemFS
	clk  *clock.Manual
	dir  string
	opts Options
	log  *Log
}

// TestDataDriven runs the golden files under testdata/log. Commands:
//
//	open [clean] [recovery-point=N] [log-start=N]   open (or reopen) the log
//	options [segment-bytes=N] [index-interval=N] [retention-ms=N] [retention-bytes=N] [segment-ms=N] [index-bytes=N]
//	append [records=N] [size=N] [ts=N] [count=N] [epoch=N]
//	follower-append base=N [records=N] [epoch=N]
//	read offset=N [max-bytes=N] [max-offset=N] [min-one]
//	segments | ls | dump file=NAME
//	truncate offset=N | truncate-fully offset=N | delete-records offset=N
//	retention | remove-deleted | advance ms=N | flush | roll | close | crash
//	chop file=NAME bytes=N | flip file=NAME pos=N | rm file=NAME
//	offset-for-ts ts=N | max-ts | epoch-end epoch=N
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata/log", func(t *testing.T, path string) {
		st := &ddState{fs: newDurableMem(t), clk: clock.NewManual(testStart), dir: "/data/t-0", opts: testOptions()}
		defer func() {
			if st.log != nil {
				st.log.Close()
			}
		}()
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			out, err := st.run(t, td)
			if err != nil {
				return fmt.Sprintf("error: %v\n", err)
			}
			return out
		})
	})
}

func (st *ddState) intArg(t *testing.T, td *datadriven.TestData, key string, def int64) int64 {
	v := def
	td.MaybeScanArgs(t, key, &v)
	return v
}

func (st *ddState) run(t *testing.T, td *datadriven.TestData) (string, error) {
	var b strings.Builder
	switch td.Cmd {
	case "options":
		o := &st.opts
		o.SegmentBytes = st.intArg(t, td, "segment-bytes", o.SegmentBytes)
		o.IndexIntervalBytes = int(st.intArg(t, td, "index-interval", int64(o.IndexIntervalBytes)))
		o.SegmentIndexBytes = int(st.intArg(t, td, "index-bytes", int64(o.SegmentIndexBytes)))
		o.RetentionBytes = st.intArg(t, td, "retention-bytes", o.RetentionBytes)
		o.RetentionMs = time.Duration(st.intArg(t, td, "retention-ms", o.RetentionMs.Milliseconds())) * time.Millisecond
		o.SegmentMs = time.Duration(st.intArg(t, td, "segment-ms", o.SegmentMs.Milliseconds())) * time.Millisecond
		if st.log != nil {
			st.log.SetOptions(*o)
		}
		return "ok\n", nil
	case "open":
		if st.log != nil {
			return "", fmt.Errorf("already open")
		}
		s := StartState{CleanShutdown: td.HasArg("clean"),
			RecoveryPoint:  st.intArg(t, td, "recovery-point", 0),
			LogStartOffset: st.intArg(t, td, "log-start", 0)}
		l, err := Open(st.fs, st.dir, testTP, st.opts, st.clk, s, slog.New(slog.DiscardHandler))
		if err != nil {
			return "", err
		}
		st.log = l
		return st.describe(), nil
	case "append", "follower-append":
		n := int(st.intArg(t, td, "records", 1))
		size := int(st.intArg(t, td, "size", 10))
		ts := st.intArg(t, td, "ts", st.clk.Now().UnixMilli()-testStart.UnixMilli())
		count := int(st.intArg(t, td, "count", 1))
		epoch := int32(st.intArg(t, td, "epoch", 0))
		for i := 0; i < count; i++ {
			batch := makeBatch(batchSpec{records: n, valueSize: size, timestamp: testStart.UnixMilli() + ts})
			var info AppendInfo
			var err error
			if td.Cmd == "append" {
				info, err = st.log.Append(batch, epoch)
			} else {
				records.SetBaseOffset(batch, st.intArg(t, td, "base", 0)+int64(i*n))
				records.SetPartitionLeaderEpoch(batch, epoch)
				info, err = st.log.AppendAsFollower(batch)
			}
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "offsets %d-%d\n", info.FirstOffset, info.LastOffset)
		}
		return b.String(), nil
	case "read":
		off := st.intArg(t, td, "offset", 0)
		maxBytes := int32(st.intArg(t, td, "max-bytes", 1<<20))
		maxOff := st.intArg(t, td, "max-offset", st.log.LogEndOffset())
		res, err := st.log.Read(off, maxBytes, maxOff, td.HasArg("min-one"))
		if err != nil {
			return "", err
		}
		data, err := res.Bytes()
		if err != nil {
			return "", err
		}
		if len(data) == 0 {
			return "empty\n", nil
		}
		if _, err := records.Batches(data, func(h records.Header, batch []byte) error {
			fmt.Fprintf(&b, "batch %d-%d size %d epoch %d\n", h.BaseOffset, h.LastOffset(), len(batch), h.PartitionLeaderEpoch)
			return records.CheckCRC(batch)
		}); err != nil {
			return "", err
		}
		return b.String(), nil
	case "segments":
		return st.describe(), nil
	case "ls":
		names, err := st.fs.List(st.dir)
		if err != nil {
			return "", err
		}
		sort.Strings(names)
		for _, n := range names {
			info, err := st.fs.Stat(filepath.Join(st.dir, n))
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "%s %d\n", n, info.Size())
		}
		return b.String(), nil
	case "dump":
		var name string
		td.ScanArgs(t, "file", &name)
		if err := DumpSegment(st.fs, filepath.Join(st.dir, name), &b); err != nil {
			return "", err
		}
		return b.String(), nil
	case "truncate":
		if err := st.log.TruncateTo(st.intArg(t, td, "offset", 0)); err != nil {
			return "", err
		}
		return st.describe(), nil
	case "truncate-fully":
		if err := st.log.TruncateFullyAndStartAt(st.intArg(t, td, "offset", 0)); err != nil {
			return "", err
		}
		return st.describe(), nil
	case "delete-records":
		if err := st.log.IncrementLogStartOffset(st.intArg(t, td, "offset", 0)); err != nil {
			return "", err
		}
		return st.describe(), nil
	case "retention":
		n, err := st.log.ApplyRetention(st.clk.Now())
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("deleted %d\n%s", n, st.describe()), nil
	case "remove-deleted":
		return "ok\n", st.log.RemoveDeletedSegments(st.clk.Now())
	case "advance":
		st.clk.Advance(time.Duration(st.intArg(t, td, "ms", 0)) * time.Millisecond)
		return "ok\n", nil
	case "flush":
		if err := st.log.Flush(); err != nil {
			return "", err
		}
		return fmt.Sprintf("recovery point %d\n", st.log.RecoveryPoint()), nil
	case "roll":
		if err := st.log.Roll(); err != nil {
			return "", err
		}
		return st.describe(), nil
	case "close":
		err := st.log.Close()
		st.log = nil
		return "ok\n", err
	case "crash":
		st.fs.Crash()
		st.log = nil
		return "ok\n", nil
	case "rm":
		var name string
		td.ScanArgs(t, "file", &name)
		return "ok\n", st.fs.Remove(filepath.Join(st.dir, name))
	case "chop", "flip":
		var name string
		td.ScanArgs(t, "file", &name)
		f, err := st.fs.Open(filepath.Join(st.dir, name))
		if err != nil {
			return "", err
		}
		f.Close()
		f, err = st.fs.OpenReadWrite(filepath.Join(st.dir, name))
		if err != nil {
			return "", err
		}
		defer f.Close()
		if td.Cmd == "chop" {
			size, _ := f.Size()
			return "ok\n", f.Truncate(size - st.intArg(t, td, "bytes", 0))
		}
		pos := st.intArg(t, td, "pos", 0)
		one := make([]byte, 1)
		if _, err := f.ReadAt(one, pos); err != nil {
			return "", err
		}
		one[0] ^= 0xff
		_, err = f.WriteAt(one, pos)
		return "ok\n", err
	case "offset-for-ts":
		to, ok, err := st.log.OffsetForTimestamp(testStart.UnixMilli() + st.intArg(t, td, "ts", 0))
		if err != nil || !ok {
			return fmt.Sprintf("found %v\n", ok), err
		}
		return fmt.Sprintf("offset %d ts +%d\n", to.Offset, to.Timestamp-testStart.UnixMilli()), nil
	case "epoch-end":
		e, off := st.log.EndOffsetForEpoch(int32(st.intArg(t, td, "epoch", 0)))
		return fmt.Sprintf("epoch %d end offset %d\n", e, off), nil
	case "max-ts":
		to, ok, err := st.log.LastTimestampOffset()
		if err != nil || !ok {
			return fmt.Sprintf("found %v\n", ok), err
		}
		return fmt.Sprintf("offset %d ts +%d\n", to.Offset, to.Timestamp-testStart.UnixMilli()), nil
	}
	return "", fmt.Errorf("unknown command %q", td.Cmd)
}

// describe prints the log's offsets and segments; timestamps are relative
// to testStart so the golden files stay readable.
func (st *ddState) describe() string {
	var b strings.Builder
	l := st.log
	fmt.Fprintf(&b, "start %d end %d recovery %d\n", l.LogStartOffset(), l.LogEndOffset(), l.RecoveryPoint())
	for _, s := range l.Segments() {
		ts := "none"
		if s.MaxTimestamp >= 0 {
			ts = fmt.Sprintf("+%d", s.MaxTimestamp-testStart.UnixMilli())
		}
		fmt.Fprintf(&b, "segment %d-%d size %d maxts %s\n", s.BaseOffset, s.NextOffset, s.Size, ts)
	}
	return b.String()
}
