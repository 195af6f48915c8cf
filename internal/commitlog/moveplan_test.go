package commitlog

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestMovePlanDataDriven runs testdata/moveplan. Commands:
//
//	copy cur=START,END fut=START,END [epoch-end=N]   one PlanCopy step
//	startup [partial]                                PlanStartup; input lines "dir: name name ..."
func TestMovePlanDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata/moveplan", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			switch td.Cmd {
			case "copy":
				v := CopyView{FutEpochEnd: -1}
				for _, a := range td.CmdArgs {
					switch a.Key {
					case "cur":
						v.CurStart, v.CurEnd = parsePair(t, a.Vals[0])
					case "fut":
						v.FutStart, v.FutEnd = parsePair(t, a.Vals[0])
					case "epoch-end":
						v.FutEpochEnd, _ = strconv.ParseInt(a.Vals[0], 10, 64)
					}
				}
				act, off := PlanCopy(v)
				return fmt.Sprintf("%s %d\n", act, off)
			case "startup":
				var ls []DirListing
				for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
					dir, names, _ := strings.Cut(line, ":")
					ls = append(ls, DirListing{Dir: dir, Names: strings.Fields(names)})
				}
				var b strings.Builder
				for _, s := range PlanStartup(ls, !td.HasArg("partial")) {
					fmt.Fprintf(&b, "%s %s/%s (%s)\n", s.Kind, s.Dir, s.Name, s.Partition)
				}
				if b.Len() == 0 {
					return "nothing\n"
				}
				return b.String()
			}
			t.Fatalf("unknown command %q", td.Cmd)
			return ""
		})
	})
}

func parsePair(t *testing.T, s string) (int64, int64) {
	a, b, _ := strings.Cut(s, ",")
	x, err1 := strconv.ParseInt(a, 10, 64)
	y, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("bad pair %q", s)
	}
	return x, y
}
