package report

import (
	"bufio"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-io/sluice/internal/verify/checker"
	"github.com/sluice-io/sluice/internal/verify/history"
)

// anomalyKinds are the classes the checker names, in the order the
// summary lists them (each with its count, 0 included).
var anomalyKinds = []string{
	checker.LostWrite,
	checker.Duplicate,
	checker.InconsistentOffsets,
	checker.NonmonotonicSend,
	checker.PollSkip,
	checker.NonmonotonicPoll,
	checker.AbortedRead,
	checker.TornTransaction,
	checker.CommittedOffsetRegression,
}

// kindsOf is anomalyKinds followed by any other kind found, sorted.
func kindsOf(found map[string]int) []string {
	kinds := append([]string(nil), anomalyKinds...)
	var extra []string
	for k := range found {
		if !contains(anomalyKinds, k) {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	return append(kinds, extra...)
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Verdict is the closing line: "VALID: no anomaly found" or
// "INVALID: N anomalies (kind n, ...)".
func (s Summary) Verdict() string {
	if s.Valid() {
		return "VALID: no anomaly found"
	}
	var parts []string
	for _, k := range s.Kinds {
		if n := s.Anomalies[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		}
	}
	noun := "anomalies"
	if s.Total == 1 {
		noun = "anomaly"
	}
	return fmt.Sprintf("INVALID: %d %s (%s)", s.Total, noun, strings.Join(parts, ", "))
}

// row is one line of the summary table.
type row struct{ Name, Value string }

func (s Summary) header() []row {
	m := s.Meta
	started := "-"
	if !m.Started.IsZero() {
		started = m.Started.UTC().Format(time.RFC3339)
	}
	return []row{
		{"command", orDash(m.Command)},
		{"workload", orDash(m.Workload)},
		{"seed", strconv.FormatInt(m.Seed, 10)},
		{"cluster", orDash(m.Cluster)},
		{"started", started},
		{"duration", m.Duration.Round(time.Millisecond).String()},
		{"faults", orDash(m.Schedule)},
	}
}

func (s Summary) operations() []row {
	st := s.Stats
	return []row{
		{"sends", count(st.Sends)},
		{"acks", count(st.Acks)},
		{"fails", count(st.Fails)},
		{"infos (outcome unknown)", count(st.Infos)},
		{"polls (records)", count(st.Polls)},
		{"final reads (records)", count(st.FinalReads)},
		{"commits", count(st.Commits)},
		{"txn commits", count(st.TxnCommits)},
		{"txn aborts", count(st.TxnAborts)},
		{"unseen (acked, not read)", count(st.Unseen)},
	}
}

func (s Summary) faults() []row {
	kinds := make([]string, 0, len(s.Stats.FaultsByKind))
	for k := range s.Stats.FaultsByKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	rows := make([]row, 0, len(kinds)+1)
	for _, k := range kinds {
		rows = append(rows, row{k, count(s.Stats.FaultsByKind[k])})
	}
	return append(rows, row{"total", count(s.Stats.Faults)})
}

func (s Summary) anomalies() []row {
	rows := make([]row, 0, len(s.Kinds)+1)
	for _, k := range s.Kinds {
		rows = append(rows, row{k, strconv.Itoa(s.Anomalies[k])})
	}
	return append(rows, row{"total", strconv.Itoa(s.Total)})
}

func (s Summary) performance() []row {
	l := s.Latency
	return []row{
		{"acks/s (mean)", fmt.Sprintf("%.1f", s.AckRate)},
		{"records polled/s (mean)", fmt.Sprintf("%.1f", s.PollRate)},
		{"ack latency p50", dur(l.P50)},
		{"ack latency p99", dur(l.P99)},
		{"ack latency p99.9", dur(l.P999)},
		{"ack latency max", dur(l.Max)},
	}
}

func (s Summary) files() []row {
	return []row{
		{"report", s.ReportPath},
		{"anomalies", s.AnomaliesPath},
		{"history", s.HistoryPath},
	}
}

// sections are the summary table's parts, shared by Text and the page.
func (s Summary) sections() []section {
	return []section{
		{Title: "run", Rows: s.header(), Class: "run"},
		{Title: "operations", Rows: s.operations()},
		{Title: "faults by kind", Rows: s.faults()},
		{Title: "anomalies by kind", Rows: s.anomalies(), Class: "verdict-counts"},
		{Title: fmt.Sprintf("throughput and latency (over %s)", s.Span.Round(time.Millisecond)), Rows: s.performance()},
	}
}

type section struct {
	Title string
	Rows  []row
	// Class styles the page's table: "run" (text values), "verdict-counts"
	// (a value other than 0 is shown as an alarm).
	Class string
}

// Text is the summary table `sluice verify` prints.
func (s Summary) Text() string {
	var b strings.Builder
	for _, sec := range s.sections() {
		fmt.Fprintf(&b, "%s\n", sec.Title)
		writeRows(&b, sec.Rows)
		b.WriteString("\n")
	}
	b.WriteString(s.Verdict() + "\n")
	writeRows(&b, s.files())
	return b.String()
}

func writeRows(b *strings.Builder, rows []row) {
	w := 0
	for _, r := range rows {
		w = max(w, len(r.Name))
	}
	for _, r := range rows {
		fmt.Fprintf(b, "  %-*s  %s\n", w, r.Name, r.Value)
	}
}

// writeAnomalies writes every anomaly with its values, offsets, ops and
// explanation; "none" when there is none.
func writeAnomalies(w *bufio.Writer, s Summary, as []checker.Anomaly) error {
	if s.Total == 0 {
		_, err := w.WriteString("none\n")
		return err
	}
	fmt.Fprintf(w, "%s\n", s.Verdict())
	if len(as) < s.Total {
		listed := map[string]int{}
		for _, a := range as {
			listed[a.Kind]++
		}
		for _, k := range s.Kinds {
			if n := s.Anomalies[k] - listed[k]; n > 0 {
				fmt.Fprintf(w, "%d more %s anomalies were found but not listed by the checker\n", n, k)
			}
		}
	}
	for i, a := range as {
		fmt.Fprintf(w, "\n#%d %s %s\n", i+1, a.Kind, where(a))
		fmt.Fprintf(w, "  offsets: %s\n", offsets(a.Offsets))
		fmt.Fprintf(w, "  values:  %s\n", strings.Join(a.Values, " "))
		fmt.Fprintf(w, "  explain: %s\n", a.Explain)
		if len(a.Ops) > 0 {
			fmt.Fprintf(w, "  ops:\n")
		}
		for j := range a.Ops {
			fmt.Fprintf(w, "    %s\n", opLine(&a.Ops[j]))
		}
	}
	return nil
}

func where(a checker.Anomaly) string {
	if a.Topic == "" {
		return fmt.Sprintf("partition %d", a.Partition)
	}
	return fmt.Sprintf("%s/%d", a.Topic, a.Partition)
}

func offsets(os []int64) string {
	parts := make([]string, len(os))
	for i, o := range os {
		parts[i] = strconv.FormatInt(o, 10)
	}
	return strings.Join(parts, " ")
}

// opLine is an op as a person reads it: time in seconds, index, kind,
// process, then the fields its kind uses.
func opLine(op *history.Op) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s #%d %s %s", secs(op.Time), op.Index, op.Kind, op.Process)
	if op.Topic != "" {
		fmt.Fprintf(&b, " %s/%d", op.Topic, op.Partition)
	}
	if op.Offset >= 0 && op.Kind != history.FaultStart && op.Kind != history.FaultEnd {
		fmt.Fprintf(&b, " offset %d", op.Offset)
	}
	add := func(name, v string) {
		if v != "" {
			fmt.Fprintf(&b, " %s=%s", name, v)
		}
	}
	add("value", op.Value)
	if op.Latency > 0 {
		add("latency", dur(op.Latency))
	}
	if op.Batch != 0 {
		add("batch", strconv.FormatInt(op.Batch, 10))
	}
	add("txn", op.Txn)
	add("group", op.Group)
	if op.Generation != 0 {
		add("generation", strconv.Itoa(int(op.Generation)))
	}
	add("fault", op.Fault)
	add("err", op.Err)
	add("detail", op.Detail)
	return b.String()
}

// secs is a history time in seconds, to the microsecond.
func secs(d time.Duration) string { return fmt.Sprintf("%.6fs", d.Seconds()) }

// dur prints a latency with three significant figures.
func dur(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < time.Millisecond:
		return fmt.Sprintf("%.3gµs", float64(d)/float64(time.Microsecond))
	case d < time.Second:
		return fmt.Sprintf("%.3gms", float64(d)/float64(time.Millisecond))
	case d < 100*time.Second:
		return fmt.Sprintf("%.3gs", d.Seconds())
	default:
		return fmt.Sprintf("%.0fs", d.Seconds())
	}
}

// count prints n with thousands separators.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
