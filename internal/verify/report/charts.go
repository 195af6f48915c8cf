package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// chart is one drawn chart: a title and its inline SVG.
type chart struct {
	Title string
	SVG   string
}

const (
	chartWidth  = 26 * vg.Centimeter
	chartHeight = 9 * vg.Centimeter
)

// lineColors are the series' colours; faultColors the fault kinds'
// (drawn translucent), one per kind in sorted order, cycling.
var (
	lineColors = []color.NRGBA{
		{R: 0x1f, G: 0x5f, B: 0xbf, A: 0xff}, // blue
		{R: 0x2a, G: 0x9d, B: 0x3f, A: 0xff}, // green
		{R: 0xc0, G: 0x20, B: 0x20, A: 0xff}, // red
	}
	faultColors = []color.NRGBA{
		{R: 0xe6, G: 0x9f, B: 0x00, A: 0xff}, // orange
		{R: 0x8e, G: 0x44, B: 0xad, A: 0xff}, // purple
		{R: 0x56, G: 0xb4, B: 0xe9, A: 0xff}, // sky
		{R: 0xd5, G: 0x5e, B: 0x00, A: 0xff}, // vermilion
		{R: 0x00, G: 0x9e, B: 0x73, A: 0xff}, // teal
		{R: 0xcc, G: 0x79, B: 0xa7, A: 0xff}, // pink
		{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}, // grey
		{R: 0xb8, G: 0x86, B: 0x0b, A: 0xff}, // olive
	}
)

// shadeAlpha is the fault shading's opacity behind the lines.
const shadeAlpha = 0.22

// charts draws the report's three charts.
func charts(a *aggregates) ([]chart, error) {
	fs := newFaultShades(a)
	out := make([]chart, 0, 3)
	for _, draw := range []func(*aggregates, *faultShades) (chart, error){
		throughputChart, latencyChart, faultChart,
	} {
		c, err := draw(a, fs)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func throughputChart(a *aggregates, fs *faultShades) (chart, error) {
	p, leg := newPlot(a, "Throughput per "+bucketName(a.width), "records per second")
	acks := make(plotter.XYs, len(a.acks))
	polled := make(plotter.XYs, len(a.acks))
	ymax := 1.0
	for i := range a.acks {
		x := a.bucketMid(i)
		s := a.bucketSeconds(i)
		acks[i] = plotter.XY{X: x, Y: float64(a.acks[i]) / s}
		polled[i] = plotter.XY{X: x, Y: float64(a.polled[i]) / s}
		ymax = math.Max(ymax, math.Max(acks[i].Y, polled[i].Y))
	}
	p.Y.Min, p.Y.Max = 0, ymax*1.1
	lines, err := newLines(leg, []string{"acks/s", "records polled/s"}, 0, acks, polled)
	if err != nil {
		return chart{}, err
	}
	fs.shade(p, leg, p.Y.Min, p.Y.Max)
	p.Add(lines...)
	return render(p, leg, chartWidth, chartHeight)
}

func latencyChart(a *aggregates, fs *faultShades) (chart, error) {
	p, leg := newPlot(a, "Ack latency per "+bucketName(a.width), "ack latency (ms)")
	var p50, p99, pmax plotter.XYs
	lo, hi := math.Inf(1), 0.0
	for i, h := range a.hist {
		if h == nil {
			continue // no ack in this bucket: a gap, not a zero
		}
		x := a.bucketMid(i)
		v50, v99, vmax := ms(h.quantile(0.5)), ms(h.quantile(0.99)), ms(a.maxLat[i])
		p50 = append(p50, plotter.XY{X: x, Y: v50})
		p99 = append(p99, plotter.XY{X: x, Y: v99})
		pmax = append(pmax, plotter.XY{X: x, Y: vmax})
		lo, hi = math.Min(lo, v50), math.Max(hi, vmax)
	}
	if len(p50) == 0 {
		lo, hi = 0.1, 1
	}
	if hi/lo > 20 {
		// Under faults the tail is orders of magnitude above the median:
		// plot log10(ms) on a linear axis labelled in ms. (plot.LogScale
		// places the axis label's box at the arithmetic middle of the
		// range, which shrinks the chart.)
		for _, xys := range []plotter.XYs{p50, p99, pmax} {
			for i := range xys {
				xys[i].Y = math.Log10(xys[i].Y)
			}
		}
		p.Y.Tick.Marker = logTicks{}
		p.Y.Label.Text = "ack latency (ms, log scale)"
		p.Y.Min, p.Y.Max = math.Log10(lo/1.5), math.Log10(hi*1.5)
	} else {
		p.Y.Min, p.Y.Max = 0, hi*1.1
	}
	lines, err := newLines(leg, []string{"p50", "p99", "max"}, 1.5*a.width.Seconds(), p50, p99, pmax)
	if err != nil {
		return chart{}, err
	}
	fs.shade(p, leg, p.Y.Min, p.Y.Max)
	p.Add(lines...)
	return render(p, leg, chartWidth, chartHeight)
}

// anomalyLabel names the fault timeline's row marking when anomalies began.
const anomalyLabel = "anomalies"

var anomalyColor = color.NRGBA{R: 0xc0, G: 0x10, B: 0x10, A: 0xff}

func faultChart(a *aggregates, fs *faultShades) (chart, error) {
	p, _ := newPlot(a, "Fault timeline", "")
	rows := len(fs.kinds)
	ticks := make(plot.ConstantTicks, 0, rows+1)
	for row, kind := range fs.kinds {
		ticks = append(ticks, plot.Tick{Value: float64(row), Label: kind})
		pg, err := fs.polygon(kind, float64(row)-0.35, float64(row)+0.35, 0.9, fs.minWidth*2)
		if err != nil {
			return chart{}, err
		}
		p.Add(pg)
	}
	if marks := anomalyMarks(a.anomalyAt, float64(rows), fs.minWidth); marks != nil {
		// When the anomalies' first ops happened, against the faults.
		ticks = append(ticks, plot.Tick{Value: float64(rows), Label: anomalyLabel})
		p.Add(marks)
		rows++
	}
	p.Y.Min, p.Y.Max = -0.6, math.Max(0.6, float64(rows)-0.4)
	p.Y.Tick.Marker = ticks
	p.Y.Tick.Label.Font.Size = vg.Points(9)
	switch {
	case len(fs.kinds) == 0 && len(a.anomalyAt) == 0:
		p.Title.Text = "Fault timeline (no fault injected)"
	case len(a.anomalyAt) > 0:
		p.Title.Text = "Fault timeline, and when each anomaly's first op happened"
	}
	h := 3*vg.Centimeter + vg.Length(max(1, rows))*vg.Centimeter
	return render(p, nil, chartWidth, h)
}

// anomalyMarks are thin red bars at the given times (sorted), merged
// where closer than minWidth; nil when there are none.
func anomalyMarks(at []time.Duration, row, minWidth float64) *plotter.Polygon {
	var rings []plotter.XYer
	last := math.Inf(-1)
	for _, t := range at {
		x := t.Seconds()
		if x-last < minWidth {
			continue // one mark stands for anomalies within a pixel or so
		}
		last = x
		x0, x1 := x-minWidth/2, x+minWidth/2
		rings = append(rings, plotter.XYs{{X: x0, Y: row - 0.35}, {X: x1, Y: row - 0.35}, {X: x1, Y: row + 0.35}, {X: x0, Y: row + 0.35}})
	}
	if len(rings) == 0 {
		return nil
	}
	pg, err := plotter.NewPolygon(rings...)
	if err != nil {
		return nil // finite coordinates always make a polygon
	}
	pg.Color = anomalyColor
	pg.LineStyle.Width = 0
	return pg
}

// newPlot is a plot with a time axis covering the history, and its
// legend, drawn beside it rather than over the data.
func newPlot(a *aggregates, title, ylabel string) (*plot.Plot, *plot.Legend) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "time since start (s)"
	p.Y.Label.Text = ylabel
	p.X.Min, p.X.Max = 0, math.Max(1, a.span.Seconds())
	p.Add(plotter.NewGrid())
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	leg.TextStyle.Font.Size = vg.Points(9)
	leg.YOffs = -vg.Centimeter
	return p, &leg
}

// newLines makes a line of each series, named in leg; the caller adds
// them to the plot after the fault shades, so they are drawn on top. A
// series breaks where consecutive points are more than gap apart (no
// data there, e.g. no ack during a pause), rather than bridging the gap
// with a slope that was never measured; gap 0 never breaks.
func newLines(leg *plot.Legend, names []string, gap float64, series ...plotter.XYs) ([]plot.Plotter, error) {
	var out []plot.Plotter
	for i, xys := range series {
		for j, seg := range segments(xys, gap) {
			l, err := plotter.NewLine(seg)
			if err != nil {
				return nil, fmt.Errorf("drawing %s: %w", names[i], err)
			}
			l.Color = lineColors[i%len(lineColors)]
			l.Width = vg.Points(1.2)
			out = append(out, l)
			if len(seg) == 1 {
				// A lone point draws no line: mark it.
				dot, err := plotter.NewScatter(seg)
				if err != nil {
					return nil, fmt.Errorf("drawing %s: %w", names[i], err)
				}
				dot.GlyphStyle = draw.GlyphStyle{Color: l.Color, Radius: vg.Points(1.5), Shape: draw.CircleGlyph{}}
				out = append(out, dot)
			}
			if j == 0 {
				leg.Add(names[i], l)
			}
		}
	}
	return out, nil
}

func segments(xys plotter.XYs, gap float64) []plotter.XYs {
	var out []plotter.XYs
	start := 0
	for i := 1; i <= len(xys); i++ {
		if i == len(xys) || (gap > 0 && xys[i].X-xys[i-1].X > gap) {
			out = append(out, xys[start:i])
			start = i
		}
	}
	if len(xys) == 0 {
		return nil
	}
	return out
}

// legendWidth is the strip right of a chart that holds its legend.
const legendWidth = 4.5 * vg.Centimeter

// render draws p, and leg (if any) to its right, as inline SVG: the
// document without its XML prolog. The chart's title is the page's
// heading, not drawn.
func render(p *plot.Plot, leg *plot.Legend, w, h vg.Length) (chart, error) {
	title := p.Title.Text
	p.Title.Text = ""
	c := vgsvg.New(w, h)
	dc := draw.New(c)
	if leg != nil {
		leg.Draw(draw.Crop(dc, w-legendWidth+vg.Centimeter/4, 0, 0, 0))
	}
	// Every chart leaves the legend's strip, so their time axes line up.
	p.Draw(draw.Crop(dc, 0, -legendWidth, 0, 0))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return chart{}, fmt.Errorf("drawing %q: %w", title, err)
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	return chart{Title: title, SVG: s}, nil
}

// logTicks mark an axis of log10 values: a labelled tick at each power of
// ten, minor ones at its multiples, within [lo, hi].
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for e := math.Floor(lo); e <= math.Ceil(hi); e++ {
		for m := 1; m < 10; m++ {
			v := e + math.Log10(float64(m))
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 {
				t.Label = strconv.FormatFloat(math.Pow(10, e), 'f', -1, 64)
			}
			out = append(out, t)
		}
	}
	return out
}

func ms(d time.Duration) float64 {
	return math.Max(float64(d)/float64(time.Millisecond), 0.001)
}

func bucketName(w time.Duration) string {
	if w == time.Second {
		return "second"
	}
	return fmt.Sprintf("%d s", int64(w/time.Second))
}

func (a *aggregates) bucketMid(i int) float64 {
	start := time.Duration(i) * a.width
	return (start + time.Duration(a.bucketSeconds(i)*float64(time.Second))/2).Seconds()
}

// faultShades are the fault windows merged per kind: windows of one kind
// that overlap or nearly touch (closer than a 600th of the run, about a pixel) become
// one, so a soak's thousand faults draw as a bounded number of shapes.
type faultShades struct {
	kinds    []string
	windows  map[string][][2]float64 // seconds
	minWidth float64                 // seconds: the narrowest window drawn
}

func newFaultShades(a *aggregates) *faultShades {
	fs := &faultShades{windows: map[string][][2]float64{}, minWidth: math.Max(a.span.Seconds(), 1) / 600}
	for _, w := range a.faults {
		s, e := w.Start.Seconds(), w.End.Seconds()
		ws := fs.windows[w.Kind]
		if n := len(ws); n > 0 && s <= ws[n-1][1]+fs.minWidth {
			ws[n-1][1] = math.Max(ws[n-1][1], e)
			continue
		}
		if ws == nil {
			fs.kinds = append(fs.kinds, w.Kind)
		}
		fs.windows[w.Kind] = append(ws, [2]float64{s, e})
	}
	sort.Strings(fs.kinds)
	return fs
}

// shade adds a translucent band from y0 to y1 over each fault window,
// one legend entry per kind. Plotters draw in the order added, so the
// lines added after it are drawn over it.
func (fs *faultShades) shade(p *plot.Plot, leg *plot.Legend, y0, y1 float64) {
	for _, kind := range fs.kinds {
		pg, err := fs.polygon(kind, y0, y1, shadeAlpha, fs.minWidth)
		if err != nil {
			continue // no window: nothing to shade
		}
		p.Add(pg)
		leg.Add("fault: "+kind, pg)
	}
}

// polygon is kind's windows as rectangles from y0 to y1, each at least
// minWidth seconds wide so that an instant fault shows.
func (fs *faultShades) polygon(kind string, y0, y1, alpha, minWidth float64) (*plotter.Polygon, error) {
	ws := fs.windows[kind]
	rings := make([]plotter.XYer, len(ws))
	for i, w := range ws {
		x1 := math.Max(w[1], w[0]+minWidth)
		rings[i] = plotter.XYs{{X: w[0], Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: w[0], Y: y1}}
	}
	pg, err := plotter.NewPolygon(rings...)
	if err != nil {
		return nil, fmt.Errorf("drawing fault %s: %w", kind, err)
	}
	c := faultColors[fs.index(kind)%len(faultColors)]
	c.A = uint8(alpha * 255)
	pg.Color = c
	pg.LineStyle.Width = 0
	return pg, nil
}

func (fs *faultShades) index(kind string) int {
	return sort.SearchStrings(fs.kinds, kind)
}
