package report

import (
	"bufio"
	"html/template"
	"strconv"

	"github.com/sluice-io/sluice/internal/verify/checker"
)

// The anomalies table's bounds: a broken run can find millions, and
// anomalies.txt has them all.
const (
	htmlAnomalies = 200 // rows
	htmlItems     = 20  // offsets or values in a cell
	htmlOps       = 12  // ops in a cell
)

type page struct {
	S         Summary
	Sections  []section
	Files     []row
	Charts    []chart
	Anomalies []anomalyRow
	More      int // anomalies beyond the table
}

type anomalyRow struct {
	N               int
	Kind, Where     string
	Offsets, Values []string // at most htmlItems, then "… N more"
	Ops             []string
	MoreOps         int
	Explain         string
}

// writeHTML writes report.html: one page, no external resource.
func writeHTML(w *bufio.Writer, s Summary, a *aggregates, as []checker.Anomaly) error {
	a.setAnomalies(as)
	cs, err := charts(a)
	if err != nil {
		return err
	}
	pg := page{S: s, Sections: s.sections(), Files: s.files(), Charts: cs, More: s.Total - min(len(as), htmlAnomalies)}
	for i := range as[:min(len(as), htmlAnomalies)] {
		pg.Anomalies = append(pg.Anomalies, newAnomalyRow(i+1, &as[i]))
	}
	return pageTmpl.Execute(w, pg)
}

func newAnomalyRow(n int, a *checker.Anomaly) anomalyRow {
	r := anomalyRow{N: n, Kind: a.Kind, Where: where(*a), Explain: a.Explain}
	offs := make([]string, len(a.Offsets))
	for i, o := range a.Offsets {
		offs[i] = strconv.FormatInt(o, 10)
	}
	r.Offsets = capList(offs)
	r.Values = capList(a.Values)
	for i := range a.Ops[:min(len(a.Ops), htmlOps)] {
		r.Ops = append(r.Ops, opLine(&a.Ops[i]))
	}
	r.MoreOps = len(a.Ops) - len(r.Ops)
	return r
}

func capList(ss []string) []string {
	if len(ss) <= htmlItems {
		return ss
	}
	return append(ss[:htmlItems:htmlItems], "… "+strconv.Itoa(len(ss)-htmlItems)+" more")
}

// trusted marks a chart's SVG, drawn by gonum/plot (which escapes its
// text), as safe to inline.
func trusted(svg string) template.HTML { return template.HTML(svg) } //nolint:gosec // generated SVG, text escaped by vgsvg

var pageTmpl = template.Must(template.New("report").Funcs(template.FuncMap{"svg": trusted}).Parse(pageHTML))

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>sluice verify: {{.S.Meta.Workload}} — {{.S.Verdict}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1100px; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
.verdict { font-size: 1.2em; font-weight: bold; padding: 0.5em 0.8em; border-radius: 4px; }
.valid { background: #e3f4e3; color: #145214; }
.invalid { background: #fbe3e3; color: #8a1010; }
.tables { display: flex; flex-wrap: wrap; gap: 1em 2em; align-items: flex-start; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { text-align: left; padding: 0.15em 0.6em; vertical-align: top; }
.tables td:nth-child(2) { text-align: right; font-variant-numeric: tabular-nums; }
.tables th { border-bottom: 1px solid #999; }
.run td:nth-child(2) { text-align: left; }
.nonzero { color: #8a1010; font-weight: bold; }
.chart svg { width: 100%; height: auto; }
.anomalies { width: 100%; }
.anomalies th { border-bottom: 1px solid #999; }
.anomalies tr.first td { border-top: 1px solid #ccc; padding-top: 0.4em; }
.anomalies td { font-size: 0.85em; }
.item { white-space: nowrap; }
.note { font-size: 0.85em; color: #555; }
code, .ops { font-family: ui-monospace, monospace; font-size: 0.85em; }
.ops { white-space: pre-wrap; color: #333; }
</style>
</head>
<body>
<h1>sluice verify</h1>
<p class="verdict {{if .S.Valid}}valid{{else}}invalid{{end}}">{{.S.Verdict}}</p>
<div class="tables">
{{range $sec := .Sections}}<table class="{{$sec.Class}}">
<tr><th colspan="2">{{$sec.Title}}</th></tr>
{{range $sec.Rows}}<tr><td>{{.Name}}</td><td{{if and (eq $sec.Class "verdict-counts") (ne .Value "0")}} class="nonzero"{{end}}>{{.Value}}</td></tr>
{{end}}</table>
{{end}}</div>
<table class="files">{{range .Files}}<tr><td>{{.Name}}</td><td><code>{{.Value}}</code></td></tr>{{end}}</table>
{{range .Charts}}<h2>{{.Title}}</h2>
<div class="chart">{{svg .SVG}}</div>
{{end}}
<h2 id="anomalies">Anomalies</h2>
{{if .Anomalies}}<table class="anomalies">
<tr><th>#</th><th>kind</th><th>where</th><th>offsets</th><th>values</th><th>explanation</th></tr>
{{range .Anomalies}}<tr class="first"><td>{{.N}}</td><td>{{.Kind}}</td><td>{{.Where}}</td><td>{{range .Offsets}}<span class="item">{{.}}</span> {{end}}</td><td>{{range .Values}}<span class="item">{{.}}</span> {{end}}</td><td>{{.Explain}}</td></tr>
<tr><td></td><td colspan="5" class="ops">{{range .Ops}}{{.}}
{{end}}{{if .MoreOps}}… {{.MoreOps}} more ops (anomalies.txt has them){{end}}</td></tr>
{{end}}</table>
<p class="note">Each anomaly's ops: time since start in seconds, #index in history.jsonl, kind, process, topic/partition, offset and value.</p>
{{if .More}}<p>{{.More}} more anomalies are not shown here; anomalies.txt lists every one the checker reported.</p>{{end}}
{{else}}<p>None.</p>{{end}}
</body>
</html>
`
