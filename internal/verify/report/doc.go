// Package report writes what `sluice verify` found into its results
// directory: summary.txt (the table `sluice verify` prints), anomalies.txt
// (every anomaly with the values, offsets and ops that show it) and
// report.html, one self-contained page with the summary, charts of
// throughput, ack latency and the fault timeline (drawn with
// gonum.org/v1/plot as inline SVG, fault windows shaded) and the
// anomalies table. history.jsonl, the run's history, is written by the
// history.Recorder during the run; Write writes it from the ops only when
// it is missing.
//
// It is built for a soak's history (tens of millions of ops): one pass
// aggregates the ops into at most maxBuckets time buckets, latencies into
// log-linear histograms, so memory and output size do not grow with the
// history.
package report
