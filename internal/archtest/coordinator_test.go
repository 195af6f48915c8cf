package archtest

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// coordinatorImports lists, for each package under internal/coordinator,
// the coordinator packages it may import: the runtime knows no
// coordinator, a coordinator's state machine knows no runtime, and the
// service joins the two. Its tests may also use runtimetest. A new
// coordinator package (txn, share) must be placed here.
var coordinatorImports = map[string][]string{
	"coordinator":                     nil,
	"coordinator/runtime":             nil,
	"coordinator/runtime/runtimetest": nil,
	"coordinator/group":               {"coordinator/group/assignor", "coordinator/group/consumerrec"},
	"coordinator/group/assignor":      nil,
	"coordinator/group/consumerrec":   nil,
	"coordinator/groupcoord":          {"coordinator/group", "coordinator/runtime"},
	"coordinator/txn":                 nil,
	"coordinator/txncoord":            {"coordinator/txn", "coordinator/runtime"},
	"coordinator/share":               nil,
	"coordinator/sharecoord":          {"coordinator/share", "coordinator/runtime"},
}

func TestCoordinatorLayers(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(root, "internal")
	err = filepath.WalkDir(filepath.Join(base, "coordinator"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(base, filepath.Dir(p))
		from := filepath.ToSlash(rel)
		allowed, ok := coordinatorImports[from]
		if !ok {
			t.Errorf("%s: no place in archtest's coordinatorImports", from)
			return nil
		}
		for _, imp := range parseImports(t, p) {
			to, ok := strings.CutPrefix(imp, "github.com/sluice-io/sluice/internal/")
			if !ok || to == from || !strings.HasPrefix(to, "coordinator") {
				continue
			}
			testHelper := strings.HasSuffix(p, "_test.go") && to == "coordinator/runtime/runtimetest"
			if !slices.Contains(allowed, to) && !testHelper {
				t.Errorf("%s imports %s", filepath.ToSlash(p[len(root)+1:]), imp)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func parseImports(t *testing.T, p string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, imp := range f.Imports {
		ip, _ := strconv.Unquote(imp.Path.Value)
		out = append(out, ip)
	}
	return out
}
