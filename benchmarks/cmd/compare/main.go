// Command compare runs the bloomkit benchmark suite: every bloomkit variant
// and every peer library on one workload, in one run. It prints markdown
// tables and writes them, the raw results (results.json) and PNG plots to
// an output folder.
//
//	go run ./benchmarks/cmd/compare                        # about a minute on 2 cores
//	go run ./benchmarks/cmd/compare -full -out docs/img/benchmarks  # the run in docs/benchmarks.md
//
// The default run measures 16-byte keys at n = 1e4, 1e5, 1e6 and 2e6 (from
// inside the L1 cache to beyond L2) and 60-byte URL-like keys at n = 1e5,
// all at p = 1%, rates on 2e5 negatives, and an accuracy sweep of
// p = 1e-1 ... 1e-6 at n = 1e5. -full measures up to n = 1e9 (filters of
// 1.1 GiB and more), rates on 1e6 negatives, and sweeps at n = 1e6 with
// more negatives.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	bench "github.com/bloomkit/bloomkit/benchmarks"
)

// config is everything a run is told.
type config struct {
	sizes       []uint64  // n for 16-byte keys (the cache-cliff series)
	urlSizes    []uint64  // n for 60-byte URL-like keys
	p           float64   // target rate of the size series
	sweep       []float64 // target rates of the accuracy sweep
	sweepN      uint64
	sweepErrors float64       // sweep negatives: enough for this many expected false positives
	maxTrials   uint64        // cap on sweep negatives
	sweepBudget time.Duration // a sweep point stops after this, once it has fprTrials
	fprTrials   uint64        // negatives per measured rate, at least
	benchTime   time.Duration
	reps        int    // timed runs per measurement; the fastest counts
	keepBytes   uint64 // filters kept for interleaved timing rounds, at most
	aloneBytes  uint64 // filters larger than this are timed alone, right after their build
	variants    []*bench.Variant
	bigN        uint64           // sizes >= bigN use bigVariants only
	bigVariants []*bench.Variant // nil: all
	staticMaxN  uint64           // static filters are built only up to this n
	summaryN    uint64           // the workload of the summary table
	out         string
	quiet       bool     // no progress on stderr
	verbose     bool     // time the phases of each measurement
	render      string   // a results.json to redraw instead of measuring
	merge       []string // with render: results.json files merged in first
}

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(2)
	}
	if cfg.render != "" {
		err = render(cfg.render, cfg.merge, cfg.out, os.Stdout)
	} else {
		err = run(cfg, os.Stdout, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

// flagValues are the flags of compare, as parsed.
type flagValues struct {
	full        *bool
	sizes       *string
	urlSizes    *string
	p           *float64
	sweep       *string
	sweepN      *string
	sweepErrors *float64
	maxTrials   *string
	sweepBudget *time.Duration
	fprTrials   *string
	benchTime   *time.Duration
	reps        *int
	keep        *float64
	alone       *float64
	variants    *string
	bigN        *string
	bigVariants *string
	staticMaxN  *string
	summaryN    *string
	out         *string
	quiet       *bool
	verbose     *bool
	renderFile  *string
	mergeFiles  *string
}

// defineFlags defines compare's flags on fs.
func defineFlags(fs *flag.FlagSet) *flagValues {
	r := &flagValues{}
	r.full = fs.Bool("full", false, "the full run: sizes up to 1e9, sweep at n = 1e6 with 100 expected false positives per point (about 1.5 hours)")
	r.sizes = fs.String("sizes", "", "n for 16-byte keys (default 1e4,1e5,1e6,2e6; -full: 1e4,1e5,1e6,1e7,1e8,1e9)")
	r.urlSizes = fs.String("url-sizes", "1e5", "n for 60-byte URL-like keys (-full: 1e6; empty: none)")
	r.p = fs.Float64("p", 0.01, "target false-positive rate of the size series")
	r.sweep = fs.String("sweep", "1e-1,1e-2,1e-3,1e-4,1e-5,1e-6", "target rates of the accuracy sweep (empty: no sweep)")
	r.sweepN = fs.String("sweep-n", "", "n of the accuracy sweep (default 1e5; -full: 1e6)")
	r.sweepErrors = fs.Float64("sweep-errors", 0, "sweep negatives per point: enough for this many expected false positives (default 10; -full: 100)")
	r.maxTrials = fs.String("max-trials", "2e8", "cap on the negatives of one sweep point")
	r.sweepBudget = fs.Duration("sweep-budget", 0, "a sweep point stops testing negatives after this long, once it has -fpr-trials (default 250ms; -full: 60s)")
	r.fprTrials = fs.String("fpr-trials", "2e5", "negatives per measured rate, at least (-full: 1e6)")
	r.benchTime = fs.Duration("benchtime", 10*time.Millisecond, "time of one timed run")
	r.reps = fs.Int("reps", 3, "timed runs per measurement, in interleaved rounds; the fastest counts")
	r.keep = fs.Float64("keep-mib", 256, "MiB of filters kept in memory to time in interleaved rounds")
	r.alone = fs.Float64("alone-mib", 32, "filters larger than this many MiB are timed alone, right after their build")
	r.variants = fs.String("variants", "all", "comma-separated variants to compare")
	r.bigN = fs.String("big-n", "5e8", "sizes from this n on use -big-variants only")
	r.bigVariants = fs.String("big-variants", "", "variants measured at sizes >= -big-n (default all; -full: "+fullBig+")")
	r.staticMaxN = fs.String("static-max-n", "2e8", "largest n for which static filters are built (they hold every key's hash in memory)")
	r.summaryN = fs.String("summary-n", "1e6", "n of the summary workload (16-byte keys, -p)")
	r.out = fs.String("out", "", "output folder (default benchmarks/results under the repository root)")
	r.quiet = fs.Bool("q", false, "no progress on stderr")
	r.verbose = fs.Bool("v", false, "print the time of each phase of each measurement")
	r.renderFile = fs.String("render", "", "redraw the tables and plots of this results.json into -out, measuring nothing")
	r.mergeFiles = fs.String("merge", "", "with -render: comma-separated results.json files of later runs whose results replace the same cells (variant, keys, n, p) or are added; -out gets the merged results.json")
	return r
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	r := defineFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if *r.full && !given["url-sizes"] {
		*r.urlSizes = "1e6"
	}
	if *r.full && !given["fpr-trials"] {
		*r.fprTrials = "1e6"
	}
	cfg := &config{p: *r.p, benchTime: *r.benchTime, reps: *r.reps, quiet: *r.quiet, verbose: *r.verbose, render: *r.renderFile}
	for _, step := range []func(*config) error{r.output, r.series, r.sweepConfig, r.counts, r.variantSets} {
		if err := step(cfg); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// def is s, or when s is empty the default of a normal run or of -full.
func (r *flagValues) def(s, normal, fullv string) string {
	if s != "" {
		return s
	}
	if *r.full {
		return fullv
	}
	return normal
}

// output sets what the run writes and how it times: -merge, -keep-mib,
// -alone-mib, -reps, -out.
func (r *flagValues) output(cfg *config) error {
	for _, f := range strings.Split(*r.mergeFiles, ",") {
		if f = strings.TrimSpace(f); f != "" {
			cfg.merge = append(cfg.merge, f)
		}
	}
	if len(cfg.merge) > 0 && cfg.render == "" {
		return fmt.Errorf("-merge goes with -render")
	}
	cfg.keepBytes = uint64(*r.keep * (1 << 20))
	cfg.aloneBytes = uint64(*r.alone * (1 << 20))
	if cfg.reps < 1 {
		return fmt.Errorf("-reps %d: want at least 1", cfg.reps)
	}
	cfg.out = *r.out
	if cfg.out == "" {
		root, err := repoRoot()
		if err != nil {
			return err
		}
		cfg.out = filepath.Join(root, "benchmarks", "results")
	}
	return nil
}

// series sets the sizes of the two key series and their rate.
func (r *flagValues) series(cfg *config) (err error) {
	if cfg.sizes, err = counts(r.def(*r.sizes, "1e4,1e5,1e6,2e6", "1e4,1e5,1e6,1e7,1e8,1e9")); err != nil {
		return err
	}
	if cfg.urlSizes, err = counts(*r.urlSizes); err != nil {
		return err
	}
	if !(cfg.p > 0 && cfg.p < 1) {
		return fmt.Errorf("-p %g is not in (0, 1)", cfg.p)
	}
	return nil
}

// sweepConfig sets the accuracy sweep: its rates, n, budget and errors.
func (r *flagValues) sweepConfig(cfg *config) (err error) {
	if cfg.sweep, err = rates(*r.sweep); err != nil {
		return err
	}
	if cfg.sweepN, err = oneCount(r.def(*r.sweepN, "1e5", "1e6")); err != nil {
		return err
	}
	cfg.sweepBudget = *r.sweepBudget
	if cfg.sweepBudget == 0 {
		cfg.sweepBudget = 250 * time.Millisecond
		if *r.full {
			cfg.sweepBudget = time.Minute
		}
	}
	cfg.sweepErrors = *r.sweepErrors
	if cfg.sweepErrors == 0 {
		cfg.sweepErrors = 10
		if *r.full {
			cfg.sweepErrors = 100
		}
	}
	return nil
}

// counts sets the single counts: trials, the big-n threshold, the static
// filters' largest n, the summary's n.
func (r *flagValues) counts(cfg *config) (err error) {
	for _, f := range []struct {
		dst *uint64
		s   string
	}{{&cfg.maxTrials, *r.maxTrials}, {&cfg.fprTrials, *r.fprTrials}, {&cfg.bigN, *r.bigN}, {&cfg.staticMaxN, *r.staticMaxN}, {&cfg.summaryN, *r.summaryN}} {
		if *f.dst, err = oneCount(f.s); err != nil {
			return err
		}
	}
	return nil
}

// variantSets sets the variants compared, and those measured at big sizes.
func (r *flagValues) variantSets(cfg *config) (err error) {
	if cfg.variants, err = bench.Select(*r.variants); err != nil {
		return err
	}
	if big := r.def(*r.bigVariants, "all", fullBig); big == fullBig {
		for _, name := range strings.Split(fullBig, ",") {
			if v, err := bench.Lookup(name); err == nil { // a variant not built in is left out
				cfg.bigVariants = append(cfg.bigVariants, v)
			}
		}
	} else if big != "all" {
		if cfg.bigVariants, err = bench.Select(big); err != nil {
			return err
		}
	}
	return nil
}

// oneCount parses a single count such as 1e6.
func oneCount(s string) (uint64, error) {
	v, err := counts(s)
	if err != nil || len(v) != 1 {
		return 0, fmt.Errorf("bad count %q", s)
	}
	return v[0], nil
}

// fullBig are the variants -full measures at n = 1e9: every bloomkit
// variant but counting (4.5 GiB), and the fastest classic peers. Filling
// each takes minutes.
const fullBig = "standard,partitioned,scalable,bitsandblooms,holiman,bbloom"

func counts(s string) ([]uint64, error) {
	var v []uint64
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := bench.ParseCount(f)
		if err != nil {
			return nil, err
		}
		v = append(v, n)
	}
	return v, nil
}

func rates(s string) ([]float64, error) {
	var v []float64
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		p, err := strconv.ParseFloat(f, 64)
		if err != nil || !(p > 0 && p < 1) {
			return nil, fmt.Errorf("bad rate %q", f)
		}
		v = append(v, p)
	}
	return v, nil
}

// repoRoot finds the bloomkit repository root: the nearest folder, from the
// working directory up, that holds benchmarks/go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "benchmarks", "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no benchmarks/go.mod above %s: give -out", dir)
		}
	}
}
