package epoch

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/sluice-io/sluice/internal/commitlog/checkpoint"
	"github.com/sluice-io/sluice/internal/vfs"
)

const testPath = "/p/" + FileName

// TestCacheDatadriven runs the state-machine scripts in testdata/cache/. Commands:
//
//	new                                   fresh file system and empty cache
//	assign epoch=E offset=O               Assign, then print the entries
//	truncate-end offset=O                 TruncateFromEnd, then print
//	truncate-start offset=O               TruncateFromStart, then print
//	clear                                 Clear, then print
//	end-offset-for epoch=E leo=L          EndOffsetFor
//	epoch-for-offset offset=O             EpochForOffset
//	latest                                LatestEpoch
//	file                                  the checkpoint file's content
//	write-file                            replace the file with the input
//	reopen [crash]                        Open again (after a simulated crash)
func TestCacheDatadriven(t *testing.T) {
	datadriven.Walk(t, "testdata/cache", func(t *testing.T, path string) {
		var m *vfs.MemFS
		var c *Cache
		reset := func() {
			m = vfs.NewMem()
			if err := m.MkdirAll("/p", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := m.SyncDir("/"); err != nil {
				t.Fatal(err)
			}
			var err error
			if c, err = Open(m, testPath); err != nil {
				t.Fatal(err)
			}
		}
		reset()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var epoch int32
			var offset, leo int64
			switch d.Cmd {
			case "new":
				reset()
				return show(c)
			case "assign":
				d.ScanArgs(t, "epoch", &epoch)
				d.ScanArgs(t, "offset", &offset)
				return showErr(c, c.Assign(epoch, offset))
			case "truncate-end":
				d.ScanArgs(t, "offset", &offset)
				return showErr(c, c.TruncateFromEnd(offset))
			case "truncate-start":
				d.ScanArgs(t, "offset", &offset)
				return showErr(c, c.TruncateFromStart(offset))
			case "clear":
				return showErr(c, c.Clear())
			case "end-offset-for":
				d.ScanArgs(t, "epoch", &epoch)
				d.ScanArgs(t, "leo", &leo)
				e, o := c.EndOffsetFor(epoch, leo)
				return fmt.Sprintf("epoch=%d end=%d\n", e, o)
			case "epoch-for-offset":
				d.ScanArgs(t, "offset", &offset)
				e, ok := c.EpochForOffset(offset)
				if !ok {
					return "none\n"
				}
				return fmt.Sprintf("epoch=%d\n", e)
			case "latest":
				e, ok := c.LatestEpoch()
				if !ok {
					return "none\n"
				}
				return fmt.Sprintf("epoch=%d\n", e)
			case "file":
				data, err := vfs.ReadFile(m, testPath)
				if err != nil {
					return fmt.Sprintf("error: %v\n", err)
				}
				return string(data)
			case "write-file":
				if err := vfs.WriteFileAtomic(m, testPath, []byte(d.Input+"\n")); err != nil {
					t.Fatal(err)
				}
				return ""
			case "reopen":
				if d.HasArg("crash") {
					m.Crash()
				}
				reopened, err := Open(m, testPath)
				if err != nil {
					return fmt.Sprintf("error: %v\n", err)
				}
				c = reopened
				return show(c)
			}
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		})
	})
}

func show(c *Cache) string {
	entries := c.Entries()
	if len(entries) == 0 {
		return "empty\n"
	}
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&b, "%d@%d\n", e.Epoch, e.StartOffset)
	}
	return b.String()
}

func showErr(c *Cache, err error) string {
	if err != nil {
		return fmt.Sprintf("error: %v\n", err)
	}
	return show(c)
}

func TestOpenMalformedFileNamesFileAndLine(t *testing.T) {
	m := vfs.NewMem()
	if err := vfs.WriteFileAtomic(m, "/"+FileName, []byte("0\n1\n3 abc\n")); err != nil {
		t.Fatal(err)
	}
	_, err := Open(m, "/"+FileName)
	if !errors.Is(err, checkpoint.ErrMalformed) || !strings.Contains(err.Error(), "/"+FileName+": line 3") {
		t.Fatalf("Open = %v", err)
	}
}

func TestWriteErrorIsReported(t *testing.T) {
	m := vfs.NewMem()
	e := vfs.NewErrorFS(m, vfs.NewWriteBudget(0))
	c, err := Open(e, "/"+FileName)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Assign(1, 0); err == nil || !strings.Contains(err.Error(), FileName) {
		t.Fatalf("Assign on a full disk = %v, want an error naming the file", err)
	}
}

// TestTruncateFromStartAtFirstEntryWritesNothing: a log opened with its start at its first
// epoch's offset (every log's open calls TruncateFromStart) leaves the file alone, so a
// start with 10,000 logs pays no checkpoint rewrite per log; a real truncation still writes.
func TestTruncateFromStartAtFirstEntryWritesNothing(t *testing.T) {
	m := vfs.NewMem()
	c, err := Open(m, "/"+FileName)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Assign(3, 100); err != nil {
		t.Fatal(err)
	}
	if err := c.Assign(4, 200); err != nil {
		t.Fatal(err)
	}
	full := vfs.NewErrorFS(m, vfs.NewWriteBudget(0))
	c, err = Open(full, "/"+FileName)
	if err != nil {
		t.Fatal(err)
	}
	for _, start := range []int64{50, 100} {
		if err := c.TruncateFromStart(start); err != nil {
			t.Fatalf("TruncateFromStart(%d) with nothing to change wrote: %v", start, err)
		}
	}
	if err := c.TruncateFromStart(150); err == nil {
		t.Fatal("TruncateFromStart(150) changes the first entry but wrote nothing")
	}
}

func TestCacheConcurrentUse(t *testing.T) {
	c, err := Open(vfs.NewMem(), "/"+FileName)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range int32(100) {
			if err := c.Assign(i, int64(i)*10); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for range 2 {
		wg.Go(func() {
			for i := range int64(200) {
				c.EndOffsetFor(int32(i%50), 1000)
				c.EpochForOffset(i)
				c.LatestEpoch()
				for j, e := range c.Entries() {
					if e.Epoch != int32(j) {
						t.Errorf("entries out of order: %v", c.Entries())
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if latest, _ := c.LatestEpoch(); latest != 99 {
		t.Fatalf("latest %d", latest)
	}
}
