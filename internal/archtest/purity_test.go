package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// pureCore is a package that starts no goroutine, reads no clock and does
// no I/O: its caller (a runtime, the quorum controller, the publisher)
// owns the goroutine and passes the time in, so tests drive it step by
// step. Only the package's own non-test files are checked, not its
// subpackages (controller/quorumctl and metadata/publisher own goroutines).
type pureCore struct {
	dir    string   // under internal/
	forbid []string // imports forbidden beyond pureForbidden
	allow  []string // imports under pureForbidden or forbid that touch no I/O
}

// pureCores lists the pure packages; an import a package uses today is
// allowed there (why is noted), the rest of the group's rules hold.
var pureCores = []pureCore{
	// Sessions guards its map with a sync.Mutex (read by the heartbeat
	// handler, written by the active controller); Runner uses context and
	// channels to serialize callers but starts no goroutine.
	{dir: "controller", forbid: []string{"sync/atomic", "log/slog"}},
	// The balancer's planner (a plan is a function of its input).
	{dir: "controller/balance", forbid: []string{"sync/...", "log/slog"}},
	// The consumer groups of KIP-848 use the pure assignors and the
	// record codec below the package.
	{dir: "coordinator/group", forbid: []string{"sync/...", "log/slog", "github.com/sluice-io/sluice/internal/coordinator/..."},
		allow: []string{"github.com/sluice-io/sluice/internal/coordinator/group/assignor", "github.com/sluice-io/sluice/internal/coordinator/group/consumerrec"}},
	{dir: "coordinator/txn", forbid: []string{"sync/...", "log/slog", "github.com/sluice-io/sluice/internal/coordinator/..."}},
	{dir: "coordinator/share", forbid: []string{"sync/...", "log/slog", "github.com/sluice-io/sluice/internal/coordinator/..."}},
	// The broker's share partitions and share sessions (KIP-932).
	{dir: "share", forbid: []string{"sync/...", "log/slog"}},
	// Loader publishes its image through an atomic.Pointer and logs a
	// subscriber's failure; it holds no lock.
	{dir: "metadata", forbid: []string{"sync"}},
	// The authorizer reads the image it is given; net/netip parses CIDR
	// hosts without touching the network.
	{dir: "auth/acl", forbid: []string{"sync/...", "log/slog"}, allow: []string{"net/netip"}},
	// sluice verify's checker: a result is a function of the history.
	{dir: "verify/checker", forbid: []string{"sync/...", "log/slog"}},
}

// pureForbidden holds for every pure core: no OS, network, clock or file
// system access. "p/..." forbids p and every package below it.
var pureForbidden = []string{
	"os/...", "syscall/...", "net/...",
	"github.com/sluice-io/sluice/internal/clock/...", "github.com/sluice-io/sluice/internal/vfs/...", "github.com/sluice-io/sluice/internal/transport/...",
}

// clockReads are the time functions that read the clock or wait on it.
var clockReads = []string{"Now", "Since", "Until", "Sleep", "After", "AfterFunc", "NewTimer", "NewTicker", "Tick"}

func TestPureCores(t *testing.T) {
	for _, c := range pureCores {
		t.Run(c.dir, func(t *testing.T) {
			checkPureCore(t, filepath.Join("..", filepath.FromSlash(c.dir)), c)
		})
	}
}

// checkPureCore checks the non-test files of the package in dir.
func checkPureCore(t *testing.T, dir string, c pureCore) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, p := range files {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		checked++
		for _, problem := range purityProblems(t, fset, p, nil, c) {
			t.Error(problem)
		}
	}
	if checked == 0 {
		t.Fatalf("no Go files in %s", dir)
	}
}

// TestPurityRulesCatchViolations keeps the checker honest: each rule
// reports the file that breaks it.
func TestPurityRulesCatchViolations(t *testing.T) {
	src := `package bad

import (
	"os"
	"net/http"
	"sync"
	clk "time"
	"github.com/sluice-io/sluice/internal/clock"
)

var _ = http.MethodGet
var _ = clock.Real

func f(mu *sync.Mutex) {
	go mu.Lock()
	_ = clk.Now()
	_ = clk.Since
	<-clk.After(clk.Second)
	_ = os.Getpid()
}
`
	fset := token.NewFileSet()
	got := purityProblems(t, fset, "bad.go", src, pureCore{dir: "bad", forbid: []string{"sync"}})
	want := []string{
		"imports os", "imports net/http", "imports sync", "imports github.com/sluice-io/sluice/internal/clock",
		"go statement", "time.Now", "time.Since", "time.After",
	}
	joined := strings.Join(got, "\n")
	for _, w := range want {
		if !strings.Contains(joined, w) {
			t.Errorf("no problem %q reported; got:\n%s", w, joined)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d problems, want %d:\n%s", len(got), len(want), joined)
	}
}

// purityProblems parses one file (src, or the file at p when src is nil)
// and lists what breaks c's rules.
func purityProblems(t *testing.T, fset *token.FileSet, p string, src any, c pureCore) []string {
	t.Helper()
	f, err := parser.ParseFile(fset, p, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	timeName := ""
	for _, imp := range f.Imports {
		ip, _ := strconv.Unquote(imp.Path.Value)
		if (importMatches(ip, pureForbidden) || importMatches(ip, c.forbid)) && !importMatches(ip, c.allow) {
			problems = append(problems, filepath.ToSlash(p)+" imports "+ip)
		}
		if ip == "time" {
			timeName = "time"
			if imp.Name != nil {
				timeName = imp.Name.Name
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			problems = append(problems, fset.Position(n.Pos()).String()+": go statement (the caller owns the goroutine)")
		case *ast.SelectorExpr:
			id, ok := n.X.(*ast.Ident)
			if ok && timeName != "" && id.Name == timeName && slices.Contains(clockReads, n.Sel.Name) {
				problems = append(problems, fset.Position(n.Pos()).String()+": time."+n.Sel.Name+" (the caller passes the time in)")
			}
		}
		return true
	})
	return problems
}

// importMatches reports whether ip is in list, where "p/..." matches p and
// the packages below it.
func importMatches(ip string, list []string) bool {
	for _, e := range list {
		if tree, ok := strings.CutSuffix(e, "/..."); ok {
			if ip == tree || strings.HasPrefix(ip, tree+"/") {
				return true
			}
		} else if ip == e {
			return true
		}
	}
	return false
}
