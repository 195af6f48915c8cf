package api_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestCompatibilityDocMatchesHandlers regenerates the API table of
// docs/compatibility.md from this package's handlers and the pinned release
// (tools/compatgen -check, which builds the table in memory and diffs it with
// the committed one) and fails when they differ, so the doc never claims a
// version range Sluice does not advertise. The generator runs as a
// subprocess because internal packages must not import tools/ (archtest).
func TestCompatibilityDocMatchesHandlers(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to run tools/compatgen: %v", err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goTool, "run", "./tools/compatgen", "-check")
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("docs/compatibility.md's API table differs from the handlers, or cannot be generated; run `go run ./tools/compatgen` (%v):\n%s", err, out.String())
	}
}
