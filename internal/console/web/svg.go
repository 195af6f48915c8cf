package web

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"
	"time"
)

// Chart geometry in SVG user units.
const (
	chartW, chartH         = 640, 180
	chartLeft, chartBottom = 60, 20
)

// seriesColors cycle over a chart's series.
var seriesColors = [...]string{"#1f6feb", "#d97706", "#16a34a", "#b3261e", "#7c3aed", "#0891b2"}

// series is one named line of a chart.
type series struct {
	name   string
	points []point
}

// chart draws lines over time as inline SVG (no JavaScript), with the
// value axis from 0 to the largest value and the time axis over the
// points' span. Names and numbers are escaped; format renders a value.
func chart(id string, ss []series, format func(float64) string) template.HTML {
	var from, to time.Time
	maxV := 0.0
	n := 0
	for _, s := range ss {
		for _, p := range s.points {
			if n == 0 || p.at.Before(from) {
				from = p.at
			}
			if n == 0 || p.at.After(to) {
				to = p.at
			}
			maxV = math.Max(maxV, p.v)
			n++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" id="%s" viewBox="0 0 %d %d" width="%d" height="%d" role="img">`,
		html.EscapeString(id), chartW, chartH, chartW, chartH)
	if n < 2 {
		fmt.Fprintf(&b, `<text x="%d" y="%d">not enough samples yet (one every %s)</text></svg>`, chartLeft, chartH/2, sampleInterval)
		return template.HTML(b.String())
	}
	if maxV == 0 {
		maxV = 1
	}
	span := to.Sub(from).Seconds()
	if span <= 0 {
		span = 1
	}
	plotW, plotH := float64(chartW-chartLeft-10), float64(chartH-chartBottom-10)
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="10" x2="%d" y2="%d"/>`, chartLeft, chartLeft, chartH-chartBottom)
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>`, chartLeft, chartH-chartBottom, chartW-10, chartH-chartBottom)
	fmt.Fprintf(&b, `<text x="2" y="16">%s</text><text x="2" y="%d">0</text>`, html.EscapeString(format(maxV)), chartH-chartBottom)
	fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`, chartLeft, chartH-4, from.UTC().Format("15:04:05"))
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`, chartW-10, chartH-4, to.UTC().Format("15:04:05Z"))
	for i, s := range ss {
		if len(s.points) == 0 {
			continue
		}
		pts := make([]string, len(s.points))
		for j, p := range s.points {
			x := float64(chartLeft) + plotW*p.at.Sub(from).Seconds()/span
			y := 10 + plotH*(1-p.v/maxV)
			pts[j] = fmt.Sprintf("%.1f,%.1f", x, y)
		}
		color := seriesColors[i%len(seriesColors)]
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"><title>%s</title></polyline>`,
			color, strings.Join(pts, " "), html.EscapeString(s.name))
		fmt.Fprintf(&b, `<text class="legend" x="%d" y="%d" text-anchor="end" fill="%s">%s</text>`,
			chartW-14, 20+12*i, color, html.EscapeString(s.name))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // built from escaped names and numbers only
}
