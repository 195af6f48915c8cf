// Package archtest checks the dependency direction DESIGN.md prescribes:
// imports between Sluice's packages point downward through the tiers below.
package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// tiers assigns each top-level package under internal/ (and cmd, sluice) a
// level; a package may import only packages of a lower level, or of its own
// level where sameTier allows it. A new package must be placed here.
var tiers = map[string]int{
	"kafka": 0, "freeport": 0, "clock": 0, "vfs": 0, "testbin": 0, "testutil": 0, "logging": 0, "version": 0, "latency": 0, "gcfloor": 0,
	"protocol": 1, "records": 1, "transport": 1, "netfault": 1,
	"commitlog": 2, "purgatory": 2, "quorum": 2, "metadata": 2,
	"coordinator": 3, "replication": 3, "controller": 3, "auth": 3, "config": 3, "fetchwire": 3, "quota": 3, "share": 3,
	"server": 4, "api": 4, "console": 4, "broker": 4,
	"node": 5, "sim": 5, "testcluster": 6, "devcluster": 6,
	// verify is `sluice verify` (cluster, workload, nemesis, checker,
	// report); sluicetest is the public embeddable cluster for Go tests.
	"verify": 7, "sluicetest": 7,
	"cli":    8,
	"sluice": 9, "cmd": 9,
	"archtest": 10,
}

// sameTier lists the imports allowed within a tier.
var sameTier = map[[2]string]bool{
	{"coordinator", "replication"}: true,
	{"quorum", "commitlog"}:        true,
	{"server", "api"}:              true,
	{"testbin", "freeport"}:        true,
}

// domain maps an import path or directory inside the module to its tier key.
func domain(rel string) string {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if parts[0] == "internal" && len(parts) > 1 {
		return parts[1]
	}
	return parts[0]
}

func TestImportDirection(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if name == "testdata" || name == "node_modules" || (strings.HasPrefix(name, ".") && path != root) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		from := domain(rel)
		if rel == "." || from == "bench" || from == "tools" || from == "test" || from == "examples" {
			return nil
		}
		fromTier, ok := tiers[from]
		if !ok {
			problems = append(problems, rel+": package domain "+strconv.Quote(from)+" has no tier in archtest")
			return nil
		}
		// A test may compose peers of its own tier (a replication test
		// drives the controller's AlterPartition); never a higher tier.
		isTest := strings.HasSuffix(path, "_test.go")
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !strings.HasPrefix(p, "github.com/sluice-io/sluice/") {
				continue
			}
			to := domain(strings.TrimPrefix(p, "github.com/sluice-io/sluice/"))
			if to == from {
				continue
			}
			toTier, ok := tiers[to]
			switch {
			case !ok:
				problems = append(problems, rel+" imports "+p+": no tier for "+to)
			case toTier > fromTier, toTier == fromTier && !sameTier[[2]string{from, to}] && !isTest:
				problems = append(problems, rel+" imports "+p+" (upward or sideways)")
			}
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
}
