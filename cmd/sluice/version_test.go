package main

import (
	"bytes"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/internal/version"
)

// TestVersionAndVersionFlag: `sluice version` and `sluice --version` print
// the same line, naming the version, revision, Go release, platform and
// the pinned Kafka release (the KAFKA_VERSION file).
func TestVersionAndVersionFlag(t *testing.T) {
	kafka, err := os.ReadFile("../../KAFKA_VERSION")
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`^sluice ` + regexp.QuoteMeta(version.Version()) +
		` \(revision [0-9a-z-]+, ` + regexp.QuoteMeta(runtime.Version()) + `, ` + runtime.GOOS + `/` + runtime.GOARCH +
		`\), Kafka protocol of Apache Kafka ` + regexp.QuoteMeta(strings.TrimSpace(string(kafka))) + "\n$")
	outputs := map[string]string{}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		root := newRootCommand()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Fatalf("%v: %v (%s)", args, err, out.String())
		}
		if !want.MatchString(out.String()) {
			t.Errorf("%v printed %q, want a match of %s", args, out.String(), want)
		}
		outputs[args[0]] = out.String()
	}
	if outputs["version"] != outputs["--version"] {
		t.Errorf("version printed %q, --version %q", outputs["version"], outputs["--version"])
	}
}
