package main

import (
	"go/parser"
	"go/token"
	"testing"
)

// TestCommittedFileMatches fails when internal/config/keys_read_gen.go is not what keyuse
// finds in the module's code today: a package started or stopped reading a key.
func TestCommittedFileMatches(t *testing.T) {
	if err := run("../../..", true); err != nil {
		t.Fatal(err)
	}
}

// TestScanRules runs the rules on one file each.
func TestScanRules(t *testing.T) {
	vars := map[string]keyVar{"MessageMaxBytes": {name: "message.max.bytes"}, "TopicSegmentMs": {name: "segment.ms", topic: true}}
	brokerNames := map[string]bool{"message.max.bytes": true, "log.retention.ms": true, "num.partitions": true}
	cases := []struct {
		pkg, src string
		want     []string
	}{
		{"internal/x", `package x; import cfg "` + configPkg + `"; var _ = cfg.MessageMaxBytes; var _ = cfg.TopicSegmentMs`, []string{"broker:message.max.bytes", "topic:segment.ms"}},
		{"internal/x", `package x; const k = "log.retention.ms"`, []string{"broker:log.retention.ms"}},
		{"internal/x", `package x; var m = map[string]string{"log.retention.ms": "1"}`, nil},
		{"internal/cli", `package cli; const k = "log.retention.ms"`, nil},
		{"internal/config", `package config; func f(c *Config) { bad("num.partitions"); c.str("log.retention.ms") }`, []string{"broker:log.retention.ms"}},
		{"internal/config", `package config; var _ = MessageMaxBytes`, []string{"broker:message.max.bytes"}},
	}
	for _, c := range cases {
		fset := token.NewFileSet()
		u := uses{}
		path := "/tmp/" + c.pkg + "/f.go"
		f, err := parser.ParseFile(fset, path, c.src, 0)
		if err != nil {
			t.Fatal(err)
		}
		visitFile(f, module+"/"+c.pkg, "f.go", vars, brokerNames, u)
		if len(u) != len(c.want) {
			t.Errorf("%s %q: got %v, want %v", c.pkg, c.src, u, c.want)
			continue
		}
		for _, w := range c.want {
			if !u[w][module+"/"+c.pkg] {
				t.Errorf("%s %q: got %v, want %s", c.pkg, c.src, u, w)
			}
		}
	}
}
