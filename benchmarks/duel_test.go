package benchmarks

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkDuel measures a few variants in turns: 4096 lookups or adds of
// one, then of the next, round after round, and reports for each variant
// the median time per key over its turns, and its ratio to the last
// variant of -duel (blobloom by default). On a shared machine whose speed
// drifts from second to second, every variant then sees the same drift,
// and the ratios hold where separate runs would not:
//
//	go test -run '^$' -bench 'Duel' -benchtime 400x -count 5 -args -sizes 1e6,1e7,1e8 -keys 16B,url60B
//
// op=hit and op=miss look up added and never-added keys; op=add adds new
// keys to an empty filter for n keys (a fresh one, untimed, when it holds
// n). Variants whose lookups are another's (the *-builder ones) are
// measured for adds only.
//
// A fresh filter is prefaulted before its first timed add (Prefaulter, for
// the variants that offer it; -duel-prefault=false leaves the pages to be
// faulted in by the timed adds, as a Go allocation comes), and op=add
// reports each variant's minor page faults per turn of adds
// (<name>-faults/turn; Linux only), which shows a variant left without it.
var flagDuel = flag.String("duel", "partitioned,partitioned-builder,blobloom", "comma-separated variants for BenchmarkDuel; ratios are to the last")

// -duel-ops adds the batch forms: op=batch-hit and op=batch-miss look up a
// turn of keys with one ContainsMany call, op=batch-add adds them with one
// AddMany call, for the variants that offer them (others are left out of
// those ops, so the ratios are to the last variant that offers them).
var flagDuelOps = flag.String("duel-ops", "hit,miss,add", "comma-separated ops for BenchmarkDuel: hit, miss, add, batch-hit, batch-miss, batch-add")

// -duel-prefault: whether op=add faults in a fresh filter's pages before
// the clock (the default), as a C++ filter's constructor does by zeroing its
// array.
var flagDuelPrefault = flag.Bool("duel-prefault", true, "BenchmarkDuel op=add: prefault each fresh filter (Prefaulter) before timing adds to it")

func BenchmarkDuel(b *testing.B) {
	var vs []*Variant
	for _, name := range strings.Split(*flagDuel, ",") {
		v, err := Lookup(strings.TrimSpace(name))
		if err != nil {
			b.Fatal(err)
		}
		vs = append(vs, v)
	}
	const turn = 4096
	for _, w := range benchWorkloads(b) {
		for _, op := range strings.Split(*flagDuelOps, ",") {
			op = strings.TrimSpace(op)
			b.Run(w.String()+"/op="+op, func(b *testing.B) {
				var run []func() float64 // one turn of each variant; ns/key
				var names []string
				var faults []*int64 // op=add: each variant's minor faults in its timed adds
				batch := strings.HasPrefix(op, "batch-")
				for _, v := range vs {
					if !strings.HasSuffix(op, "add") && strings.HasSuffix(v.Name, "-builder") {
						continue
					}
					if strings.HasSuffix(op, "add") {
						if batch {
							probe, err := v.New(1000, w.P)
							if err != nil {
								b.Fatal(err)
							}
							if _, ok := probe.(BatchAdder); !ok {
								continue
							}
						}
						names = append(names, v.Name)
						faults = append(faults, new(int64))
						run = append(run, addTurns(b, v, w, turn, batch, faults[len(faults)-1]))
						continue
					}
					f, pools := duelBuilt(b, v, w)
					keys := pools.Hits
					if strings.HasSuffix(op, "miss") {
						keys = pools.Misses
					}
					if !batch {
						names = append(names, v.Name)
						run = append(run, lookupTurns(f, keys, turn))
						continue
					}
					if bf, ok := f.(BatchFilter); ok {
						names = append(names, v.Name)
						run = append(run, batchLookupTurns(bf, keys, turn))
					}
				}
				if len(run) == 0 {
					b.Skip("no variant offers op=" + op)
				}
				times := make([][]float64, len(run))
				for r := 0; b.Loop(); r++ {
					for t := range run {
						i := (t + r) % len(run) // rotate: no variant always follows another
						times[i] = append(times[i], run[i]())
					}
				}
				last := median(times[len(run)-1])
				for i, name := range names {
					m := median(times[i])
					b.ReportMetric(m, name+"-ns/key")
					if faults != nil {
						b.ReportMetric(float64(*faults[i])/float64(len(times[i])), name+"-faults/turn")
					}
					if i < len(names)-1 {
						b.ReportMetric(m/last, fmt.Sprintf("%s/%s", name, names[len(names)-1]))
					}
				}
			})
		}
	}
}

type duelKey struct {
	variant string
	w       Workload
}

type duelFilter struct {
	f     Filter
	pools Pools
}

// duelFilters holds the filters BenchmarkDuel built, so that op=hit and
// op=miss and every -count share one build.
var duelFilters = map[duelKey]duelFilter{}

func duelBuilt(b *testing.B, v *Variant, w Workload) (Filter, Pools) {
	k := duelKey{v.Name, w}
	if d, ok := duelFilters[k]; ok {
		return d.f, d.pools
	}
	built, err := Build(v, w)
	if err != nil {
		b.Fatal(err)
	}
	d := duelFilter{built.Filter, NewPools(w)}
	duelFilters[k] = d
	return d.f, d.pools
}

// lookupTurns returns a function that looks up the next turn keys of keys
// (cycling) in f and returns the time per key.
func lookupTurns(f Filter, keys KeySet, turn int) func() float64 {
	flat, l, off := keys.flat, keys.l, 0
	return func() float64 {
		found := 0
		start := time.Now()
		for range turn {
			if f.Contains(flat[off : off+l : off+l]) {
				found++
			}
			if off += l; off == len(flat) {
				off = 0
			}
		}
		ns := float64(time.Since(start).Nanoseconds()) / float64(turn)
		sink.Add(uint64(found))
		return ns
	}
}

// batchLookupTurns is lookupTurns with one ContainsMany call per turn.
func batchLookupTurns(f BatchFilter, keys KeySet, turn int) func() float64 {
	all := make([][]byte, keys.Len())
	for i := range all {
		all[i] = keys.At(i)
	}
	ks, found, off := make([][]byte, turn), make([]bool, turn), 0
	return func() float64 {
		for i := range ks { // the turn's keys, cycling (untimed)
			ks[i] = all[off]
			if off++; off == len(all) {
				off = 0
			}
		}
		start := time.Now()
		found = f.ContainsMany(ks, found)
		ns := float64(time.Since(start).Nanoseconds()) / float64(turn)
		n := 0
		for _, ok := range found {
			if ok {
				n++
			}
		}
		sink.Add(uint64(n))
		return ns
	}
}

// addTurns returns a function that adds the next turn new keys to v's
// filter for w and returns the time per key; the filter is replaced by an
// empty one, untimed (and prefaulted, with -duel-prefault, if v's filters
// are Prefaulters), when it holds n keys. With batch, a turn is one
// AddMany call (v's filter must be a BatchAdder). It adds the minor page
// faults of its timed adds to *faults.
func addTurns(b *testing.B, v *Variant, w Workload, turn int, batch bool, faults *int64) func() float64 {
	var f Filter
	var s *KeyStream
	var chunk [][]byte
	left := uint64(0)
	return func() float64 {
		if left < uint64(turn) {
			f = nil
			var err error
			if f, err = v.New(w.N, w.P); err != nil {
				b.Fatal(err)
			}
			s, left, chunk = NewKeyStream(w.Keys, SetPositive, 0, w.N), w.N, nil
			if pf, ok := f.(Prefaulter); ok && *flagDuelPrefault {
				pf.Prefault()
			}
		}
		if len(chunk) < turn {
			chunk = s.Next()
		}
		c := chunk[:min(turn, len(chunk))]
		f0 := minorFaults()
		start := time.Now()
		if batch {
			f.(BatchAdder).AddMany(c)
		} else {
			for _, k := range c {
				f.Add(k)
			}
		}
		ns := float64(time.Since(start).Nanoseconds()) / float64(len(c))
		*faults += minorFaults() - f0
		chunk, left = chunk[len(c):], left-uint64(len(c))
		return ns
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
