package benchmarks

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Go benchmarks. The runner (cmd/compare) measures the same things with the
// same code and draws the tables and plots; these are for benchstat and CI:
//
//	go test -run '^$' -bench . -benchmem                       # 1e4 and 1e6 keys
//	go test -run '^$' -bench 'Contains/variant=partitioned' -args -sizes 1e4,1e7,1e9
//
// Flags (after -args): -sizes, -keys, -p, -variants, -fpr-trials.

var (
	flagSizes     = flag.String("sizes", "1e4,1e6", "comma-separated key counts n (-short: the first only)")
	flagKeys      = flag.String("keys", "16B,url60B", "comma-separated key shapes: 16B, url60B")
	flagRates     = flag.String("p", "0.01", "comma-separated target false-positive rates")
	flagVariants  = flag.String("variants", "all", "comma-separated variant names")
	flagFPRTrials = flag.Uint64("fpr-trials", 1_000_000, "negatives tested for the fpr metric")
)

func benchWorkloads(b *testing.B) []Workload {
	sizes := strings.Split(*flagSizes, ",")
	if testing.Short() {
		sizes = sizes[:1]
	}
	var ws []Workload
	for _, ks := range strings.Split(*flagKeys, ",") {
		kind, err := ParseKeyKind(ks)
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range sizes {
			n, err := ParseCount(s)
			if err != nil {
				b.Fatal(err)
			}
			for _, ps := range strings.Split(*flagRates, ",") {
				p, err := strconv.ParseFloat(ps, 64)
				if err != nil {
					b.Fatal(err)
				}
				ws = append(ws, Workload{kind, n, p})
			}
		}
	}
	return ws
}

func benchVariants(b *testing.B) []*Variant {
	vs, err := Select(*flagVariants)
	if err != nil {
		b.Fatal(err)
	}
	return vs
}

// BenchmarkContains: lookups of added keys (op=hit), never-added keys
// (op=miss), batches (op=batch, where offered) and lookups from every core
// (op=parallel, only for filters whose lookups are safe for concurrent use).
// Every sub-benchmark also reports the filter's measured false-positive rate
// (fpr), its ratio to the target (fpr/target) and its size (bits/key).
func BenchmarkContains(b *testing.B) {
	for _, v := range benchVariants(b) {
		for _, w := range benchWorkloads(b) {
			b.Run("variant="+v.Name+"/"+w.String(), func(b *testing.B) {
				built, err := Build(v, w)
				if err != nil {
					b.Fatal(err)
				}
				pools := NewPools(w)
				rate := built.FalsePositives(*flagFPRTrials)
				report := func(b *testing.B) {
					b.ReportMetric(rate.Value(), "fpr")
					b.ReportMetric(rate.Value()/v.TargetRate(w.P), "fpr/target")
					b.ReportMetric(built.BitsPerKey(), "bits/key")
				}
				run := func(op string, f func(*testing.B)) {
					b.Run("op="+op, func(b *testing.B) { f(b); report(b) })
				}
				run("hit", LookupBench(built.Filter, pools.Hits))
				run("miss", LookupBench(built.Filter, pools.Misses))
				if bf, ok := built.Filter.(BatchFilter); ok {
					run("batch-hit", BatchLookupBench(bf, pools.Hits))
					run("batch-miss", BatchLookupBench(bf, pools.Misses))
				}
				if v.ConcurrentLookups {
					run("parallel-hit", ParallelLookupBench(built.Filter, pools.Hits))
				}
			})
		}
	}
}

// BenchmarkAdd: adding new keys to a filter for n keys (dynamic filters),
// one at a time (op=add) and through AddMany where offered (op=batch), and
// building a static filter from n keys (ns/key metric).
func BenchmarkAdd(b *testing.B) {
	for _, v := range benchVariants(b) {
		for _, w := range benchWorkloads(b) {
			name := "variant=" + v.Name + "/" + w.String()
			if !v.Static() {
				b.Run(name+"/op=add", AddBench(v, w, false))
				if f, err := v.New(1, 0.5); err == nil {
					if _, ok := f.(BatchAdder); ok {
						b.Run(name+"/op=batch", AddBench(v, w, true))
					}
				}
				continue
			}
			b.Run(name+"/op=build", func(b *testing.B) {
				var ns float64
				for range b.N {
					built, err := Build(v, w)
					if err != nil {
						b.Fatal(err)
					}
					ns += built.AddNs
				}
				b.ReportMetric(ns/float64(b.N), "ns/key")
			})
		}
	}
}

// BenchmarkOpen: mapping a bloomkit filter file read-only (and closing it).
// The file is written once per size; Open is meant to cost the same for
// every size.
func BenchmarkOpen(b *testing.B) {
	dir := b.TempDir()
	for _, v := range benchVariants(b) {
		if v.Open == nil {
			continue
		}
		for _, w := range benchWorkloads(b) {
			if w.Keys != Key16 {
				continue // the file does not depend on the key shape
			}
			b.Run("variant="+v.Name+"/"+w.String(), func(b *testing.B) {
				path := filepath.Join(dir, v.Name+".bloom")
				built, err := Build(v, w)
				if err != nil {
					b.Fatal(err)
				}
				if err := built.Filter.(FileFilter).WriteFile(path); err != nil {
					b.Fatal(err)
				}
				built = nil
				OpenBench(v, path)(b)
				b.StopTimer()
				if err := os.Remove(path); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}
