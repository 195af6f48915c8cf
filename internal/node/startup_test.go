package node

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNewFailingHalfWayClosesWhatItBuilt: a build that fails after the
// broker's publisher exists (here the metadata log cannot be opened) is
// refused naming the cause (not a panic in Close), and leaves the dirs
// unlocked.
func TestNewFailingHalfWayClosesWhatItBuilt(t *testing.T) {
	dir := t.TempDir()
	metaLog := filepath.Join(dir, "__cluster_metadata-0")
	if err := os.WriteFile(metaLog, nil, 0o644); err != nil { // a file where the log's dir goes
		t.Fatal(err)
	}
	_, err := New(testConfig(t, dir, nil), nil, nil)
	if err == nil {
		t.Fatal("a node whose metadata log dir is a file was built")
	}
	if !strings.Contains(err.Error(), "not a directory") || strings.Contains(err.Error(), "create log dir "+metaLog) {
		t.Errorf("error %q: want the cause, the dir named once in a row", err)
	}
	if err := os.Remove(metaLog); err != nil {
		t.Fatal(err)
	}
	n, err := New(testConfig(t, dir, nil), nil, nil)
	if err != nil {
		t.Fatalf("the dir stayed locked or unusable after the failed build: %v", err)
	}
	n.Close()
}
