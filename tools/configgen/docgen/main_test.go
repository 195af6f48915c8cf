package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCommittedDocMatches fails when docs/configuration.md's generated tables are not what
// docgen writes from the committed key table and enforced list (rerun
// go run ./tools/configgen/docgen).
func TestCommittedDocMatches(t *testing.T) {
	committed, err := os.ReadFile("../../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "configuration.md")
	if err := os.WriteFile(path, committed, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rewrite(path); err != nil {
		t.Fatal(err)
	}
	regenerated, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(regenerated) != string(committed) {
		t.Fatal("docs/configuration.md is out of date: run go run ./tools/configgen/docgen")
	}
}
