// Package testbin builds the real sluice binary and runs it as a child
// process for tests that must exercise the program end to end: build once
// per test process, free ports, start `sluice server`, wait until it
// answers ApiVersions, stop it with SIGTERM or SIGKILL by its process id.
// It imports nothing of Sluice's so any package's tests may use it.
package testbin

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// mainPackage is the import path of the sluice command.
const mainPackage = "github.com/sluice-io/sluice/cmd/sluice"

// buildOnce caches one build per test process: every test of a package
// shares the binary, and the go build cache makes the later packages' builds
// a link only.
var buildOnce = sync.OnceValues(build)

// BuildOnce builds ./cmd/sluice the first time it is called in this process
// and returns the binary's path; later calls return the same path or error.
// For TestMain, which has no testing.TB.
func BuildOnce() (string, error) { return buildOnce() }

// RunTests is a TestMain body: it builds the binary, stores its path in
// *binary and runs the tests; a build failure fails the whole test binary.
// Use as os.Exit(testbin.RunTests(m, &binaryPath)).
func RunTests(m *testing.M, binary *string) int {
	bin, err := BuildOnce()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	*binary = bin
	return m.Run()
}

// Build is BuildOnce that fails the test when the binary does not build.
func Build(tb testing.TB) string {
	tb.Helper()
	bin, err := BuildOnce()
	if err != nil {
		tb.Fatal(err)
	}
	return bin
}

// build writes the binary to a private name and renames it over one fixed
// path per user and checkout: the rename is atomic, so a process of another
// test package running the previous binary keeps its file, and no temp dir
// is left behind per test process. The checkout (the module root) is part
// of the path, so tests of two worktrees never run each other's binary.
func build() (string, error) {
	root, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("testbin: module root: %w", err)
	}
	sum := crc32.ChecksumIEEE(bytes.TrimSpace(root))
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("sluice-testbin-%d-%08x", os.Getuid(), sum))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("testbin: binary dir: %w", err)
	}
	final := filepath.Join(dir, "sluice")
	private := filepath.Join(dir, "sluice-"+strconv.Itoa(os.Getpid()))
	out, err := exec.Command("go", "build", "-o", private, mainPackage).CombinedOutput()
	if err != nil {
		os.Remove(private)
		return "", fmt.Errorf("testbin: build %s: %w\n%s", mainPackage, err, out)
	}
	if err := os.Rename(private, final); err != nil {
		os.Remove(private)
		return "", fmt.Errorf("testbin: install built binary: %w", err)
	}
	return final, nil
}
