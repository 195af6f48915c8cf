package report

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/sluice-io/sluice/internal/verify/checker"
	"github.com/sluice-io/sluice/internal/verify/history"
)

// The files of a results directory.
const (
	SummaryFile   = "summary.txt"
	AnomaliesFile = "anomalies.txt"
	ReportFile    = "report.html"
	HistoryFile   = "history.jsonl"
)

// Meta says what ran.
type Meta struct {
	Command  string // the command line that ran
	Workload string
	Seed     int64
	// Cluster is e.g. "3 local nodes, RF 3, min.insync.replicas 2" or
	// "external: host:port,...".
	Cluster  string
	Started  time.Time
	Duration time.Duration
	Schedule string // the fault schedule in words
}

// Latency is the ack latency distribution. Percentiles come from a
// log-linear histogram (32 bins an octave), so they are within about 3%
// of the exact figure; Max is exact.
type Latency struct {
	Count               int64
	P50, P99, P999, Max time.Duration
}

// Summary is what Write wrote: the paths and the summary table's figures.
type Summary struct {
	Dir                                                 string
	SummaryPath, ReportPath, AnomaliesPath, HistoryPath string

	Meta  Meta
	Stats checker.Stats
	// Anomalies counts the anomalies of each kind; every kind the checker
	// names is present, with 0 when none was found.
	Anomalies map[string]int
	// Kinds lists the anomaly kinds in the order the table prints them.
	Kinds []string
	Total int

	// Span is the history's length (the time of its last op).
	Span time.Duration
	// AckRate and PollRate are acks and records polled (not final reads)
	// per second over Span.
	AckRate, PollRate float64
	Latency           Latency
}

// Valid reports whether no anomaly was found.
func (s Summary) Valid() bool { return s.Total == 0 }

// Write writes summary.txt, anomalies.txt and report.html into dir
// (creating it), and history.jsonl from ops when dir has none, and
// returns the summary.
func Write(dir string, meta Meta, ops []history.Op, res checker.Result) (Summary, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Summary{}, fmt.Errorf("report: creating results directory: %w", err)
	}
	a := aggregate(ops)
	s := summarize(dir, meta, a, res)
	if err := writeHistoryIfMissing(s.HistoryPath, ops); err != nil {
		return s, err
	}
	if err := writeFile(s.SummaryPath, func(w *bufio.Writer) error {
		_, err := w.WriteString(s.Text())
		return err
	}); err != nil {
		return s, err
	}
	if err := writeFile(s.AnomaliesPath, func(w *bufio.Writer) error {
		return writeAnomalies(w, s, res.Anomalies)
	}); err != nil {
		return s, err
	}
	if err := writeFile(s.ReportPath, func(w *bufio.Writer) error {
		return writeHTML(w, s, a, res.Anomalies)
	}); err != nil {
		return s, err
	}
	return s, nil
}

func summarize(dir string, meta Meta, a *aggregates, res checker.Result) Summary {
	s := Summary{
		Dir:           dir,
		SummaryPath:   filepath.Join(dir, SummaryFile),
		ReportPath:    filepath.Join(dir, ReportFile),
		AnomaliesPath: filepath.Join(dir, AnomaliesFile),
		HistoryPath:   filepath.Join(dir, HistoryFile),
		Meta:          meta,
		Stats:         res.Stats,
		Anomalies:     res.ByKind(),
		Span:          a.span,
		Latency:       a.latency(),
	}
	s.Kinds = kindsOf(s.Anomalies)
	for _, n := range s.Anomalies {
		s.Total += n // ByKind counts the anomalies the checker found but did not list
	}
	for _, k := range s.Kinds {
		if _, ok := s.Anomalies[k]; !ok {
			s.Anomalies[k] = 0
		}
	}
	if secs := a.span.Seconds(); secs > 0 {
		s.AckRate = float64(a.totalAcks) / secs
		s.PollRate = float64(a.totalPolled) / secs
	}
	return s
}

// writeFile writes path through a buffered writer, reporting the first
// error of writing, flushing or closing.
func writeFile(path string, fill func(*bufio.Writer) error) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("report: closing %s: %w", path, cerr)
		}
	}()
	w := bufio.NewWriterSize(f, 64<<10)
	if err := fill(w); err != nil {
		return fmt.Errorf("report: writing %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("report: writing %s: %w", path, err)
	}
	return nil
}

// writeHistoryIfMissing writes ops as JSON lines when the run's Recorder
// did not already write them, so the path the summary prints exists.
func writeHistoryIfMissing(path string, ops []history.Op) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("report: %w", err)
	}
	return writeFile(path, func(w *bufio.Writer) error {
		enc := json.NewEncoder(w)
		for i := range ops {
			if err := enc.Encode(&ops[i]); err != nil {
				return err
			}
		}
		return nil
	})
}
