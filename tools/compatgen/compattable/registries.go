package compattable

import (
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"

	"sluice/internal/api"
)

// apiImportPath is the package whose NewRegistry the node calls.
const apiImportPath = modulePath + "/internal/api"

// Registries are the handler ranges of the registries the node builds.
type Registries struct {
	// Broker is the broker listeners' registry: every constructor of
	// handlerConstructors plus the extra handlers the node passes.
	Broker []HandlerRange
	// ControllerExtra are the extra handlers of the CONTROLLER listeners'
	// registry (the one whose Deps names a Release); nil when the node
	// builds none.
	ControllerExtra []HandlerRange
	// ControllerRelease is that registry's Deps.Release, evaluated.
	ControllerRelease api.Release
}

// releaseFuncs are the api functions the node may build a Release with.
// A new one makes ReadRegistries fail until it is added here.
func releaseFuncs() map[string]func([]api.Release) (api.Release, error) {
	noArgs := func(f func() api.Release) func([]api.Release) (api.Release, error) {
		return func(args []api.Release) (api.Release, error) {
			if len(args) != 0 {
				return api.Release{}, errors.New("takes no argument")
			}
			return f(), nil
		}
	}
	return map[string]func([]api.Release) (api.Release, error){
		"PinnedRelease":     noArgs(api.PinnedRelease),
		"ControllerRelease": noArgs(api.ControllerRelease),
		"WithAlterPartition": func(args []api.Release) (api.Release, error) {
			if len(args) != 1 {
				return api.Release{}, errors.New("takes one release")
			}
			return api.WithAlterPartition(args[0]), nil
		},
		"WithFetchSnapshot": func(args []api.Release) (api.Release, error) {
			if len(args) != 1 {
				return api.Release{}, errors.New("takes one release")
			}
			return api.WithFetchSnapshot(args[0]), nil
		},
	}
}

// ReadRegistries reads the api package's handlers and the node package's
// api.NewRegistry calls: their extra handler arguments are api functions
// returning one Handler literal (DescribeQuorumHandler) or a slice literal
// of such constructors (ControllerHandlers).
func ReadRegistries(moduleRoot string) (Registries, error) {
	moduleRoot, err := filepath.Abs(moduleRoot)
	if err != nil {
		return Registries{}, fmt.Errorf("module root: %w", err)
	}
	apiDir := filepath.Join(moduleRoot, "internal", "api")
	base, err := ReadHandlers(moduleRoot, apiDir)
	if err != nil {
		return Registries{}, err
	}
	apiPkg, err := parsePackage(apiDir)
	if err != nil {
		return Registries{}, err
	}
	nodePkg, err := parsePackage(filepath.Join(moduleRoot, "internal", "node"))
	if err != nil {
		return Registries{}, err
	}
	consts := newConstResolver(moduleRoot)
	var regs Registries
	brokerCalls, controllerCalls := 0, 0
	for _, path := range nodePkg.sortedPaths() {
		file := nodePkg.files[path]
		apiName, ok := importName(file, apiImportPath)
		if !ok {
			continue
		}
		var bad error
		var fn *ast.FuncDecl
		ast.Inspect(file, func(n ast.Node) bool {
			if d, ok := n.(*ast.FuncDecl); ok {
				fn = d
			}
			call, ok := n.(*ast.CallExpr)
			if !ok || bad != nil || !isSelector(call.Fun, apiName, "NewRegistry") || len(call.Args) == 0 {
				return true
			}
			var extra []HandlerRange
			for _, arg := range call.Args[1:] {
				hs, err := extraHandlers(moduleRoot, apiPkg, consts, apiName, arg)
				if err != nil {
					bad = fmt.Errorf("%s: %w", nodePkg.fset.Position(arg.Pos()), err)
					return false
				}
				extra = append(extra, hs...)
			}
			if relExpr, ok := releaseField(call.Args[0]); ok {
				rel, err := evalRelease(fn, apiName, relExpr)
				if err != nil {
					bad = fmt.Errorf("%s: Deps.Release: %w", nodePkg.fset.Position(relExpr.Pos()), err)
					return false
				}
				controllerCalls++
				regs.ControllerExtra, regs.ControllerRelease = extra, rel
			} else {
				brokerCalls++
				regs.Broker = append(append([]HandlerRange(nil), base...), extra...)
			}
			return true
		})
		if bad != nil {
			return Registries{}, bad
		}
	}
	if brokerCalls != 1 || controllerCalls > 1 {
		return Registries{}, fmt.Errorf("internal/node calls api.NewRegistry %d times for brokers and %d for controllers; want 1 and at most 1", brokerCalls, controllerCalls)
	}
	for _, hs := range [][]HandlerRange{regs.Broker, regs.ControllerExtra} {
		if err := checkUnique(hs); err != nil {
			return Registries{}, err
		}
		sort.Slice(hs, func(i, j int) bool { return hs[i].Key < hs[j].Key })
	}
	return regs, nil
}

func checkUnique(hs []HandlerRange) error {
	seen := make(map[int16]string, len(hs))
	for _, h := range hs {
		if prev, dup := seen[h.Key]; dup {
			return fmt.Errorf("api key %d registered twice (%s, %s)", h.Key, prev, h.File)
		}
		seen[h.Key] = h.File
	}
	return nil
}

// extraHandlers reads the handlers one extra argument of NewRegistry
// yields: every api function it calls that builds a Handler literal, or a
// list of them.
func extraHandlers(moduleRoot string, apiPkg *sourcePackage, consts *constResolver, apiName string, arg ast.Expr) ([]HandlerRange, error) {
	var out []HandlerRange
	var bad error
	ast.Inspect(arg, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || bad != nil {
			return bad == nil
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok || x.Name != apiName {
			return true
		}
		fd, path, ok := apiPkg.funcDecl(sel.Sel.Name)
		if !ok {
			return true // a type or value, not a constructor
		}
		if h, err := handlerOf(apiPkg, consts, fd, path); err == nil {
			h.File, bad = relFile(moduleRoot, path)
			out = append(out, h)
			return false
		}
		listed, err := readListedHandlers(moduleRoot, apiPkg.dir, sel.Sel.Name)
		if err != nil {
			bad = fmt.Errorf("api.%s is neither a Handler constructor nor a list of them: %w", sel.Sel.Name, err)
			return false
		}
		out = append(out, listed...)
		return false
	})
	if bad != nil {
		return nil, bad
	}
	if len(out) == 0 {
		return nil, errors.New("extra NewRegistry argument builds no handler this generator can read")
	}
	return out, nil
}

func relFile(moduleRoot, path string) (string, error) {
	rel, err := filepath.Rel(moduleRoot, path)
	if err != nil {
		return "", err
	}
	return filepath.ToSlash(rel), nil
}

// releaseField returns the Release a Deps literal sets: the node builds its
// CONTROLLER listeners' registry with a release of its own.
func releaseField(deps ast.Expr) (ast.Expr, bool) {
	if u, ok := deps.(*ast.UnaryExpr); ok {
		deps = u.X
	}
	lit, ok := deps.(*ast.CompositeLit)
	if !ok {
		return nil, false
	}
	for _, el := range lit.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			if id, ok := kv.Key.(*ast.Ident); ok && id.Name == "Release" {
				return kv.Value, true
			}
		}
	}
	return nil, false
}

// evalRelease evaluates a Release expression: &v, where fn assigns v from
// a call of the api functions in releaseFuncs, or such a call itself.
func evalRelease(fn *ast.FuncDecl, apiName string, e ast.Expr) (api.Release, error) {
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = u.X
	}
	if id, ok := e.(*ast.Ident); ok {
		def, err := assignedValue(fn, id.Name)
		if err != nil {
			return api.Release{}, err
		}
		e = def
	}
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return api.Release{}, fmt.Errorf("want a call of an api release function, got %T", e)
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || !isSelector(sel, apiName, sel.Sel.Name) {
		return api.Release{}, errors.New("want a call of an api release function")
	}
	f, known := releaseFuncs()[sel.Sel.Name]
	if !known {
		return api.Release{}, fmt.Errorf("api.%s is not in compattable's releaseFuncs; add it", sel.Sel.Name)
	}
	var args []api.Release
	for _, a := range call.Args {
		r, err := evalRelease(fn, apiName, a)
		if err != nil {
			return api.Release{}, err
		}
		args = append(args, r)
	}
	r, err := f(args)
	if err != nil {
		return api.Release{}, fmt.Errorf("api.%s: %w", sel.Sel.Name, err)
	}
	return r, nil
}

// assignedValue finds the one `name := value` in fn.
func assignedValue(fn *ast.FuncDecl, name string) (ast.Expr, error) {
	if fn == nil || fn.Body == nil {
		return nil, fmt.Errorf("%s is not assigned in a function", name)
	}
	var found []ast.Expr
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != len(as.Rhs) {
			return true
		}
		for i, l := range as.Lhs {
			if id, ok := l.(*ast.Ident); ok && id.Name == name {
				found = append(found, as.Rhs[i])
			}
		}
		return true
	})
	if len(found) != 1 {
		return nil, fmt.Errorf("%s is assigned %d times in %s; want once", name, len(found), fn.Name.Name)
	}
	return found[0], nil
}

func isSelector(e ast.Expr, pkg, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == pkg && sel.Sel.Name == name
}

// importName is the name file uses for the package at path.
func importName(file *ast.File, path string) (string, bool) {
	for _, imp := range file.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil || p != path {
			continue
		}
		if imp.Name != nil {
			return imp.Name.Name, true
		}
		return filepath.Base(path), true
	}
	return "", false
}
