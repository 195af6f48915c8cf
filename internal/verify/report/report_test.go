package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/verify/checker"
	"github.com/sluice-io/sluice/internal/verify/history"
)

var (
	update = flag.Bool("update", false, "rewrite testdata/*.golden")
	keep   = flag.String("keep", "", "also write TestWriteInvalid's report into this directory, to look at")
)

func TestWriteInvalid(t *testing.T) {
	span := 2 * time.Minute
	h := synthHistory(3000, span, faultOps(span))
	res := oneOfEach(h)
	dir := t.TempDir()
	s, err := Write(dir, testMeta, h, res)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{SummaryFile, AnomaliesFile, ReportFile, HistoryFile} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v (size %v)", f, err, st)
		}
	}
	golden(t, "invalid", strings.ReplaceAll(s.Text(), dir, "RESULTS"))
	if *keep != "" {
		if _, err := Write(*keep, testMeta, h, res); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(s.SummaryPath); string(b) != s.Text() {
		t.Errorf("summary.txt differs from Text()")
	}
	if s.Valid() || s.Total != len(anomalyKinds)+1 {
		t.Errorf("valid %v, total %d", s.Valid(), s.Total)
	}

	txt := readString(t, s.AnomaliesPath)
	page := readString(t, s.ReportPath)
	checkHTML(t, page, 3)
	for _, a := range res.Anomalies {
		for _, want := range []string{a.Kind, a.Values[0], a.Explain} {
			if !strings.Contains(txt, want) {
				t.Errorf("anomalies.txt lacks %q", want)
			}
			if !strings.Contains(page, want) {
				t.Errorf("report.html lacks %q", want)
			}
		}
	}
	// An op's time in seconds, as the anomaly's ops show it.
	if want := secs(res.Anomalies[0].Ops[1].Time); !strings.Contains(txt, want) || !strings.Contains(page, want) {
		t.Errorf("an anomaly's op time %s is missing", want)
	}
	for _, kind := range []string{"kill", "pause", "partition", "leader-election", "clock-jump"} {
		if !strings.Contains(page, "fault: "+kind) {
			t.Errorf("report.html has no legend for fault %s", kind)
		}
		if !strings.Contains(page, ">"+kind+"</text>") {
			t.Errorf("the fault timeline has no row for %s", kind)
		}
	}
	if !strings.Contains(page, ">"+anomalyLabel+"</text>") {
		t.Errorf("the fault timeline has no anomalies row")
	}
}

func TestWriteValid(t *testing.T) {
	span := 30 * time.Second
	h := synthHistory(900, span, nil)
	dir := t.TempDir()
	s, err := Write(dir, testMeta, h, checker.Result{Stats: statsOf(h)})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "valid", strings.ReplaceAll(s.Text(), dir, "RESULTS"))
	if got := readString(t, s.AnomaliesPath); got != "none\n" {
		t.Errorf("anomalies.txt = %q", got)
	}
	page := readString(t, s.ReportPath)
	checkHTML(t, page, 3)
	if !strings.Contains(page, "VALID: no anomaly found") || strings.Contains(page, "INVALID") {
		t.Errorf("report.html's verdict is wrong")
	}
	if strings.Contains(page, ">"+anomalyLabel+"</text>") || !strings.Contains(page, "no fault injected") {
		t.Errorf("the fault timeline of a valid run without faults is wrong")
	}
}

func TestWriteEmpty(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "dir")
	s, err := Write(dir, Meta{}, nil, checker.Result{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s.Text(), "VALID: no anomaly found") {
		t.Errorf("empty history: %s", s.Text())
	}
	checkHTML(t, readString(t, s.ReportPath), 3)
	if got := readString(t, s.HistoryPath); got != "" {
		t.Errorf("history.jsonl of no ops = %q", got)
	}
}

// TestHistoryKept: Write leaves the Recorder's history.jsonl alone and
// writes one only when it is missing.
func TestHistoryKept(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, HistoryFile)
	if err := os.WriteFile(path, []byte("recorded\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := synthHistory(30, time.Second, nil)
	if _, err := Write(dir, Meta{}, h, checker.Result{}); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, path); got != "recorded\n" {
		t.Errorf("history.jsonl overwritten: %q", got)
	}
	dir2 := t.TempDir()
	if _, err := Write(dir2, Meta{}, h, checker.Result{}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir2, HistoryFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	back, err := history.Read(f)
	if err != nil || len(back) != len(h) || back[5].String() != h[5].String() {
		t.Errorf("history.jsonl read back: %d ops, %v", len(back), err)
	}
}

// TestEscapes: strings from the history cannot inject markup.
func TestEscapes(t *testing.T) {
	h := synthHistory(30, time.Second, []history.Op{
		{Time: 100 * time.Millisecond, Kind: history.FaultStart, Fault: `<script>alert("f")</script>`},
	})
	res := oneOfEach(h)
	res.Anomalies[0].Values = []string{`<img src=x onerror=alert(1)>`}
	res.Anomalies[0].Explain = `"><script>alert(2)</script>`
	res.Anomalies[0].Ops[0].Process = `<iframe>`
	s, err := Write(t.TempDir(), Meta{Workload: "<b>w</b>", Command: "a & b"}, h, res)
	if err != nil {
		t.Fatal(err)
	}
	page := readString(t, s.ReportPath)
	for _, bad := range []string{"<script", "<img", "<iframe", "<b>"} {
		if strings.Contains(page, bad) {
			t.Errorf("report.html contains unescaped %q", bad)
		}
	}
	checkHTML(t, page, 3)
}

// checkHTML parses page as HTML (balanced elements, HTML's void
// elements and entities), counts its <svg> charts and checks that it
// loads nothing from outside.
func checkHTML(t *testing.T, page string, charts int) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(page))
	d.Strict = false
	d.AutoClose = xml.HTMLAutoClose
	d.Entity = xml.HTMLEntity
	var stack []string
	svgs := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("report.html does not parse: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			stack = append(stack, e.Name.Local)
			if e.Name.Local == "svg" {
				svgs++
			}
			for _, a := range e.Attr {
				if (a.Name.Local == "src" || a.Name.Local == "href") && strings.Contains(a.Value, "//") {
					t.Errorf("<%s %s=%q> loads from outside", e.Name.Local, a.Name.Local, a.Value)
				}
			}
			switch e.Name.Local {
			case "script", "link", "iframe", "object", "embed", "img":
				t.Errorf("report.html has a <%s>", e.Name.Local)
			}
		case xml.EndElement:
			if len(stack) == 0 || stack[len(stack)-1] != e.Name.Local {
				t.Fatalf("report.html: </%s> closes %v", e.Name.Local, stack)
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) != 0 {
		t.Errorf("report.html leaves %v open", stack)
	}
	if svgs != charts {
		t.Errorf("report.html has %d <svg> charts, want %d", svgs, charts)
	}
	// Outside the SVG namespace declarations, no URL at all.
	rest := strings.NewReplacer(`xmlns="http://www.w3.org/2000/svg"`, "", `xmlns:xlink="http://www.w3.org/1999/xlink"`, "").Replace(page)
	for _, u := range []string{"http://", "https://", "url(", "@import"} {
		if strings.Contains(rest, u) {
			t.Errorf("report.html refers to %q", u)
		}
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if !bytes.Equal(want, []byte(got)) {
		t.Errorf("summary differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var regen = flag.String("history", "", "TestRegenerate: check this history.jsonl and write its report into -keep")

// TestRegenerate re-renders a real run's report from its history, to
// look at (go test -run Regenerate -history RUN/history.jsonl -keep DIR).
func TestRegenerate(t *testing.T) {
	if *regen == "" || *keep == "" {
		t.Skip("needs -history and -keep")
	}
	f, err := os.Open(*regen)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ops, err := history.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Write(*keep, Meta{Command: "regenerated from " + *regen}, ops, checker.Check(ops)); err != nil {
		t.Fatal(err)
	}
}
