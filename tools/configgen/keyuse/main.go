// Command keyuse writes internal/config/keys_read_gen.go: every config key that Sluice's
// non-test code reads, with the packages that read it. docs/configuration.md's "enforced"
// column comes from that list (config.EnforcedBrokerKey), so it cannot drift from the code:
// a key nothing reads is "accepted, not enforced yet", a key something reads is enforced.
//
// A key is read where code outside the key's declarations names one of internal/config's
// typed key values (config.LogRetentionMs, config.TopicSegmentBytes, config.SluiceLogLevel).
// Keys reached by name count too: outside internal/config, a string literal naming a Kafka
// broker key (tlsconf's "ssl.keystore.location", a ListenerMechanismValue argument) except
// as the key of a composite literal ({"key": "value"} writes a config) and in the packages
// of clientSide; inside internal/config, a key name passed to one of its readers
// (c.str("process.roles")) or listed in a table it reads by loop (groupBounds). Test files,
// tools/, test/ and bench/ do not count, nor do the files that only declare or classify keys.
//
// Usage (from the module root): go run ./tools/configgen/keyuse [-check]
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

const (
	module    = "github.com/sluice-io/sluice"
	configPkg = module + "/internal/config"
	outFile   = "internal/config/keys_read_gen.go"
)

// notReaders are internal/config's files that declare, list or classify keys without
// reading a value: counting them would make every key "read".
var notReaders = map[string]bool{
	"keys_gen.go": true, "kafka_keys_gen.go": true, "keytypes.go": true, "enforced.go": true,
	"live.go": true, "keys_read_gen.go": true, "unknown.go": true, "suggest.go": true,
}

// clientSide are packages whose key names are a client's or a file's, not the broker's:
// the CLI's client properties (ssl.protocol, sasl.jaas.config) and meta.properties.
var clientSide = map[string]bool{
	module + "/internal/cli":                true,
	module + "/internal/commitlog/metafile": true,
}

// readerFuncs are internal/config's functions and methods that read the value of the key
// named by a string-literal argument.
var readerFuncs = map[string]bool{
	"str": true, "isSet": true, "resolved": true, "lookup": true, "ListenerValue": true,
	"ListenerMechanismValue": true, "getTyped": true, "getBool": true, "getInteger": true,
	"getDouble": true, "getString": true, "getDuration": true, "checkSASLClient": true, "gk": true,
}

func main() {
	check := flag.Bool("check", false, "fail instead of writing when the committed file differs")
	flag.Parse()
	if err := run(".", *check); err != nil {
		slog.Error("keyuse failed", "err", err)
		os.Exit(1)
	}
}

// run scans the module at root and writes (or, check, compares) the generated file.
func run(root string, check bool) error {
	uses, err := scan(root)
	if err != nil {
		return err
	}
	src, err := render(uses)
	if err != nil {
		return err
	}
	path := filepath.Join(root, outFile)
	if check {
		old, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		if !bytes.Equal(old, src) {
			return errors.New(outFile + " is out of date: run go run ./tools/configgen/keyuse, then go run ./tools/configgen/docgen")
		}
		return nil
	}
	if err := os.WriteFile(path, src, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// keyVar is a typed key value declared in internal/config.
type keyVar struct {
	name  string // the key as written in server.properties or a topic's configs
	topic bool
}

// uses maps "broker:<key>" or "topic:<key>" to the packages reading it.
type uses map[string]map[string]bool

func (u uses) add(id, pkg string) {
	if u[id] == nil {
		u[id] = map[string]bool{}
	}
	u[id][pkg] = true
}

func scan(root string) (uses, error) {
	fset := token.NewFileSet()
	vars, brokerNames, err := keyVars(fset, filepath.Join(root, "internal/config"))
	if err != nil {
		return nil, err
	}
	u := uses{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if skipDir(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		return scanFile(fset, path, rel, vars, brokerNames, u)
	})
	return u, err
}

func skipDir(rel string) bool {
	top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	switch top {
	case "tools", "test", "bench", "testdata", "vendor", "node_modules":
		return true
	}
	return strings.HasPrefix(filepath.Base(rel), ".") && rel != "."
}

// keyVars parses internal/config's package-level key values (X = IntKey{"name"}).
func keyVars(fset *token.FileSet, dir string) (map[string]keyVar, map[string]bool, error) {
	vars := map[string]keyVar{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, fmt.Errorf("parsing %s: %w", e.Name(), err)
		}
		collectKeyVars(f, vars)
	}
	if len(vars) == 0 {
		return nil, nil, errors.New("no key values found in " + dir)
	}
	names := map[string]bool{}
	for _, v := range vars {
		if !v.topic {
			names[v.name] = true
		}
	}
	return vars, names, nil
}

func collectKeyVars(f *ast.File, vars map[string]keyVar) {
	for _, decl := range f.Decls {
		g, ok := decl.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, v := range vs.Values {
				lit, ok := v.(*ast.CompositeLit)
				if !ok || i >= len(vs.Names) || len(lit.Elts) != 1 {
					continue
				}
				typ, ok := lit.Type.(*ast.Ident)
				name, isStr := stringLit(lit.Elts[0])
				if !ok || !isStr || !strings.HasSuffix(typ.Name, "Key") {
					continue
				}
				vars[vs.Names[i].Name] = keyVar{name: name, topic: strings.HasPrefix(typ.Name, "Topic")}
			}
		}
	}
}

func stringLit(e ast.Expr) (string, bool) {
	b, ok := e.(*ast.BasicLit)
	if !ok || b.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(b.Value)
	return s, err == nil
}

func scanFile(fset *token.FileSet, path, rel string, vars map[string]keyVar, brokerNames map[string]bool, u uses) error {
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return fmt.Errorf("parsing %s: %w", rel, err)
	}
	visitFile(f, module+"/"+filepath.ToSlash(filepath.Dir(rel)), filepath.Base(rel), vars, brokerNames, u)
	return nil
}

// visitFile records the reads of one file of package pkg.
func visitFile(f *ast.File, pkg, base string, vars map[string]keyVar, brokerNames map[string]bool, u uses) {
	record := func(v keyVar) {
		kind := "broker:"
		if v.topic {
			kind = "topic:"
		}
		u.add(kind+v.name, pkg)
	}
	if pkg == configPkg {
		if !notReaders[base] {
			scanConfigFile(f, vars, brokerNames, record)
		}
		return
	}
	if clientSide[pkg] {
		return
	}
	local := configImportName(f)
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && local != "" && x.Name == local {
				if v, ok := vars[n.Sel.Name]; ok {
					record(v)
				}
			}
		case *ast.KeyValueExpr:
			// {"key": "value"} writes a config (a topic's settings at creation): its key
			// is not a read.
			if _, ok := stringLit(n.Key); ok {
				ast.Inspect(n.Value, visit)
				return false
			}
		case *ast.BasicLit:
			if s, ok := stringLit(n); ok && brokerNames[s] {
				record(keyVar{name: s})
			}
		}
		return true
	}
	ast.Inspect(f, visit)
}

// scanConfigFile records internal/config's own reads: its key values named outside their
// declarations, and key names passed as literals to its readers.
func scanConfigFile(f *ast.File, vars map[string]keyVar, brokerNames map[string]bool, record func(keyVar)) {
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ValueSpec:
			for _, v := range n.Values {
				ast.Inspect(v, func(m ast.Node) bool { return visitConfigNode(m, vars, brokerNames, record) })
			}
			return false
		default:
			return visitConfigNode(n, vars, brokerNames, record)
		}
	})
}

func visitConfigNode(n ast.Node, vars map[string]keyVar, brokerNames map[string]bool, record func(keyVar)) bool {
	switch n := n.(type) {
	case *ast.Ident:
		if v, ok := vars[n.Name]; ok {
			record(v)
		}
	case *ast.CallExpr:
		if readerFuncs[calleeName(n.Fun)] {
			recordLits(n.Args, brokerNames, record)
		}
	case *ast.CompositeLit:
		// Tables of keys read by a loop (groupBounds: the bounds of the GROUP configs).
		recordLits(n.Elts, brokerNames, record)
	}
	return true
}

func recordLits(exprs []ast.Expr, brokerNames map[string]bool, record func(keyVar)) {
	for _, e := range exprs {
		if s, ok := stringLit(e); ok && brokerNames[s] {
			record(keyVar{name: s})
		}
	}
}

func calleeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}

// configImportName is the name a file gives internal/config, or "" if it does not import it.
func configImportName(f *ast.File) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == configPkg {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return "config"
		}
	}
	return ""
}

func render(u uses) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated by tools/configgen/keyuse from the module's non-test code; DO NOT EDIT.\n")
	b.WriteString("// Regenerate with: go run ./tools/configgen/keyuse\n\n")
	b.WriteString("package config\n\n")
	b.WriteString("// keysReadByCode maps \"broker:<key>\" and \"topic:<key>\" to the packages whose non-test\n")
	b.WriteString("// code reads the key: the facts behind EnforcedBrokerKey and EnforcedTopicKey.\n")
	b.WriteString("func keysReadByCode() map[string][]string {\n\treturn map[string][]string{\n")
	for _, id := range slices.Sorted(maps.Keys(u)) {
		var pkgs []string
		for _, p := range slices.Sorted(maps.Keys(u[id])) {
			pkgs = append(pkgs, strconv.Quote(strings.TrimPrefix(p, module+"/")))
		}
		fmt.Fprintf(&b, "\t\t%q: {%s},\n", id, strings.Join(pkgs, ", "))
	}
	b.WriteString("\t}\n}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("formatting the generated file: %w", err)
	}
	return src, nil
}
