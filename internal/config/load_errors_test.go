package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file that cannot be read or parsed is named once, with one prefix (it used to read
// "config: reading X: open X: ...", under the caller's own "configuration:").
func TestLoadErrorNamesTheFileOnce(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.properties")
	_, err := Load(missing, nil)
	if err == nil {
		t.Fatal("missing file accepted")
	}
	if want := "config file " + missing + ": no such file or directory"; err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%v: not fs.ErrNotExist", err)
	}

	bad := filepath.Join(t.TempDir(), "bad.properties")
	if err := os.WriteFile(bad, []byte("a=\\u12\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(bad, nil)
	if err == nil {
		t.Fatal("bad escape accepted")
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "config file "+bad+": parsing properties: ") || strings.Count(msg, bad) != 1 {
		t.Errorf("got %q", msg)
	}
}
