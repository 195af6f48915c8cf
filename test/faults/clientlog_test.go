package faults

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// clientLogLines is how much of a client's log a failed test prints.
const clientLogLines = 300

// clientLogger is a kgo logger at info level writing to a file of the
// test's temp dir; if the test fails, the file's last lines are printed,
// so a stall shows what the client saw (timeouts, metadata, retries).
//
// SLUICE_FAULTS_CLIENT_LOG_DIR keeps the whole logs, at debug level, in
// that directory instead.
func clientLogger(t *testing.T, name string) kgo.Opt {
	dir, level := t.TempDir(), kgo.LogLevelInfo
	if keep := os.Getenv("SLUICE_FAULTS_CLIENT_LOG_DIR"); keep != "" {
		dir, level = keep, kgo.LogLevelDebug
	}
	path := filepath.Join(dir, t.Name()+"-"+name+".log")
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
	prefix := func() string { return stamp() + " " }
	return kgo.WithLogger(kgo.BasicLogger(f, level, prefix))
}
