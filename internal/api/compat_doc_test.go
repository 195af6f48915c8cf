package api_test

import (
	"os"
	"path/filepath"
	"testing"

	"sluice/internal/api"
	"sluice/tools/compatgen/compattable"
)

// TestCompatibilityDocMatchesHandlers regenerates the API table of
// docs/compatibility.md from this package's handlers and the pinned release
// and fails when the committed table differs, so the doc never claims a
// version range Sluice does not advertise.
func TestCompatibilityDocMatchesHandlers(t *testing.T) {
	root, err := compattable.ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	generated, err := compattable.Generate(root)
	if err != nil {
		t.Fatalf("generating the API table: %v", err)
	}
	doc, err := os.ReadFile(filepath.Join(root, compattable.DocPath))
	if err != nil {
		t.Fatal(err)
	}
	committed, err := compattable.Extract(string(doc))
	if err != nil {
		t.Fatalf("%s: %v", compattable.DocPath, err)
	}
	if d := compattable.Diff(committed, generated); d != "" {
		t.Fatalf("%s's API table differs from the handlers; run `go run ./tools/compatgen` (- committed, + generated):\n%s", compattable.DocPath, d)
	}
}

// TestCompatibilityReadingMatchesRegistry checks the source reading the
// generator relies on against a real Registry where one can be built without
// the node's components: ApiVersions is always registered, and its range must
// be what the generator read.
func TestCompatibilityReadingMatchesRegistry(t *testing.T) {
	root, err := compattable.ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	handlers, err := compattable.ReadHandlers(root, ".")
	if err != nil {
		t.Fatal(err)
	}
	r, err := api.NewRegistry(api.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	served, ok := r.Supported(18)
	if !ok {
		t.Fatal("ApiVersions not served by an empty registry")
	}
	for _, h := range handlers {
		if h.Key == 18 {
			if h.MinVersion != served.Min || h.MaxVersion != served.Max {
				t.Fatalf("generator read ApiVersions %d-%d, registry serves %d-%d", h.MinVersion, h.MaxVersion, served.Min, served.Max)
			}
			return
		}
	}
	t.Fatal("generator did not read the ApiVersions handler")
}
