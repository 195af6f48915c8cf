package integration

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func runSluice(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	return exec.Command(binaryPath, args...).CombinedOutput()
}

// TestStorageFormat formats a log dir as kafka-storage does and checks that
// the server refuses a dir formatted for another node.
func TestStorageFormat(t *testing.T) {
	out, err := runSluice(t, "storage", "random-uuid")
	if err != nil {
		t.Fatalf("random-uuid: %v\n%s", err, out)
	}
	clusterID := strings.TrimSpace(string(out))
	if len(clusterID) != 22 {
		t.Fatalf("random-uuid printed %q", clusterID)
	}
	dataDir := t.TempDir()
	props := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(props, []byte("log.dirs="+dataDir+"\nnode.id=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := runSluice(t, "storage", "format", "--cluster-id", clusterID, "--config", props); err != nil {
		t.Fatalf("format: %v\n%s", err, out)
	}
	meta, err := os.ReadFile(filepath.Join(dataDir, "meta.properties"))
	if err != nil || !bytes.Contains(meta, []byte("cluster.id="+clusterID)) {
		t.Fatalf("meta.properties: %v\n%s", err, meta)
	}
	if out, err := runSluice(t, "storage", "format", "--cluster-id", clusterID, "--config", props); err == nil {
		t.Fatalf("formatting twice succeeded:\n%s", out)
	}
	if out, err := runSluice(t, "storage", "format", "--cluster-id", clusterID, "--config", props, "--ignore-formatted"); err != nil {
		t.Fatalf("format --ignore-formatted: %v\n%s", err, out)
	}

	// The same dir under another node id: start-up stops and says why.
	out, err = runSluice(t, "server", "--config", props, "--override", "node.id=2",
		"--override", "controller.quorum.voters=2@127.0.0.1:9093")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !bytes.Contains(out, []byte("node id 1 does not match node.id 2")) {
		t.Fatalf("server on another node's dir: %v\n%s", err, out)
	}
}
