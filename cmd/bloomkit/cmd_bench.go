package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/bloomkit/bloomkit"
)

func benchCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	n := countFlag{n: 1_000_000}
	fs.Var(&n, "n", "keys to add (forms like 1e6)")
	p := fs.Float64("p", 0.01, "target false-positive rate, in (0,1)")
	trials := countFlag{n: 1_000_000}
	fs.Var(&trials, "trials", "absent keys to query")
	return func(args []string) error {
		if len(args) > 0 {
			return fmt.Errorf("unexpected arguments %q", args)
		}
		if n.n == 0 || trials.n == 0 {
			return fmt.Errorf("-n and -trials must be at least 1")
		}
		if !(*p > 0 && *p < 1) {
			return fmt.Errorf("-p %v: want a rate between 0 and 1, exclusive", *p)
		}
		names := make([]string, 0, len(variants))
		for name, v := range variants {
			if v.new != nil { // not fuse, static: built from all its keys at once (docs/fuse.md measures it)
				names = append(names, name)
			}
		}
		sort.Strings(names)
		w := tabwriter.NewWriter(std.out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(w, "variant\tbits/key\tadd ns/key\thit ns/key\tmiss ns/key\tmeasured p\tx target\t\n")
		for _, name := range names {
			r, err := benchVariant(variants[name], n.n, *p, trials.n)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			fmt.Fprintf(w, "%s\t%.2f\t%.1f\t%.1f\t%.1f\t%.3g\t%.3f\t\n", name, r.bitsPerKey, r.add, r.hit, r.miss, r.rate, r.rate / *p)
		}
		return w.Flush()
	}
}

type benchResult struct{ bitsPerKey, add, hit, miss, rate float64 }

func benchVariant(v *variant, n uint64, p float64, trials uint64) (benchResult, error) {
	nf, err := v.new(n, p)
	if err != nil {
		return benchResult{}, err
	}
	defer nf.Close() // a growing filter's history is a temporary file
	f := nf.(bloomkit.Adder)
	key := make([]byte, 16)
	gen := func(set, i uint64) []byte {
		binary.LittleEndian.PutUint64(key, i*0x9e3779b97f4a7c15^set)
		binary.LittleEndian.PutUint64(key[8:], set)
		return key
	}
	ns := func(d time.Duration, count uint64) float64 { return float64(d.Nanoseconds()) / float64(count) }
	start := time.Now()
	for i := uint64(0); i < n; i++ {
		f.Add(gen(1, i))
	}
	add := ns(time.Since(start), n)
	start = time.Now()
	for i := uint64(0); i < n; i++ {
		if !f.Contains(gen(1, i)) {
			return benchResult{}, fmt.Errorf("false negative: the filter is broken")
		}
	}
	hit := ns(time.Since(start), n)
	var fp uint64
	start = time.Now()
	for i := uint64(0); i < trials; i++ {
		if f.Contains(gen(2, i)) {
			fp++
		}
	}
	return benchResult{
		bitsPerKey: float64(f.Bytes()*8) / float64(n),
		add:        add,
		hit:        hit,
		miss:       ns(time.Since(start), trials),
		rate:       float64(fp) / float64(trials),
	}, nil
}
