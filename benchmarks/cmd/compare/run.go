package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"
	"time"

	bench "github.com/bloomkit/bloomkit/benchmarks"
)

// Result is what one variant measured on one workload. Times are ns per
// key; a zero time was not measured (not offered, or not safe).
type Result struct {
	Part       string // "size" (timed) or "sweep" (accuracy only)
	Variant    string
	Kind       bench.Kind
	Ours       bool
	Static     bool
	Keys       string
	N          uint64
	P          float64 // the p asked for
	Target     float64 // the rate promised: p, or a static filter's fixed rate
	Bytes      uint64
	BitsPerKey float64

	AddNs         float64 `json:",omitempty"` // add one key (static: build, per key)
	BatchAddNs    float64 `json:",omitempty"` // add through AddMany, per key
	HitNs         float64 `json:",omitempty"`
	MissNs        float64 `json:",omitempty"`
	BatchHitNs    float64 `json:",omitempty"`
	BatchMissNs   float64 `json:",omitempty"`
	ParallelHitNs float64 `json:",omitempty"` // wall time per lookup, GOMAXPROCS goroutines
	LookupAllocs  int64   // allocations per lookup (hit)
	OpenNs        float64 `json:",omitempty"` // map the file read-only and close it

	FP, Trials   uint64
	FPR          float64
	FPRLo, FPRHi float64 // 95% Wilson interval
	Above        bool    // above the target beyond reasonable doubt (99.9% interval)
	FalseNeg     uint64
}

// Ratio is the measured rate over the target.
func (r *Result) Ratio() float64 { return r.FPR / r.Target }

// Run is everything one run measured, with what it ran on.
type Run struct {
	Machine   Machine
	Config    RunConfig
	Started   time.Time
	Duration  string
	LoadStart string `json:",omitempty"` // /proc/loadavg (1, 5, 15 min) when the run started
	LoadEnd   string `json:",omitempty"` // and when it ended
	Results   []*Result
	Skipped   []string
	Reruns    []*Rerun `json:",omitempty"` // later runs merged in (-merge)
}

// RunConfig is what a run was told.
type RunConfig struct {
	Sizes, URLSizes []uint64
	P               float64
	Sweep           []float64
	SweepN          uint64
	SweepErrors     float64
	FPRTrials       uint64
	BenchTime       string
	Reps            int
	SummaryN        uint64
	Variants        []string `json:",omitempty"` // the variants asked for
}

func run(cfg *config, stdout, stderr io.Writer) error {
	logf := func(format string, a ...any) {
		if !cfg.quiet {
			fmt.Fprintf(stderr, format+"\n", a...)
		}
	}
	testing.Init()
	if err := flag.Set("test.benchtime", cfg.benchTime.String()); err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "bloomkit-compare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	r := newRun(cfg)

	var workloads []bench.Workload
	for _, n := range cfg.sizes {
		workloads = append(workloads, bench.Workload{Keys: bench.Key16, N: n, P: cfg.p})
	}
	for _, n := range cfg.urlSizes {
		workloads = append(workloads, bench.Workload{Keys: bench.URL60, N: n, P: cfg.p})
	}
	for _, w := range workloads {
		var vs []*bench.Variant
		for _, v := range cfg.variants {
			if skip := cfg.skip(v, w); skip != "" {
				r.Skipped = append(r.Skipped, fmt.Sprintf("%s at %v: %s", v.Name, w, skip))
				continue
			}
			vs = append(vs, v)
		}
		res, err := measureWorkload(cfg, w, vs, tmp, logf)
		if err != nil {
			return err
		}
		r.Results = append(r.Results, res...)
		release()
		if err := checkpoint(r, cfg.out); err != nil {
			return err
		}
	}
	for _, p := range cfg.sweep {
		w := bench.Workload{Keys: bench.Key16, N: cfg.sweepN, P: p}
		trials := max(cfg.fprTrials, min(cfg.maxTrials, uint64(math.Ceil(cfg.sweepErrors/p))))
		for _, v := range cfg.variants {
			if v.Static() && p != cfg.sweep[0] {
				continue // its rate does not depend on p: measured once
			}
			if v.Static() {
				trials = max(cfg.fprTrials, min(cfg.maxTrials, uint64(math.Ceil(cfg.sweepErrors/v.Rate))))
			}
			logf("%-16s sweep %v, %d negatives", v.Name, w, trials)
			res, err := accuracy(v, w, trials, cfg.fprTrials, cfg.sweepBudget)
			if err != nil {
				return err
			}
			r.Results = append(r.Results, res)
			release()
		}
	}
	r.Duration = time.Since(r.Started).Round(time.Second).String()
	r.LoadEnd = loadAverage()
	if err := write(r, cfg.out, stdout); err != nil {
		return err
	}
	logf("wrote %s (results.md, results.json, *.png) in %s", cfg.out, r.Duration)
	return nil
}

// newRun starts the record of a run of cfg.
func newRun(cfg *config) *Run {
	r := &Run{Machine: describeMachine(), Started: time.Now(), LoadStart: loadAverage()}
	r.Config.Sizes, r.Config.URLSizes, r.Config.P = cfg.sizes, cfg.urlSizes, cfg.p
	r.Config.Sweep, r.Config.SweepN, r.Config.SweepErrors = cfg.sweep, cfg.sweepN, cfg.sweepErrors
	r.Config.FPRTrials, r.Config.BenchTime, r.Config.SummaryN = cfg.fprTrials, cfg.benchTime.String(), cfg.summaryN
	r.Config.Reps = cfg.reps
	for _, v := range cfg.variants {
		r.Config.Variants = append(r.Config.Variants, v.Name)
	}
	return r
}

// checkpoint writes what a run has measured so far to results.json, so an
// interrupted long run keeps its numbers (-render draws them).
func checkpoint(r *Run, dir string) error {
	js, err := json.MarshalIndent(r, "", "\t")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "results.json"), append(js, '\n'), 0o644)
}

// write prints the report of r and writes it, the JSON and the plots to dir.
func write(r *Run, dir string, stdout io.Writer) error {
	md := report(r)
	if _, err := io.WriteString(stdout, md); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.md"), []byte(md), 0o644); err != nil {
		return err
	}
	if err := checkpoint(r, dir); err != nil {
		return err
	}
	return plots(r, dir)
}

// render redraws the report and plots of a results.json into dir, measuring
// nothing. The results of each file in merges first replace the same cells
// of file's run (see merge); dir then gets the merged results.json.
func render(file string, merges []string, dir string, stdout io.Writer) error {
	r, err := readRun(file)
	if err != nil {
		return err
	}
	for _, m := range merges {
		later, err := readRun(m)
		if err != nil {
			return err
		}
		if err := merge(r, later); err != nil {
			return fmt.Errorf("merging %s: %w", m, err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return write(r, dir, stdout)
}

func readRun(file string) (*Run, error) {
	js, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var r Run
	if err := json.Unmarshal(js, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &r, nil
}

// skip says why v is not measured on w, or "".
func (cfg *config) skip(v *bench.Variant, w bench.Workload) string {
	if v.Static() && w.N > cfg.staticMaxN {
		return fmt.Sprintf("static filters only up to n = %s (-static-max-n)", bench.FormatCount(cfg.staticMaxN))
	}
	if w.N >= cfg.bigN && cfg.bigVariants != nil && !slices.Contains(cfg.bigVariants, v) {
		return fmt.Sprintf("not in -big-variants for n >= %s", bench.FormatCount(cfg.bigN))
	}
	return ""
}

// release returns the memory of the last filter before the next one is
// built, so large filters do not pile up.
func release() {
	runtime.GC()
	debug.FreeOSMemory()
}

func nsPerOp(r testing.BenchmarkResult) float64 {
	if r.N == 0 {
		return math.NaN()
	}
	return float64(r.T.Nanoseconds()) / float64(r.N)
}

func newResult(part string, v *bench.Variant, b *bench.Built) *Result {
	return &Result{
		Part: part, Variant: v.Name, Kind: v.Kind, Ours: v.Ours, Static: v.Static(),
		Keys: b.Keys.String(), N: b.N, P: b.P, Target: v.TargetRate(b.P),
		Bytes: b.Filter.Bytes(), BitsPerKey: b.BitsPerKey(), AddNs: b.AddNs,
	}
}

func (res *Result) setRate(r bench.Rate) {
	res.FP, res.Trials, res.FPR = r.Positives, r.Trials, r.Value()
	res.FPRLo, res.FPRHi = r.Interval()
	res.Above = r.Above(res.Target)
}

// pending is a built filter whose timed lookups are still to run.
type pending struct {
	v      *bench.Variant
	res    *Result
	built  *bench.Built
	timers []timer
}

// timer is one timed lookup benchmark and where its time goes.
type timer struct {
	f      func(*testing.B)
	ns     *float64
	allocs *int64
}

// measureWorkload measures vs on w. Filters are built one at a time (the
// add times); those up to -alone-mib are kept while they fit in -keep-mib,
// larger ones are timed alone right after their build. Then every kept
// filter's lookups are timed, all of them once per round, -reps rounds, and
// each keeps its fastest. Interleaving the rounds spreads every filter's
// runs over the whole batch, so a burst of load from a neighbour on a
// shared machine cannot spoil all runs of one filter.
func measureWorkload(cfg *config, w bench.Workload, vs []*bench.Variant, tmp string, logf func(string, ...any)) ([]*Result, error) {
	pools := bench.NewPools(w)
	var out []*Result
	var batch []*pending
	var kept uint64
	for _, v := range vs {
		logf("%-16s %v", v.Name, w)
		t0 := time.Now()
		// The AddMany fills go first: the filter that is timed must be the
		// one built last, its memory still warm (see flush).
		batchNs, batchOK, err := bench.BatchAddTimed(v, w, cfg.benchTime*time.Duration(cfg.reps))
		if err != nil {
			return nil, err
		}
		b, err := bench.BuildTimed(v, w, cfg.benchTime*time.Duration(cfg.reps))
		if err != nil {
			return nil, err
		}
		res := newResult("size", v, b)
		if batchOK {
			res.BatchAddNs = batchNs
		}
		t1 := time.Now()
		res.setRate(b.FalsePositives(cfg.fprTrials))
		if w.N <= 1e6 {
			res.FalseNeg = b.FalseNegatives()
		}
		if cfg.verbose {
			logf("\tbuild %v, rates %v", t1.Sub(t0).Round(time.Millisecond), time.Since(t1).Round(time.Millisecond))
		}
		p := &pending{v: v, res: res, built: b}
		add := func(f func(*testing.B), ns *float64) {
			*ns = math.Inf(1)
			p.timers = append(p.timers, timer{f, ns, nil})
		}
		add(bench.LookupBench(b.Filter, pools.Hits), &res.HitNs)
		p.timers[0].allocs = &res.LookupAllocs
		add(bench.LookupBench(b.Filter, pools.Misses), &res.MissNs)
		if bf, ok := b.Filter.(bench.BatchFilter); ok {
			add(bench.BatchLookupBench(bf, pools.Hits), &res.BatchHitNs)
			add(bench.BatchLookupBench(bf, pools.Misses), &res.BatchMissNs)
		}
		if v.ConcurrentLookups {
			add(bench.ParallelLookupBench(b.Filter, pools.Hits), &res.ParallelHitNs)
		}
		out = append(out, res)
		if b.Filter.Bytes() > cfg.aloneBytes {
			// Timed alone, right after its build: on this VM the memory of a
			// large filter left untouched while others are built goes cold
			// at the host (microseconds a probe, no guest page fault).
			if err := cfg.flush([]*pending{p}, tmp, logf); err != nil {
				return nil, err
			}
			continue
		}
		batch = append(batch, p)
		if kept += b.Filter.Bytes(); kept > cfg.keepBytes {
			if err := cfg.flush(batch, tmp, logf); err != nil {
				return nil, err
			}
			batch, kept = nil, 0
		}
	}
	return out, cfg.flush(batch, tmp, logf)
}

// flush times the lookups of the batch in interleaved rounds, then the open
// time of the bloomkit filters' files, and lets the filters go.
func (cfg *config) flush(batch []*pending, tmp string, logf func(string, ...any)) error {
	if len(batch) == 0 {
		return nil
	}
	start := time.Now()
	for range cfg.reps {
		for _, p := range batch {
			for _, t := range p.timers {
				r := testing.Benchmark(t.f)
				if ns := nsPerOp(r); ns < *t.ns {
					*t.ns = ns
					if t.allocs != nil {
						*t.allocs = r.AllocsPerOp()
					}
				}
			}
		}
	}
	if cfg.verbose {
		logf("\ttimed lookups of %d filters: %v", len(batch), time.Since(start).Round(time.Millisecond))
	}
	for _, p := range batch {
		b := p.built
		p.built, p.timers = nil, nil
		if p.v.Open == nil || b.Keys != bench.Key16 {
			continue
		}
		path := filepath.Join(tmp, p.v.Name+".bloom")
		if err := b.Filter.(bench.FileFilter).WriteFile(path); err != nil {
			return err
		}
		b = nil
		release()
		p.res.OpenNs = math.Inf(1)
		for range cfg.reps {
			if ns := nsPerOp(testing.Benchmark(bench.OpenBench(p.v, path))); ns < p.res.OpenNs {
				p.res.OpenNs = ns
			}
		}
		if err := os.Remove(path); err != nil {
			return err
		}
	}
	release()
	return nil
}

func accuracy(v *bench.Variant, w bench.Workload, trials, minTrials uint64, budget time.Duration) (*Result, error) {
	b, err := bench.Build(v, w)
	if err != nil {
		return nil, err
	}
	res := newResult("sweep", v, b)
	res.AddNs = 0
	res.FalseNeg = b.FalseNegatives()
	res.setRate(b.FalsePositivesWithin(trials, minTrials, budget))
	return res, nil
}
