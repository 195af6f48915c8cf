package faults

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// clientLogLines is how much of a client's log a failed test prints.
const clientLogLines = 150

// clientLogger is a kgo logger at info level writing to a file of the
// test's temp dir; if the test fails, the file's last lines are printed,
// so a stall shows what the client saw (timeouts, metadata, retries).
func clientLogger(t *testing.T, name string) kgo.Opt {
	path := filepath.Join(t.TempDir(), name+".log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.Close()
		if !t.Failed() {
			return
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Logf("%s client log: %v", name, err)
			return
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > clientLogLines {
			lines = lines[len(lines)-clientLogLines:]
		}
		t.Logf("%s client log (last %d lines):\n%s", name, len(lines), strings.Join(lines, "\n"))
	})
	return kgo.WithLogger(kgo.BasicLogger(f, kgo.LogLevelInfo, nil))
}
