// Command compatgen writes the generated API table of docs/compatibility.md:
// every API key of the pinned Kafka release's broker vector, Kafka's version
// range, the range Sluice advertises or why the key is not served. It reads
// the handlers from internal/api's source (see package compattable). Run it
// from anywhere in the module after changing a handler's versions or
// BrokerHandlers or ControllerHandlers:
//
//	go run ./tools/compatgen          # rewrite the table
//	go run ./tools/compatgen -check   # exit 1 with a diff when it is stale
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sluice-io/sluice/tools/compatgen/compattable"
)

func main() {
	check := flag.Bool("check", false, "report whether the doc is up to date instead of rewriting it")
	flag.Parse()
	if err := run(*check); err != nil {
		fmt.Fprintln(os.Stderr, "compatgen:", err)
		os.Exit(1)
	}
}

func run(check bool) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	root, err := compattable.ModuleRoot(wd)
	if err != nil {
		return err
	}
	section, err := compattable.Generate(root)
	if err != nil {
		return err
	}
	path := filepath.Join(root, compattable.DocPath)
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read doc: %w", err)
	}
	doc := string(raw)
	committed, err := compattable.Extract(doc)
	if err != nil {
		return fmt.Errorf("%s: %w", compattable.DocPath, err)
	}
	if check {
		if d := compattable.Diff(committed, section); d != "" {
			return fmt.Errorf("%s is stale; run `go run ./tools/compatgen`:\n%s", compattable.DocPath, d)
		}
		return nil
	}
	updated, err := compattable.Splice(doc, section)
	if err != nil {
		return err
	}
	if updated == doc {
		return nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("stat doc: %w", err)
	}
	if err := os.WriteFile(path, []byte(updated), info.Mode().Perm()); err != nil {
		return fmt.Errorf("write doc: %w", err)
	}
	return nil
}
