package web

import (
	"fmt"
	"html/template"
	"strings"
)

// Lag chart geometry in SVG user units.
const lagChartW, lagChartH, lagChartPad = 640, 160, 40

// lagChart draws one group's lag samples as an inline SVG line (no
// JavaScript): time across, lag up from 0 to the largest sample. Only
// numbers reach the markup.
func lagChart(id string, pts []point) template.HTML {
	if len(pts) == 0 {
		return ""
	}
	from, to := pts[0].at, pts[len(pts)-1].at
	span := to.Sub(from).Seconds()
	top := 1.0
	for _, p := range pts {
		top = max(top, p.v)
	}
	var line strings.Builder
	for i, p := range pts {
		x := float64(lagChartPad)
		if span > 0 {
			x += p.at.Sub(from).Seconds() / span * (lagChartW - 2*lagChartPad)
		}
		y := lagChartH - lagChartPad/2 - p.v/top*(lagChartH-lagChartPad)
		if i > 0 {
			line.WriteByte(' ')
		}
		fmt.Fprintf(&line, "%.1f,%.1f", x, y)
	}
	return template.HTML(fmt.Sprintf(`<svg class="chart" id="%s" viewBox="0 0 %d %d" width="%d" height="%d" role="img">`+
		`<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>`+
		`<text x="2" y="14">%.0f</text><text x="2" y="%d">0</text>`+
		`<text x="%d" y="%d">%s</text><text x="%d" y="%d">%s</text>`+
		`<polyline fill="none" stroke="#1f6feb" stroke-width="1.5" points="%s"/></svg>`,
		template.HTMLEscapeString(id), lagChartW, lagChartH, lagChartW, lagChartH,
		lagChartPad, lagChartH-lagChartPad/2, lagChartW-lagChartPad, lagChartH-lagChartPad/2,
		top, lagChartH-lagChartPad/2,
		lagChartPad, lagChartH-2, from.UTC().Format("15:04:05"), lagChartW-lagChartPad-50, lagChartH-2, to.UTC().Format("15:04:05"),
		line.String()))
}
