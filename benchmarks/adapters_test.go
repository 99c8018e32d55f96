package benchmarks

import (
	"bytes"
	"math"
	"path/filepath"
	"sync"
	"testing"
)

// The harness's own tests: quick (tiny n), and they check what the numbers
// rest on. Every adapter has no false negatives and a measured rate near
// its target, for both key shapes; the filters said to allow concurrent
// lookups or adds survive them under -race; key sets are disjoint.

const testN = 3000

func TestKeys(t *testing.T) {
	for _, kind := range KeyKinds {
		pos := NewKeySet(kind, SetPositive, 0, 5000)
		neg := NewKeySet(kind, SetNegative, 0, 5000)
		seen := map[string]bool{}
		for i := range pos.Len() {
			k := pos.At(i)
			if len(k) != kind.Len() {
				t.Fatalf("%v key %q has length %d", kind, k, len(k))
			}
			seen[string(k)] = true
		}
		if len(seen) != pos.Len() {
			t.Fatalf("%v: %d distinct keys of %d", kind, len(seen), pos.Len())
		}
		for i := range neg.Len() {
			if k := neg.At(i); seen[string(k)] {
				t.Fatalf("%v: key %q is in both sets", kind, k)
			}
		}
		s := NewKeyStream(kind, SetPositive, 0, 5000)
		i := 0
		for c := s.Next(); c != nil; c = s.Next() {
			for _, k := range c {
				if !bytes.Equal(k, pos.At(i)) {
					t.Fatalf("%v: stream key %d is %q, want %q", kind, i, k, pos.At(i))
				}
				i++
			}
		}
		if i != pos.Len() {
			t.Fatalf("%v: stream gave %d keys, want %d", kind, i, pos.Len())
		}
		src, i := pos.Source(), 0
		for c := src.Next(); c != nil; c = src.Next() {
			for _, k := range c {
				if !bytes.Equal(k, pos.At(i)) {
					t.Fatalf("%v: source key %d is %q, want %q", kind, i, k, pos.At(i))
				}
				i++
			}
		}
		if i != pos.Len() {
			t.Fatalf("%v: source gave %d keys, want %d", kind, i, pos.Len())
		}
	}
	if k := string(Key(make([]byte, 60), URL60, SetPositive, 7)); k[:16] != "https://www.site" || len(k) != 60 {
		t.Fatalf("URL-like key %q", k)
	}
}

func TestFormat(t *testing.T) {
	for n, want := range map[uint64]string{10000: "1e4", 1_000_000: "1e6", 20_000_000: "2e7", 100: "100", 123456: "123456", 1 << 20: "1048576"} {
		if got := FormatCount(n); got != want {
			t.Errorf("FormatCount(%d) = %s, want %s", n, got, want)
		}
		if got, err := ParseCount(want); err != nil || got != n {
			t.Errorf("ParseCount(%s) = %d, %v", want, got, err)
		}
	}
}

func TestVariantsRegistered(t *testing.T) {
	kinds := map[Kind]int{}
	for _, v := range Variants() {
		kinds[v.Kind]++
		if v.Static() && (v.Rate <= 0 || v.Rate >= 1) {
			t.Errorf("%s: static without a rate", v.Name)
		}
		if v.ConcurrentAdds && !v.ConcurrentLookups {
			t.Errorf("%s: concurrent adds but not lookups", v.Name)
		}
	}
	for _, k := range []Kind{KindBloom, KindCounting, KindCuckoo, KindScalable, KindGrown, KindStatic} {
		if kinds[k] == 0 {
			t.Errorf("no variant of kind %s", k)
		}
	}
	if _, err := Select("standard,nope"); err == nil {
		t.Error("Select of an unknown name did not fail")
	}
}

// rateBound is a generous upper bound on the measured rate of a filter that
// meets target: twice the target plus five binomial deviations. Peers are
// held to it too; a real miss of the target shows in the runner's tables,
// while this catches a broken adapter (a lookup that always says yes).
func rateBound(target float64, trials uint64) float64 {
	return 2*target + 5*math.Sqrt(target*(1-target)/float64(trials))
}

func TestAdapters(t *testing.T) {
	const trials = 200_000
	for _, v := range Variants() {
		for _, kind := range KeyKinds {
			w := Workload{kind, testN, 0.01}
			t.Run(v.Name+"/"+kind.String(), func(t *testing.T) {
				b, err := Build(v, w)
				if err != nil {
					t.Fatal(err)
				}
				if fn := b.FalseNegatives(); fn != 0 {
					t.Fatalf("%d false negatives of %d keys", fn, testN)
				}
				target := v.TargetRate(w.P)
				r := b.FalsePositives(trials)
				if v.Unbounded != "" {
					t.Logf("rate %.4f at target %g not checked: %s", r.Value(), target, v.Unbounded)
				} else if r.Value() > rateBound(target, trials) {
					t.Errorf("measured rate %.5f (%d/%d), target %.5f", r.Value(), r.Positives, r.Trials, target)
				}
				if r.Positives == 0 && target*trials > 20 {
					t.Errorf("no false positive in %d lookups at target %g: does Contains work?", trials, target)
				}
				bpk := b.BitsPerKey()
				if bpk < math.Log2(1/target) || bpk > 64 {
					t.Errorf("%.2f bits per key at rate %g", bpk, target)
				}
				pools := NewPools(w)
				if bf, ok := b.Filter.(BatchFilter); ok {
					var keys [][]byte
					for i := range 100 {
						keys = append(keys, pools.Hits.At(i))
					}
					found := bf.ContainsMany(keys, nil)
					for i, ok := range found[:100] {
						if !ok {
							t.Fatalf("ContainsMany denies added key %d", i)
						}
					}
				}
			})
		}
	}
}

// TestConcurrency runs what the harness does from many goroutines for the
// variants said to allow it; -race checks the claim.
func TestConcurrency(t *testing.T) {
	for _, v := range Variants() {
		if !v.ConcurrentLookups {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			w := Workload{Key16, testN, 0.01}
			b, err := Build(v, w)
			if err != nil {
				t.Fatal(err)
			}
			pools := NewPools(w)
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range pools.Hits.Len() {
						if !b.Filter.Contains(pools.Hits.At(i)) {
							t.Errorf("goroutine %d: added key %d denied", g, i)
							return
						}
					}
				}()
			}
			if v.ConcurrentAdds {
				more := NewKeySet(Key16, SetPositive, testN, 2000)
				for g := range 2 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := g * 1000; i < (g+1)*1000; i++ {
							b.Filter.Add(more.At(i))
						}
					}()
				}
			}
			wg.Wait()
		})
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	for _, v := range Variants() {
		if v.Open == nil {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			w := Workload{Key16, testN, 0.01}
			b, err := Build(v, w)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, v.Name+".bloom")
			if err := b.Filter.(FileFilter).WriteFile(path); err != nil {
				t.Fatal(err)
			}
			f, c, err := v.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			hits := NewPools(w).Hits
			for i := range hits.Len() {
				if !f.Contains(hits.At(i)) {
					t.Fatalf("mapped file denies added key %d", i)
				}
			}
			if f.Bytes() != b.Filter.Bytes() {
				t.Errorf("mapped filter has %d bytes, built one %d", f.Bytes(), b.Filter.Bytes())
			}
		})
	}
}

func TestRateInterval(t *testing.T) {
	lo, hi := Rate{100, 10000}.Interval()
	if lo >= 0.01 || hi <= 0.01 || lo < 0.008 || hi > 0.0125 {
		t.Errorf("interval of 100/10000 = [%g, %g]", lo, hi)
	}
	if lo, _ := (Rate{0, 1000}).Interval(); lo != 0 {
		t.Errorf("interval of 0/1000 starts at %g", lo)
	}
}
