package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	bench "github.com/bloomkit/bloomkit/benchmarks"
)

// Rerun is a later run whose cells were merged into a run (-merge): when
// and how it ran, and which cells it replaced or added.
type Rerun struct {
	Started            time.Time
	Duration           string
	LoadStart, LoadEnd string `json:",omitempty"`
	GoVersion          string
	Config             RunConfig
	Replaced, Added    []string // cells: "partitioned at 16B n=1e9 p=0.01"
}

// cell names the workload and variant of a result: two results of the same
// cell measure the same thing.
func cell(x *Result) string {
	c := fmt.Sprintf("%s at %s n=%s p=%s", x.Variant, x.Keys, bench.FormatCount(x.N), bench.FormatRate(x.P))
	if x.Part != "size" {
		c += " (" + x.Part + ")"
	}
	return c
}

// workloadOf names x's part and workload, without the variant.
func workloadOf(x *Result) string {
	return fmt.Sprintf("%s|%s|%d|%g", x.Part, x.Keys, x.N, x.P)
}

// merge puts the results of later into r: each replaces r's result of the
// same cell in place, or, where r has none, goes after r's last result of
// the same workload (at the end if r has none of that either). The skip
// notes of r for the merged cells go, and later is recorded in r.Reruns
// (merging the same run again replaces its record). Both runs must come
// from the same kind of machine.
func merge(r, later *Run) error {
	a, b := r.Machine, later.Machine
	if a.CPU != b.CPU || a.CPUs != b.CPUs || a.OS != b.OS || a.Arch != b.Arch {
		return fmt.Errorf("measured on another machine: %s, %d CPUs, %s/%s (the run: %s, %d CPUs, %s/%s)",
			b.CPU, b.CPUs, b.OS, b.Arch, a.CPU, a.CPUs, a.OS, a.Arch)
	}
	rr := &Rerun{Started: later.Started, Duration: later.Duration, LoadStart: later.LoadStart,
		LoadEnd: later.LoadEnd, GoVersion: b.GoVersion, Config: later.Config}
	for _, x := range later.Results {
		c := cell(x)
		if i := slices.IndexFunc(r.Results, func(y *Result) bool { return cell(y) == c }); i >= 0 {
			r.Results[i] = x
			rr.Replaced = append(rr.Replaced, c)
			continue
		}
		w := workloadOf(x)
		i := len(r.Results)
		for j, y := range r.Results {
			if workloadOf(y) == w {
				i = j + 1
			}
		}
		r.Results = slices.Insert(r.Results, i, x)
		rr.Added = append(rr.Added, c)
		if x.Part == "size" {
			skip := fmt.Sprintf("%s at keys=%s/n=%s/p=%s:", x.Variant, x.Keys, bench.FormatCount(x.N), bench.FormatRate(x.P))
			r.Skipped = slices.DeleteFunc(r.Skipped, func(s string) bool { return strings.HasPrefix(s, skip) })
		}
	}
	if i := slices.IndexFunc(r.Reruns, func(o *Rerun) bool { return o.Started.Equal(rr.Started) }); i >= 0 {
		// Merged before: what that merge added is still added, not replaced.
		old := r.Reruns[i]
		was := func(c string) bool { return slices.Contains(old.Added, c) }
		rr.Added = append(rr.Added, filterStrings(rr.Replaced, was)...)
		rr.Replaced = slices.DeleteFunc(rr.Replaced, was)
		r.Reruns[i] = rr
	} else {
		r.Reruns = append(r.Reruns, rr)
	}
	return nil
}

func filterStrings(ss []string, keep func(string) bool) []string {
	var out []string
	for _, s := range ss {
		if keep(s) {
			out = append(out, s)
		}
	}
	return out
}

// rerunNotes are the report's lines on the runs merged into r.
func rerunNotes(r *Run) string {
	var b strings.Builder
	for _, rr := range r.Reruns {
		fmt.Fprintf(&b, "- Measured again %s (took %s", rr.Started.Format("2006-01-02 15:04 MST"), rr.Duration)
		if rr.LoadStart != "" {
			fmt.Fprintf(&b, "; load average %s at the start, %s at the end", rr.LoadStart, orDash(rr.LoadEnd))
		}
		fmt.Fprintf(&b, ", %s", rr.GoVersion)
		if t := rr.Config.FPRTrials; t != 0 && t != r.Config.FPRTrials {
			fmt.Fprintf(&b, ", rates on %s negatives", bench.FormatCount(t))
		}
		b.WriteString(")")
		if len(rr.Replaced) > 0 {
			fmt.Fprintf(&b, "; these cells replace the first run's: %s", strings.Join(rr.Replaced, ", "))
		}
		if len(rr.Added) > 0 {
			fmt.Fprintf(&b, "; added: %s", strings.Join(rr.Added, ", "))
		}
		b.WriteString(".\n")
	}
	return b.String()
}
