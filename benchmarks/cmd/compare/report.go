package main

import (
	"fmt"
	"math"
	"slices"
	"strings"

	bench "github.com/bloomkit/bloomkit/benchmarks"
)

// report renders a run as markdown.
func report(r *Run) string {
	var b strings.Builder
	m := r.Machine
	fmt.Fprintf(&b, "# bloomkit benchmark results\n\n")
	fmt.Fprintf(&b, "Machine: %s, %d CPUs (GOMAXPROCS %d), %s, %s %s/%s. Run started %s, took %s.\n\n",
		orDash(m.CPU), m.CPUs, m.GOMAXPROCS, orDash(m.MemTotal), m.GoVersion, m.OS, m.Arch,
		r.Started.Format("2006-01-02 15:04 MST"), r.Duration)
	if r.LoadStart != "" {
		fmt.Fprintf(&b, "Load average (1, 5, 15 min): %s at the start, %s at the end.\n\n", r.LoadStart, orDash(r.LoadEnd))
	}
	fmt.Fprintf(&b, "Times are ns per key, lower is better. A lookup time is the fastest of %d runs of %s (testing.Benchmark), "+
		"taken in rounds that interleave the filters; an add time is the fastest fill of an empty filter with all n keys, repeated for at least %d×%s. "+
		"Every filter is called through the same interface. Rates are measured on never-added keys (at least %s per filter); "+
		"the interval is 95%%, and ⚠ marks a rate above its target beyond reasonable doubt (the whole 99.9%% interval is above).\n\n",
		r.Config.Reps, r.Config.BenchTime, r.Config.Reps, r.Config.BenchTime, bench.FormatCount(r.Config.FPRTrials))

	size := filter(r.Results, func(x *Result) bool { return x.Part == "size" })
	if s := summary(size, r.Config.SummaryN, r.Config.P); s != "" {
		b.WriteString(s)
	}
	var workloads []string
	for _, x := range size {
		w := fmt.Sprintf("%s|%d", x.Keys, x.N)
		if !slices.Contains(workloads, w) {
			workloads = append(workloads, w)
		}
	}
	for _, w := range workloads {
		rows := filter(size, func(x *Result) bool { return fmt.Sprintf("%s|%d", x.Keys, x.N) == w })
		x := rows[0]
		fmt.Fprintf(&b, "## %s keys, n = %s, p = %s\n\n", x.Keys, bench.FormatCount(x.N), bench.FormatRate(x.P))
		b.WriteString(workloadTable(rows))
	}
	for _, keys := range []string{bench.Key16.String()} {
		rows := filter(size, func(x *Result) bool { return x.Keys == keys })
		if len(sizesOf(rows)) < 2 {
			continue
		}
		fmt.Fprintf(&b, "## Lookup time against filter size (%s keys, p = %s)\n\n", keys, bench.FormatRate(r.Config.P))
		b.WriteString("Miss and hit lookups in ns; the filter's size in memory is in the second table. " +
			"The steps are the caches: a filter that no longer fits pays a memory access per probe that misses the cache.\n\n")
		b.WriteString(bySize(rows, "miss ns", func(x *Result) string { return ns(x.MissNs) }))
		b.WriteString(bySize(rows, "hit ns", func(x *Result) string { return ns(x.HitNs) }))
		b.WriteString(bySize(rows, "filter size", func(x *Result) string { return bytesize(x.Bytes) }))
		b.WriteString(bySize(rows, "add ns/key", func(x *Result) string { return ns(x.AddNs) }))
		if len(filter(rows, func(x *Result) bool { return x.BatchAddNs > 0 || x.BatchHitNs > 0 })) > 0 {
			batched := filter(rows, func(x *Result) bool { return x.BatchAddNs > 0 || x.BatchHitNs > 0 })
			b.WriteString(bySize(batched, "batch miss ns", func(x *Result) string { return ns(x.BatchMissNs) }))
			b.WriteString(bySize(batched, "batch add ns/key", func(x *Result) string { return ns(x.BatchAddNs) }))
		}
		if open := filter(rows, func(x *Result) bool { return x.OpenNs > 0 }); len(open) > 0 {
			fmt.Fprintf(&b, "### Open time of a mapped filter file (bloomkit)\n\n")
			b.WriteString("OpenReadOnly and Close of a file in the page cache, in µs: the header is checked and the file mapped, never read.\n\n")
			b.WriteString(bySize(open, "open µs", func(x *Result) string { return fmt.Sprintf("%.1f", x.OpenNs/1000) }))
		}
	}
	sweep := filter(r.Results, func(x *Result) bool { return x.Part == "sweep" })
	if len(sweep) > 0 {
		b.WriteString(sweepTables(sweep))
	}
	b.WriteString(notes(r))
	return b.String()
}

func filter(rs []*Result, keep func(*Result) bool) []*Result {
	var out []*Result
	for _, x := range rs {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func ns(v float64) string {
	switch {
	case v == 0 || math.IsNaN(v):
		return "-"
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func bytesize(b uint64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

func name(x *Result) string {
	if x.Ours {
		return "**" + x.Variant + "**"
	}
	return x.Variant
}

// rate writes a measured rate with its interval: 0.00991 (0.00972–0.0101).
func rate(x *Result) string {
	return fmt.Sprintf("%.3g (%.3g–%.3g)", x.FPR, x.FPRLo, x.FPRHi)
}

// ratio writes measured/target, flagged when the whole interval is above
// the target.
func ratio(x *Result) string {
	s := fmt.Sprintf("%.2f", x.Ratio())
	if x.Above {
		s += " ⚠"
	}
	return s
}

func workloadTable(rows []*Result) string {
	var b strings.Builder
	b.WriteString("| variant | kind | bits/key | add | batch add | hit | miss | batch hit / miss | parallel hit | allocs | measured rate (95% CI) | measured / target |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, x := range rows {
		batch := "-"
		if x.BatchHitNs > 0 {
			batch = ns(x.BatchHitNs) + " / " + ns(x.BatchMissNs)
		}
		par := ns(x.ParallelHitNs)
		if x.ParallelHitNs == 0 {
			par = "unsafe"
		}
		add := ns(x.AddNs)
		if x.Static {
			add += " (build)"
		}
		fmt.Fprintf(&b, "| %s | %s | %.2f | %s | %s | %s | %s | %s | %s | %d | %s | %s |\n",
			name(x), x.Kind, x.BitsPerKey, add, ns(x.BatchAddNs), ns(x.HitNs), ns(x.MissNs), batch, par, x.LookupAllocs, rate(x), ratio(x))
		if x.FalseNeg > 0 {
			fmt.Fprintf(&b, "| ⚠ %s: %d false negatives | | | | | | | | | | | |\n", x.Variant, x.FalseNeg)
		}
	}
	b.WriteString("\n")
	return b.String()
}

func sizesOf(rows []*Result) []uint64 {
	var ns []uint64
	for _, x := range rows {
		if !slices.Contains(ns, x.N) {
			ns = append(ns, x.N)
		}
	}
	slices.Sort(ns)
	return ns
}

func variantsOf(rows []*Result) []*Result {
	var firsts []*Result
	seen := map[string]bool{}
	for _, x := range rows {
		if !seen[x.Variant] {
			seen[x.Variant] = true
			firsts = append(firsts, x)
		}
	}
	return firsts
}

// bySize is a table with a row per variant and a column per n.
func bySize(rows []*Result, what string, cell func(*Result) string) string {
	var b strings.Builder
	sizes := sizesOf(rows)
	fmt.Fprintf(&b, "| %s | ", what)
	for _, n := range sizes {
		fmt.Fprintf(&b, "n=%s | ", bench.FormatCount(n))
	}
	b.WriteString("\n|---|" + strings.Repeat("--:|", len(sizes)) + "\n")
	for _, v := range variantsOf(rows) {
		fmt.Fprintf(&b, "| %s | ", name(v))
		for _, n := range sizes {
			c := "-"
			for _, x := range rows {
				if x.Variant == v.Variant && x.N == n {
					c = cell(x)
				}
			}
			b.WriteString(c + " | ")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	return b.String()
}

func sweepTables(rows []*Result) string {
	var b strings.Builder
	var ps []float64
	for _, x := range rows {
		if !x.Static && !slices.Contains(ps, x.P) {
			ps = append(ps, x.P)
		}
	}
	slices.Sort(ps)
	slices.Reverse(ps)
	x0 := rows[0]
	fmt.Fprintf(&b, "## Accuracy sweep (16B keys, n = %s)\n\n", bench.FormatCount(x0.N))
	b.WriteString("Measured false-positive rate over the target, after adding n keys to a filter made for n at p. " +
		"Each cell tests enough never-added keys to expect many false positives at the target (the small numbers: false positives / negatives tested); " +
		"⚠ marks a rate above the target beyond reasonable doubt. Static filters have one rate whatever p is asked for; they are listed at that rate.\n\n")
	cell := func(x *Result) string {
		return fmt.Sprintf("%s <sub>%d/%s</sub>", ratio(x), x.FP, bench.FormatCount(x.Trials))
	}
	table := func(what string, f func(*Result) string) {
		fmt.Fprintf(&b, "| %s | ", what)
		for _, p := range ps {
			fmt.Fprintf(&b, "p=%s | ", bench.FormatRate(p))
		}
		b.WriteString("\n|---|" + strings.Repeat("--:|", len(ps)) + "\n")
		for _, v := range variantsOf(rows) {
			if v.Static {
				continue
			}
			fmt.Fprintf(&b, "| %s | ", name(v))
			for _, p := range ps {
				c := "-"
				for _, x := range rows {
					if x.Variant == v.Variant && x.P == p {
						c = f(x)
					}
				}
				b.WriteString(c + " | ")
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	table("measured / target", cell)
	table("bits/key", func(x *Result) string { return fmt.Sprintf("%.2f", x.BitsPerKey) })
	static := filter(rows, func(x *Result) bool { return x.Static })
	if len(static) > 0 {
		b.WriteString("| static filter | rate | bits/key | measured rate (95% CI) | measured / rate |\n|---|--:|--:|--:|--:|\n")
		for _, x := range static {
			fmt.Fprintf(&b, "| %s | %.3g | %.2f | %s | %s |\n", x.Variant, x.Target, x.BitsPerKey, rate(x), cell(x))
		}
		b.WriteString("\n")
	}
	for _, x := range rows {
		if x.FalseNeg > 0 {
			fmt.Fprintf(&b, "⚠ %s at p = %g: %d false negatives.\n\n", x.Variant, x.P, x.FalseNeg)
		}
	}
	return b.String()
}

// summary compares each bloomkit variant with the best peer of its kind on
// the summary workload, metric by metric.
func summary(rows []*Result, n uint64, p float64) string {
	rows = filter(rows, func(x *Result) bool { return x.Keys == bench.Key16.String() && x.N == n && x.P == p })
	var b strings.Builder
	ours := filter(rows, func(x *Result) bool { return x.Ours })
	if len(ours) == 0 {
		return ""
	}
	fmt.Fprintf(&b, "## Summary: bloomkit against the best peer of its kind (16B keys, n = %s, p = %s)\n\n", bench.FormatCount(n), bench.FormatRate(p))
	b.WriteString("Each cell is bloomkit's number over the best peer's for that column (below 1: bloomkit is faster or smaller), " +
		"then both numbers and the peer. The standard and partitioned variants are compared with every insert-only Bloom filter peer; " +
		"counting and scalable with the peers of their kind. The last column is the measured rate over the target: bloomkit's, " +
		"then the range over the same peers.\n\n")
	b.WriteString("| variant | lookup hit | lookup miss | add | bits/key | measured / target |\n|---|--:|--:|--:|--:|--:|\n")
	for _, o := range ours {
		peers := filter(rows, func(x *Result) bool { return !x.Ours && x.Kind == o.Kind })
		if len(peers) == 0 {
			continue
		}
		cmp := func(get func(*Result) float64, format string) string {
			var best *Result
			for _, x := range peers {
				if v := get(x); v > 0 && !math.IsNaN(v) && (best == nil || v < get(best)) {
					best = x
				}
			}
			if best == nil || get(o) == 0 {
				return "-"
			}
			return fmt.Sprintf("%.2f× ("+format+" vs "+format+" %s)", get(o)/get(best), get(o), get(best), best.Variant)
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, x := range peers {
			lo, hi = math.Min(lo, x.Ratio()), math.Max(hi, x.Ratio())
		}
		fmt.Fprintf(&b, "| **%s** | %s | %s | %s | %s | %s (peers %.2f–%.2f) |\n", o.Variant,
			cmp(func(x *Result) float64 { return x.HitNs }, "%.1f"),
			cmp(func(x *Result) float64 { return x.MissNs }, "%.1f"),
			cmp(func(x *Result) float64 { return x.AddNs }, "%.1f"),
			cmp(func(x *Result) float64 { return x.BitsPerKey }, "%.2f"),
			ratio(o), lo, hi)
	}
	b.WriteString("\n")
	return b.String()
}

func notes(r *Run) string {
	var b strings.Builder
	b.WriteString("## Notes\n\n")
	var unsafe, readOnly []string
	for _, v := range bench.Variants() {
		if !slices.ContainsFunc(r.Results, func(x *Result) bool { return x.Variant == v.Name }) {
			continue // not in this run
		}
		switch {
		case !v.ConcurrentLookups:
			unsafe = append(unsafe, v.Name)
		case !v.ConcurrentAdds && !v.Static():
			readOnly = append(readOnly, v.Name)
		}
	}
	fmt.Fprintf(&b, "- Not safe for concurrent use, not even for lookups (no parallel column): %s.\n", strings.Join(unsafe, ", "))
	fmt.Fprintf(&b, "- Lookups may run concurrently, adds may not (an external lock is needed to add while serving): %s.\n", strings.Join(readOnly, ", "))
	b.WriteString("- Parallel hit: GOMAXPROCS goroutines look up at once (b.RunParallel); the time is wall time per lookup over all of them.\n")
	b.WriteString("- Static filters (fuse8, fuse16) are built from all n keys at once; their add column is build time per key.\n")
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "- Skipped %s.\n", s)
	}
	b.WriteString(rerunNotes(r))
	b.WriteString("\n")
	return b.String()
}
