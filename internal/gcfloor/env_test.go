package gcfloor

import (
	"os"
	"testing"
)

// unsetGOGC removes GOGC from the environment; t.Setenv beforehand restores
// it after the test.
func unsetGOGC(t *testing.T) {
	t.Helper()
	if err := os.Unsetenv("GOGC"); err != nil {
		t.Fatal(err)
	}
}
