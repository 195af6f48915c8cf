// Package compattable derives the API table of docs/compatibility.md from the
// code: the handler files of internal/api (their Key, MinVersion and
// MaxVersion, read with go/ast) and the pinned Kafka release's ApiVersions
// vector (api.PinnedRelease). The generator (tools/compatgen) writes it into
// the doc; internal/api's compat_doc_test.go regenerates it and fails when the
// committed doc differs.
//
// The handler ranges are read from source rather than from a live Registry
// because building one that serves every key needs a running node's
// controller, replica manager and group coordinator; the go/ast reading
// covers what the node registers: every constructor that api.BrokerHandlers
// and api.ControllerHandlers call (the node gives both sets every
// dependency), plus the ApiVersions handler api.NewRegistry adds (see
// ReadRegistries).
package compattable

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// modulePath is the Go module whose packages constants may come from.
const modulePath = "github.com/sluice-io/sluice"

// HandlerRange is one handler's own version range, before clipping to the
// release's, and the file that defines it.
type HandlerRange struct {
	Key        int16
	MinVersion int16
	MaxVersion int16
	// File is the handler's file relative to the module root, e.g.
	// internal/api/01_fetch.go.
	File string
	// Constructor is the function that builds it, e.g. newFetchHandler.
	Constructor string
}

// sourcePackage is one parsed package directory (test files left out).
type sourcePackage struct {
	dir   string
	fset  *token.FileSet
	files map[string]*ast.File // by file path
}

func parsePackage(dir string) (*sourcePackage, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read package dir: %w", err)
	}
	p := &sourcePackage{dir: dir, fset: token.NewFileSet(), files: make(map[string]*ast.File)}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		path := filepath.Join(dir, name)
		f, err := parser.ParseFile(p.fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", path, err)
		}
		p.files[path] = f
	}
	if len(p.files) == 0 {
		return nil, fmt.Errorf("no Go files in %s", dir)
	}
	return p, nil
}

// sortedPaths returns the file paths in a stable order, so errors and
// results do not depend on map iteration.
func (p *sourcePackage) sortedPaths() []string {
	paths := make([]string, 0, len(p.files))
	for path := range p.files {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	return paths
}

func (p *sourcePackage) funcDecl(name string) (*ast.FuncDecl, string, bool) {
	for _, path := range p.sortedPaths() {
		for _, d := range p.files[path].Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == name {
				return fd, path, true
			}
		}
	}
	return nil, "", false
}

// ReadHandlerSet reads the handler ranges of one handler set of the api
// package in apiDir (the internal/api directory of a module rooted at
// moduleRoot): one per handler constructor setFunc calls (BrokerHandlers,
// ControllerHandlers), sorted by key. A set function may call only
// constructors (package functions returning a Handler) and builtins, so no
// handler hides behind a helper.
func ReadHandlerSet(moduleRoot, apiDir, setFunc string) ([]HandlerRange, error) {
	return readHandlerCalls(moduleRoot, apiDir, setFunc, true)
}

// readHandlerCalls reads the handlers fn builds; strict refuses calls of
// other package functions.
func readHandlerCalls(moduleRoot, apiDir, fn string, strict bool) ([]HandlerRange, error) {
	moduleRoot, err := filepath.Abs(moduleRoot)
	if err != nil {
		return nil, fmt.Errorf("module root: %w", err)
	}
	if apiDir, err = filepath.Abs(apiDir); err != nil {
		return nil, fmt.Errorf("api dir: %w", err)
	}
	pkg, err := parsePackage(apiDir)
	if err != nil {
		return nil, err
	}
	names, err := constructorCalls(pkg, fn, strict)
	if err != nil {
		return nil, err
	}
	consts := newConstResolver(moduleRoot)
	var out []HandlerRange
	seen := make(map[int16]string)
	for _, name := range names {
		fd, path, _ := pkg.funcDecl(name)
		h, err := handlerOf(pkg, consts, fd, path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if prev, dup := seen[h.Key]; dup {
			return nil, fmt.Errorf("api key %d built by both %s and %s in %s", h.Key, prev, name, fn)
		}
		seen[h.Key] = name
		h.Constructor = name
		if h.File, err = relFile(moduleRoot, path); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// builtins may be called in a set function besides the constructors.
var builtins = map[string]bool{"append": true, "make": true, "len": true, "cap": true, "new": true}

// constructorCalls lists, in source order, the handler constructors fn
// calls: package functions whose one result is a Handler.
func constructorCalls(pkg *sourcePackage, fn string, strict bool) ([]string, error) {
	fd, _, ok := pkg.funcDecl(fn)
	if !ok {
		return nil, fmt.Errorf("func %s not found in the api package", fn)
	}
	var names []string
	var bad error
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || bad != nil {
			return bad == nil
		}
		id, ok := call.Fun.(*ast.Ident)
		if !ok || builtins[id.Name] {
			return true
		}
		callee, _, defined := pkg.funcDecl(id.Name)
		switch {
		case defined && returnsHandler(callee):
			names = append(names, id.Name)
		case strict && !defined:
			bad = fmt.Errorf("%s calls %s, which is not defined in the api package", fn, id.Name)
		case strict:
			bad = fmt.Errorf("%s calls %s, which is not a handler constructor (one Handler result)", fn, id.Name)
		}
		return true
	})
	if bad != nil {
		return nil, bad
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s builds no handler", fn)
	}
	return names, nil
}

// returnsHandler reports whether fd's one result is a Handler.
func returnsHandler(fd *ast.FuncDecl) bool {
	res := fd.Type.Results
	if res == nil || len(res.List) != 1 || len(res.List[0].Names) > 1 {
		return false
	}
	id, ok := res.List[0].Type.(*ast.Ident)
	return ok && id.Name == "Handler"
}

// handlerOf finds the one non-empty Handler literal fd returns and evaluates
// its Key, MinVersion and MaxVersion.
func handlerOf(pkg *sourcePackage, consts *constResolver, fd *ast.FuncDecl, path string) (HandlerRange, error) {
	var lits []*ast.CompositeLit
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		ret, ok := n.(*ast.ReturnStmt)
		if !ok || len(ret.Results) == 0 {
			return true
		}
		lit, ok := ret.Results[0].(*ast.CompositeLit)
		if !ok || len(lit.Elts) == 0 {
			return true
		}
		if id, ok := lit.Type.(*ast.Ident); ok && id.Name == "Handler" {
			lits = append(lits, lit)
		}
		return true
	})
	if len(lits) != 1 {
		return HandlerRange{}, fmt.Errorf("want exactly one returned Handler{Key: ...} literal, found %d", len(lits))
	}
	fields := make(map[string]ast.Expr)
	for _, el := range lits[0].Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			return HandlerRange{}, errors.New("Handler literal without field names")
		}
		if id, ok := kv.Key.(*ast.Ident); ok {
			fields[id.Name] = kv.Value
		}
	}
	file := pkg.files[path]
	var h HandlerRange
	for _, f := range []struct {
		name string
		dst  *int16
	}{{"Key", &h.Key}, {"MinVersion", &h.MinVersion}, {"MaxVersion", &h.MaxVersion}} {
		expr, ok := fields[f.name]
		if !ok {
			return HandlerRange{}, fmt.Errorf("Handler literal has no %s", f.name)
		}
		v, err := consts.eval(pkg, file, expr, 0)
		if err != nil {
			return HandlerRange{}, fmt.Errorf("%s: %w", f.name, err)
		}
		*f.dst = v
	}
	return h, nil
}

// constResolver evaluates the integer constant expressions handlers use for
// their versions: literals, constants of the same package, and constants of
// another package of this module (fetchwire.MaxVersion).
type constResolver struct {
	moduleRoot string
	pkgs       map[string]*sourcePackage // by directory
}

func newConstResolver(moduleRoot string) *constResolver {
	return &constResolver{moduleRoot: moduleRoot, pkgs: make(map[string]*sourcePackage)}
}

// maxConstDepth bounds chains of constants defined by other constants.
const maxConstDepth = 8

func (c *constResolver) eval(pkg *sourcePackage, file *ast.File, expr ast.Expr, depth int) (int16, error) {
	if depth > maxConstDepth {
		return 0, errors.New("constant chain too deep")
	}
	switch e := expr.(type) {
	case *ast.BasicLit:
		if e.Kind != token.INT {
			return 0, fmt.Errorf("literal %s is not an integer", e.Value)
		}
		v, err := strconv.ParseInt(e.Value, 0, 16)
		if err != nil {
			return 0, fmt.Errorf("literal %s: %w", e.Value, err)
		}
		return int16(v), nil
	case *ast.ParenExpr:
		return c.eval(pkg, file, e.X, depth+1)
	case *ast.CallExpr:
		// A conversion such as int16(4).
		if id, ok := e.Fun.(*ast.Ident); ok && id.Name == "int16" && len(e.Args) == 1 {
			return c.eval(pkg, file, e.Args[0], depth+1)
		}
	case *ast.Ident:
		return c.lookup(pkg, e.Name, depth)
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		if !ok {
			break
		}
		other, err := c.importedPackage(file, x.Name)
		if err != nil {
			return 0, err
		}
		return c.lookup(other, e.Sel.Name, depth)
	}
	return 0, fmt.Errorf("cannot evaluate %T at %s; use a literal or a constant", expr, pkg.fset.Position(expr.Pos()))
}

func (c *constResolver) lookup(pkg *sourcePackage, name string, depth int) (int16, error) {
	for _, path := range pkg.sortedPaths() {
		file := pkg.files[path]
		for _, d := range file.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if id.Name != name {
						continue
					}
					if i >= len(vs.Values) {
						return 0, fmt.Errorf("constant %s has no explicit value (iota is not supported)", name)
					}
					return c.eval(pkg, file, vs.Values[i], depth+1)
				}
			}
		}
	}
	return 0, fmt.Errorf("constant %s not found in %s", name, pkg.dir)
}

// importedPackage resolves a package name used in file to the parsed
// package, for imports of this module only.
func (c *constResolver) importedPackage(file *ast.File, name string) (*sourcePackage, error) {
	for _, imp := range file.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			return nil, fmt.Errorf("import %s: %w", imp.Path.Value, err)
		}
		local := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			local = imp.Name.Name
		}
		if local != name {
			continue
		}
		rel, ok := strings.CutPrefix(path, modulePath+"/")
		if !ok {
			return nil, fmt.Errorf("constant from %s: only packages of module %s are read", path, modulePath)
		}
		dir := filepath.Join(c.moduleRoot, filepath.FromSlash(rel))
		if p, ok := c.pkgs[dir]; ok {
			return p, nil
		}
		p, err := parsePackage(dir)
		if err != nil {
			return nil, err
		}
		c.pkgs[dir] = p
		return p, nil
	}
	return nil, fmt.Errorf("package %s is not imported", name)
}
