package benchrun

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// logBars is one series of bars on a log axis, each labelled with its
// value. gonum's BarChart draws from 0, which a log axis cannot place;
// these bars rise from the axis' floor instead, so that 830 ops/s beside
// 56 K is a bar one can see and read rather than a line on the axis.
type logBars struct {
	values []float64 // by name index; 0 for none
	// low and high, when set, draw a whisker over each bar from low to
	// high (by name index; 0 for none).
	low, high []float64
	width     vg.Length
	offset    vg.Length // of this series' bars from the name's tick
	color     color.Color
	label     draw.TextStyle
	format    func(float64) string
}

// Plot implements plot.Plotter.
func (b *logBars) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	floor := c.Min.Y
	for i, v := range b.values {
		if v <= 0 || v < plt.Y.Min {
			continue
		}
		x := trX(float64(i)) + b.offset
		if !c.ContainsX(x) {
			continue
		}
		top := trY(math.Min(v, plt.Y.Max))
		left, right := x-b.width/2, x+b.width/2
		c.FillPolygon(b.color, []vg.Point{{X: left, Y: floor}, {X: left, Y: top}, {X: right, Y: top}, {X: right, Y: floor}})
		labelAt := top
		if i < len(b.low) && b.low[i] > 0 && b.high[i] >= b.low[i] {
			lo, hi := trY(math.Max(b.low[i], plt.Y.Min)), trY(math.Min(b.high[i], plt.Y.Max))
			ws := draw.LineStyle{Color: color.Gray{Y: 40}, Width: vg.Points(1)}
			c.StrokeLine2(ws, x, lo, x, hi)
			c.StrokeLine2(ws, x-b.width/4, lo, x+b.width/4, lo)
			c.StrokeLine2(ws, x-b.width/4, hi, x+b.width/4, hi)
			labelAt = max(top, hi)
		}
		sty := b.label
		text := b.format(v)
		if sty.Width(text) > b.width {
			// Too wide for the bar: stand it up.
			sty.Rotation, sty.XAlign, sty.YAlign = math.Pi/2, draw.XLeft, draw.YCenter
		} else {
			sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
		}
		c.FillText(sty, vg.Point{X: x, Y: labelAt + vg.Points(2)}, text)
	}
}

// DataRange implements plot.DataRanger: the positive values only.
func (b *logBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	ymin, ymax = math.Inf(1), math.Inf(-1)
	for _, v := range b.values {
		if v > 0 {
			ymin, ymax = math.Min(ymin, v), math.Max(ymax, v)
		}
	}
	return 0, float64(len(b.values) - 1), ymin, ymax
}

// Thumbnail implements plot.Thumbnailer, for the legend.
func (b *logBars) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Min.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Min.Y}}
	c.FillPolygon(b.color, c.ClipPolygonY(pts))
}

// logTicks labels a log axis at 1, 2 and 5 times each power of ten, the
// 2 and 5 unlabelled when the axis spans more than two decades, with
// compactLabel's "2.5 K" style.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(min, max float64) []plot.Tick {
	if min <= 0 || max <= min {
		return nil
	}
	lo, hi := math.Floor(math.Log10(min)), math.Ceil(math.Log10(max))
	minorLabels := hi-lo <= 2
	var ticks []plot.Tick
	for e := lo; e <= hi; e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v < min || v > max {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || minorLabels {
				t.Label = compactLabel(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}
