package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	bench "github.com/bloomkit/bloomkit/benchmarks"
)

// The plots of a run, written as PNG into dir.
func plots(r *Run, dir string) error {
	size := filter(r.Results, func(x *Result) bool { return x.Part == "size" && x.Keys == bench.Key16.String() })
	sweep := filter(r.Results, func(x *Result) bool { return x.Part == "sweep" })
	type job struct {
		file string
		make func() (*plot.Plot, []series, error)
	}
	var jobs []job
	if len(sizesOf(size)) >= 2 {
		p := bench.FormatRate(r.Config.P)
		jobs = append(jobs,
			job{"lookup_miss_vs_size.png", func() (*plot.Plot, []series, error) {
				return sizePlot(size, "Lookup of a never-added key (16B keys, p = "+p+")", "ns per lookup (miss)", func(x *Result) float64 { return x.MissNs })
			}},
			job{"lookup_hit_vs_size.png", func() (*plot.Plot, []series, error) {
				return sizePlot(size, "Lookup of an added key (16B keys, p = "+p+")", "ns per lookup (hit)", func(x *Result) float64 { return x.HitNs })
			}},
			job{"add_vs_size.png", func() (*plot.Plot, []series, error) {
				return sizePlot(size, "Add, filling a filter for n keys (16B keys, p = "+p+")", "ns per key added", func(x *Result) float64 { return x.AddNs })
			}},
		)
	}
	if len(sweep) > 0 {
		jobs = append(jobs,
			job{"fpr_vs_target.png", func() (*plot.Plot, []series, error) { return ratePlot(sweep) }},
			job{"fpr_ratio_vs_target.png", func() (*plot.Plot, []series, error) { return ratioPlot(sweep) }},
			job{"bits_vs_target.png", func() (*plot.Plot, []series, error) { return bitsPlot(sweep) }},
		)
	}
	for _, j := range jobs {
		p, ss, err := j.make()
		if err != nil {
			return fmt.Errorf("%s: %w", j.file, err)
		}
		if err := save(p, ss, filepath.Join(dir, j.file)); err != nil {
			return fmt.Errorf("%s: %w", j.file, err)
		}
	}
	return nil
}

// series is one variant's line, for the legend.
type series struct {
	name  string
	thumb []plot.Thumbnailer
}

// palette: bloomkit's variants get the strong colors and solid lines,
// peers the rest with dashes.
var (
	ourColors = []color.Color{
		color.RGBA{0x1f, 0x4e, 0xd8, 255}, // blue
		color.RGBA{0xd6, 0x27, 0x28, 255}, // red
		color.RGBA{0x2c, 0xa0, 0x2c, 255}, // green
		color.RGBA{0x94, 0x27, 0xbd, 255}, // purple
		color.RGBA{0x00, 0x80, 0x80, 255}, // teal
	}
	peerColors = []color.Color{
		color.RGBA{0xff, 0x7f, 0x0e, 255},
		color.RGBA{0x8c, 0x56, 0x4b, 255},
		color.RGBA{0xe3, 0x77, 0xc2, 255},
		color.RGBA{0x7f, 0x7f, 0x7f, 255},
		color.RGBA{0xbc, 0xbd, 0x22, 255},
		color.RGBA{0x17, 0xbe, 0xcf, 255},
		color.RGBA{0x00, 0x00, 0x00, 255},
		color.RGBA{0xa6, 0x76, 0x1d, 255},
		color.RGBA{0x66, 0x66, 0xaa, 255},
		color.RGBA{0x55, 0xaa, 0x55, 255},
	}
	glyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{},
		draw.CrossGlyph{}, draw.PlusGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}}
)

// styles assigns every variant of the registry a fixed look, so a variant
// looks the same in every plot.
func styleOf(name string) (color.Color, []vg.Length, draw.GlyphDrawer, vg.Length) {
	ours, peers := 0, 0
	for i, v := range bench.Variants() {
		if v.Name == name {
			if v.Ours {
				return ourColors[ours%len(ourColors)], nil, glyphs[i%len(glyphs)], vg.Points(2.2)
			}
			return peerColors[peers%len(peerColors)], []vg.Length{vg.Points(5), vg.Points(3)}, glyphs[i%len(glyphs)], vg.Points(1.2)
		}
		if v.Ours {
			ours++
		} else {
			peers++
		}
	}
	return color.Black, nil, draw.CircleGlyph{}, 1
}

func line(name string, xys plotter.XYs) (*plotter.Line, *plotter.Scatter, error) {
	l, s, err := plotter.NewLinePoints(xys)
	if err != nil {
		return nil, nil, err
	}
	c, dashes, g, w := styleOf(name)
	l.Color, l.Dashes, l.Width = c, dashes, w
	s.Color, s.Shape, s.Radius = c, g, vg.Points(3)
	return l, s, nil
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	return p
}

// sizePlot draws get against the filter's size in bytes, a line per variant.
func sizePlot(rows []*Result, title, ylabel string, get func(*Result) float64) (*plot.Plot, []series, error) {
	p := newPlot(title, "filter size in memory (bytes, log scale)", ylabel+" (log scale)")
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = bytesTicks{}, ratioTicks{}
	var ss []series
	for _, v := range variantsOf(rows) {
		var xys plotter.XYs
		for _, n := range sizesOf(rows) {
			for _, x := range rows {
				if x.Variant == v.Variant && x.N == n && get(x) > 0 && !math.IsNaN(get(x)) {
					xys = append(xys, plotter.XY{X: float64(x.Bytes), Y: get(x)})
				}
			}
		}
		if len(xys) == 0 {
			continue
		}
		l, s, err := line(v.Variant, xys)
		if err != nil {
			return nil, nil, err
		}
		p.Add(l, s)
		ss = append(ss, series{v.Variant, []plot.Thumbnailer{l, s}})
	}
	return p, ss, nil
}

// bytesTicks labels a log axis of bytes at powers of 1024... as powers of
// ten with binary units.
type bytesTicks struct{}

func (bytesTicks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		v := math.Pow(10, e)
		if v < min || v > max {
			continue
		}
		ts = append(ts, plot.Tick{Value: v, Label: decimalBytes(v)})
		for k := 2.0; k < 10; k++ {
			if w := k * v; w >= min && w <= max {
				ts = append(ts, plot.Tick{Value: w})
			}
		}
	}
	return ts
}

func decimalBytes(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%gGB", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%gMB", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%gkB", v/1e3)
	}
	return fmt.Sprintf("%gB", v)
}

// ratePlot draws measured rate against target rate, log-log, with the 95%
// intervals and the line measured = target.
func ratePlot(rows []*Result) (*plot.Plot, []series, error) {
	p := newPlot("Measured false-positive rate against the target (16B keys)", "target rate p (log scale)", "measured rate (log scale)")
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = rateTicks{}, rateTicks{}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range rows {
		lo, hi = math.Min(lo, x.Target), math.Max(hi, x.Target)
	}
	ref, err := plotter.NewLine(plotter.XYs{{X: lo / 2, Y: lo / 2}, {X: hi * 2, Y: hi * 2}})
	if err != nil {
		return nil, nil, err
	}
	ref.Color, ref.Dashes, ref.Width = color.Gray{0x99}, []vg.Length{vg.Points(2), vg.Points(2)}, vg.Points(1)
	p.Add(ref)
	ss := []series{{"measured = target", []plot.Thumbnailer{ref}}}
	for _, v := range variantsOf(rows) {
		var xys plotter.XYs
		var errs plotter.YErrors
		for _, x := range rows {
			if x.Variant != v.Variant || x.FP == 0 {
				continue // log scale: a point with no false positive is not drawn
			}
			xys = append(xys, plotter.XY{X: x.Target, Y: x.FPR})
			errs = append(errs, struct{ Low, High float64 }{x.FPR - x.FPRLo, x.FPRHi - x.FPR})
		}
		if len(xys) == 0 {
			continue
		}
		l, s, err := line(v.Variant, xys)
		if err != nil {
			return nil, nil, err
		}
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{xys, errs})
		if err != nil {
			return nil, nil, err
		}
		eb.Color = l.Color
		p.Add(eb, l, s)
		ss = append(ss, series{v.Variant, []plot.Thumbnailer{l, s}})
	}
	return p, ss, nil
}

// ratioPlot draws measured rate over target against the target: the
// log-log plot's deviations, magnified.
func ratioPlot(rows []*Result) (*plot.Plot, []series, error) {
	p := newPlot("Measured rate over target (16B keys; 1 = as promised, above 1 = worse)", "target rate p (log scale)", "measured / target (log scale)")
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = rateTicks{}, ratioTicks{}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range rows {
		lo, hi = math.Min(lo, x.Target), math.Max(hi, x.Target)
	}
	ref, err := plotter.NewLine(plotter.XYs{{X: lo / 2, Y: 1}, {X: hi * 2, Y: 1}})
	if err != nil {
		return nil, nil, err
	}
	ref.Color, ref.Dashes, ref.Width = color.Gray{0x99}, []vg.Length{vg.Points(2), vg.Points(2)}, vg.Points(1)
	p.Add(ref)
	ss := []series{{"measured = target", []plot.Thumbnailer{ref}}}
	for _, v := range variantsOf(rows) {
		var xys plotter.XYs
		var errs plotter.YErrors
		for _, x := range rows {
			if x.Variant != v.Variant || x.FP == 0 {
				continue
			}
			r := x.Ratio()
			xys = append(xys, plotter.XY{X: x.Target, Y: r})
			errs = append(errs, struct{ Low, High float64 }{r - x.FPRLo/x.Target, x.FPRHi/x.Target - r})
		}
		if len(xys) == 0 {
			continue
		}
		l, s, err := line(v.Variant, xys)
		if err != nil {
			return nil, nil, err
		}
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{xys, errs})
		if err != nil {
			return nil, nil, err
		}
		eb.Color = l.Color
		p.Add(eb, l, s)
		ss = append(ss, series{v.Variant, []plot.Thumbnailer{l, s}})
	}
	return p, ss, nil
}

// rateTicks marks a log axis of rates at the powers of ten, labelled 1e-05
// style (plot.LogTicks prints 9.999999999999999e-06).
type rateTicks struct{}

func (rateTicks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		v, _ := strconv.ParseFloat(fmt.Sprintf("1e%d", int(e)), 64)
		if v >= min*(1-1e-9) && v <= max*(1+1e-9) {
			ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
		}
		for k := 2.0; k < 10; k++ {
			if w := k * v; w >= min && w <= max {
				ts = append(ts, plot.Tick{Value: w})
			}
		}
	}
	return ts
}

// ratioTicks marks a log axis of ratios at 0.1, 0.2, 0.5, 1, 2, 5, ...
type ratioTicks struct{}

func (ratioTicks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		for _, k := range []float64{1, 2, 5} {
			v := k * math.Pow(10, e)
			if v >= min && v <= max {
				ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	return ts
}

// bitsPlot draws bits per key against the target rate, with the classic
// Bloom filter's optimum (1.44 log2 1/p) and the lower bound (log2 1/p).
func bitsPlot(rows []*Result) (*plot.Plot, []series, error) {
	p := newPlot("Memory against target rate (16B keys)", "target rate p (log scale)", "bits per key")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = rateTicks{}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range rows {
		lo, hi = math.Min(lo, x.Target), math.Max(hi, x.Target)
	}
	var ss []series
	for _, ref := range []struct {
		name string
		f    func(p float64) float64
		dash []vg.Length
	}{
		{"1.44·log2(1/p) (Bloom)", func(p float64) float64 { return math.Log2(1/p) / math.Ln2 }, []vg.Length{vg.Points(6), vg.Points(2)}},
		{"log2(1/p) (bound)", func(p float64) float64 { return math.Log2(1 / p) }, []vg.Length{vg.Points(2), vg.Points(2)}},
	} {
		var xys plotter.XYs
		for e := math.Log10(lo); e <= math.Log10(hi)+1e-9; e += 0.25 {
			q := math.Pow(10, e)
			xys = append(xys, plotter.XY{X: q, Y: ref.f(q)})
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, nil, err
		}
		l.Color, l.Dashes, l.Width = color.Gray{0x99}, ref.dash, vg.Points(1)
		p.Add(l)
		ss = append(ss, series{ref.name, []plot.Thumbnailer{l}})
	}
	for _, v := range variantsOf(rows) {
		var xys plotter.XYs
		for _, x := range rows {
			if x.Variant == v.Variant {
				xys = append(xys, plotter.XY{X: x.Target, Y: x.BitsPerKey})
			}
		}
		l, s, err := line(v.Variant, xys)
		if err != nil {
			return nil, nil, err
		}
		p.Add(l, s)
		ss = append(ss, series{v.Variant, []plot.Thumbnailer{l, s}})
	}
	p.Y.Min = 0
	return p, ss, nil
}

// save draws p with its legend to the right of it, as a PNG.
func save(p *plot.Plot, ss []series, path string) error {
	const w, h, legendW = 10 * vg.Inch, 5.5 * vg.Inch, 2.4 * vg.Inch
	img := vgimg.New(w, h)
	dc := draw.New(img)
	img.SetColor(color.White)
	img.Fill(dc.Rectangle.Path())
	p.Draw(draw.Crop(dc, 0, -legendW, 0, 0))
	l := plot.NewLegend()
	l.Top, l.Left = true, true
	l.YOffs = -vg.Points(30)
	for _, s := range ss {
		l.Add(s.name, s.thumb...)
	}
	l.Draw(draw.Crop(dc, w-legendW+vg.Points(10), 0, 0, 0))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
