package report

import (
	"bufio"

	"github.com/sluice-io/sluice/internal/verify/checker"
)

// writeHTML writes report.html.
func writeHTML(w *bufio.Writer, s Summary, a *aggregates, as []checker.Anomaly) error {
	_, err := w.WriteString("<!DOCTYPE html><title>sluice verify</title><pre>" + "</pre>")
	return err
}
