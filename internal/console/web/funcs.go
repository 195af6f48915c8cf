package web

import (
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"time"
)

// funcs are the template helpers every page may use.
func funcs() template.FuncMap {
	return template.FuncMap{
		"bytes":  humanBytes,
		"rate":   humanRate,
		"join":   joinInt32s,
		"int64":  func(v float64) int64 { return int64(v) },
		"sub":    func(a, b int64) int64 { return a - b },
		"time":   func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") },
		"millis": func(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000Z") },
	}
}

// humanBytes renders a size in binary units (Kafka's tools print bytes;
// a page reads better with KiB/MiB). Negative sizes are unknown.
func humanBytes(n int64) string {
	if n < 0 {
		return "?"
	}
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// humanRate renders a per-second rate.
func humanRate(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.1fM/s", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk/s", v/1e3)
	default:
		return fmt.Sprintf("%.1f/s", v)
	}
}

func joinInt32s(xs []int32) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(int(x))
	}
	return strings.Join(parts, ",")
}
