package benchmarks

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Workload is what every filter is configured for: n keys of one shape at
// target false-positive rate p.
type Workload struct {
	Keys KeyKind
	N    uint64
	P    float64
}

// String is the workload's part of a benchmark name:
// "keys=16B/n=1e6/p=0.01".
func (w Workload) String() string {
	return fmt.Sprintf("keys=%v/n=%s/p=%s", w.Keys, FormatCount(w.N), FormatRate(w.P))
}

// FormatCount writes n as 1e6 when it is a power of ten times a small
// integer (2e7), else in full.
func FormatCount(n uint64) string {
	if n == 0 {
		return "0"
	}
	e := 0
	m := n
	for m%10 == 0 {
		m /= 10
		e++
	}
	if e < 3 || m >= 10 {
		return strconv.FormatUint(n, 10)
	}
	return fmt.Sprintf("%de%d", m, e)
}

// FormatRate writes p the short way: 0.01, 0.001, 1e-06.
func FormatRate(p float64) string { return strconv.FormatFloat(p, 'g', 3, 64) }

// ParseCount reads 1e6, 2e7, 1000000 or 1_000_000.
func ParseCount(s string) (uint64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 1 || f > 1<<56 || f != math.Trunc(f) {
		return 0, fmt.Errorf("bad count %q", s)
	}
	return uint64(f), nil
}

// PoolMax caps the number of keys the timed lookups cycle through.
const PoolMax = 1 << 20

// Pools are the keys that timed lookups cycle through: Hits are added keys
// spread evenly over the n added (so a scalable filter's every stage is
// hit), Misses are never-added keys. Both hold min(n, PoolMax) keys, so hit
// and miss lookups stream the same amount of key memory.
type Pools struct {
	Hits, Misses KeySet
}

// NewPools makes the lookup pools of w.
func NewPools(w Workload) Pools {
	size := int(min(w.N, PoolMax))
	l := w.Keys.Len()
	hits := KeySet{make([]byte, size*l), l}
	for j := range size {
		Key(hits.flat[j*l:], w.Keys, SetPositive, uint64(j)*w.N/uint64(size))
	}
	return Pools{Hits: hits, Misses: NewKeySet(w.Keys, SetNegative, 0, size)}
}

// Built is a filter holding the n positive keys of a workload.
type Built struct {
	Variant *Variant
	Workload
	Filter Filter
	// AddNs is the time per key to add all n keys to an empty filter, or for
	// a static filter to build it from them (hashing included, generating
	// the keys excluded).
	AddNs float64
}

// Build makes v's filter for w and fills it with the n positive keys, timing
// the adds; key generation is not timed.
func Build(v *Variant, w Workload) (*Built, error) {
	if v.Static() {
		return buildStatic(v, w)
	}
	f, err := v.New(w.N, w.P)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v.Name, err)
	}
	var t time.Duration
	s := NewKeyStream(w.Keys, SetPositive, 0, w.N)
	for c := s.Next(); c != nil; c = s.Next() {
		start := time.Now()
		for _, k := range c {
			f.Add(k)
		}
		t += time.Since(start)
	}
	return &Built{v, w, f, float64(t.Nanoseconds()) / float64(w.N)}, nil
}

// materializeMax is the most key bytes buildStatic holds in memory.
const materializeMax = 1 << 30

// buildStatic times v.Build. Up to materializeMax bytes of keys are made
// before the clock starts; beyond that the keys are streamed, and the time
// of a second pass that only makes them is subtracted.
func buildStatic(v *Variant, w Workload) (*Built, error) {
	var src KeySource
	var genTime time.Duration
	if w.N*uint64(w.Keys.Len()) <= materializeMax {
		src = NewKeySet(w.Keys, SetPositive, 0, int(w.N)).Source()
	} else {
		gen := time.Now()
		s := NewKeyStream(w.Keys, SetPositive, 0, w.N)
		for c := s.Next(); c != nil; c = s.Next() {
		}
		genTime = time.Since(gen)
		src = NewKeyStream(w.Keys, SetPositive, 0, w.N)
	}
	start := time.Now()
	f, err := v.Build(src, w.N)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v.Name, err)
	}
	t := max(time.Since(start)-genTime, 0)
	return &Built{v, w, f, float64(t.Nanoseconds()) / float64(w.N)}, nil
}

// BuildTimed builds like Build, again and again on fresh filters until
// minTime has passed (at least once), and reports the fastest build's add
// time with the last filter.
func BuildTimed(v *Variant, w Workload, minTime time.Duration) (*Built, error) {
	var times []float64
	var b *Built
	start := time.Now()
	for len(times) == 0 || time.Since(start) < minTime {
		b = nil
		runtime.GC()
		var err error
		if b, err = Build(v, w); err != nil {
			return nil, err
		}
		times = append(times, b.AddNs)
	}
	b.AddNs = slices.Min(times)
	return b, nil
}

// BatchAddTimed fills fresh filters of v with the n keys of w through
// AddMany, BatchSize keys a call, until minTime has passed (at least once),
// and returns the fastest fill's time per key. ok is false when v's filters
// have no AddMany.
func BatchAddTimed(v *Variant, w Workload, minTime time.Duration) (ns float64, ok bool, err error) {
	if v.Static() {
		return 0, false, nil
	}
	ns = math.Inf(1)
	start := time.Now()
	for first := true; first || time.Since(start) < minTime; first = false {
		runtime.GC()
		f, err := v.New(w.N, w.P)
		if err != nil {
			return 0, false, fmt.Errorf("%s: %w", v.Name, err)
		}
		ba, ok := f.(BatchAdder)
		if !ok {
			return 0, false, nil
		}
		var t time.Duration
		s := NewKeyStream(w.Keys, SetPositive, 0, w.N)
		for c := s.Next(); c != nil; c = s.Next() {
			t0 := time.Now()
			for i := 0; i < len(c); i += BatchSize {
				ba.AddMany(c[i:min(i+BatchSize, len(c))])
			}
			t += time.Since(t0)
		}
		ns = min(ns, float64(t.Nanoseconds())/float64(w.N))
	}
	return ns, true, nil
}

// BitsPerKey is the filter's memory in bits per key added.
func (b *Built) BitsPerKey() float64 { return float64(b.Filter.Bytes()) * 8 / float64(b.N) }

// FalseNegatives counts the added keys (all n of them) that Contains denies.
// It must be 0 for every Bloom filter.
func (b *Built) FalseNegatives() uint64 {
	var fn uint64
	s := NewKeyStream(b.Keys, SetPositive, 0, b.N)
	for c := s.Next(); c != nil; c = s.Next() {
		for _, k := range c {
			if !b.Filter.Contains(k) {
				fn++
			}
		}
	}
	return fn
}

// Rate is a measured false-positive rate: Positives of Trials negatives
// were reported present.
type Rate struct {
	Positives, Trials uint64
}

// Value is the measured rate.
func (r Rate) Value() float64 { return float64(r.Positives) / float64(r.Trials) }

// Interval is the 95% Wilson score interval of the rate.
func (r Rate) Interval() (lo, hi float64) { return r.interval(1.959964) }

// Above reports whether the rate is above target beyond reasonable doubt:
// the lower end of its 99.9% Wilson interval is above target. (At 95%, one
// cell in twenty of a sweep of filters that meet their target would be
// flagged by chance.)
func (r Rate) Above(target float64) bool {
	lo, _ := r.interval(3.290527)
	return lo > target
}

func (r Rate) interval(z float64) (lo, hi float64) {
	n := float64(r.Trials)
	p := r.Value()
	d := 1 + z*z/n
	c := (p + z*z/(2*n)) / d
	h := z * math.Sqrt(p*(1-p)/n+z*z/(4*n*n)) / d
	lo, hi = max(c-h, 0), min(c+h, 1)
	if r.Positives == 0 {
		lo = 0
	}
	return lo, hi
}

// FalsePositives counts how many of trials never-added keys b's filter
// reports present. The keys are negatives from index PoolMax on, disjoint
// from the miss pool. Filters that allow concurrent lookups are queried
// from GOMAXPROCS goroutines.
func (b *Built) FalsePositives(trials uint64) Rate { return b.FalsePositivesWithin(trials, trials, 0) }

// FalsePositivesWithin is FalsePositives that may stop early: once at least
// minTrials keys are tested and budget has passed, it stops at the end of
// the chunk of keys it is on. A zero budget never stops early.
func (b *Built) FalsePositivesWithin(trials, minTrials uint64, budget time.Duration) Rate {
	workers := 1
	if b.Variant.ConcurrentLookups {
		workers = runtime.GOMAXPROCS(0)
	}
	deadline := time.Now().Add(budget)
	var next, tested, positives atomic.Uint64 // next: chunk index
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := b.Keys.Len()
			buf := make([]byte, ChunkKeys*l)
			for {
				from := next.Add(1) - 1
				if from*ChunkKeys >= trials {
					return
				}
				if budget > 0 && tested.Load() >= minTrials && time.Now().After(deadline) {
					return
				}
				count := min(ChunkKeys, trials-from*ChunkKeys)
				var fp uint64
				for j := range count {
					if b.Filter.Contains(Key(buf[j*uint64(l):], b.Keys, SetNegative, PoolMax+from*ChunkKeys+j)) {
						fp++
					}
				}
				positives.Add(fp)
				tested.Add(count)
			}
		}()
	}
	wg.Wait()
	return Rate{positives.Load(), tested.Load()}
}

// sink keeps lookup results alive so the compiler cannot drop the calls.
var sink atomic.Uint64

// LookupBench times f.Contains over keys, cycling; one op is one lookup.
// Successive runs of the returned function go on where the last one
// stopped, so a repeated measurement does not find the same keys' cache
// lines still warm.
func LookupBench(f Filter, keys KeySet) func(b *testing.B) {
	flat, l, off := keys.flat, keys.l, 0
	return func(b *testing.B) {
		b.ReportAllocs()
		found := 0
		for range b.N {
			if f.Contains(flat[off : off+l : off+l]) {
				found++
			}
			if off += l; off == len(flat) {
				off = 0
			}
		}
		sink.Add(uint64(found))
	}
}

// ParallelLookupBench times f.Contains over keys from GOMAXPROCS goroutines
// (b.RunParallel), each starting at its own place in keys; one op is one
// lookup, so ns/op is wall time over all goroutines' lookups.
func ParallelLookupBench(f Filter, keys KeySet) func(b *testing.B) {
	var next atomic.Uint64
	flat, l, n := keys.flat, keys.l, uint64(keys.Len())
	return func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			off := int(splitMix(next.Add(1))%n) * l
			found := 0
			for pb.Next() {
				if f.Contains(flat[off : off+l : off+l]) {
					found++
				}
				if off += l; off == len(flat) {
					off = 0
				}
			}
			sink.Add(uint64(found))
		})
	}
}

// BatchSize is the number of keys per ContainsMany call.
const BatchSize = 256

// BatchLookupBench times f.ContainsMany over keys in batches of BatchSize;
// one op is one key. Like LookupBench, runs go on where the last stopped.
func BatchLookupBench(f BatchFilter, keys KeySet) func(b *testing.B) {
	batch := min(BatchSize, keys.Len())
	found := make([]bool, batch)
	in := make([][]byte, batch)
	n, j := keys.Len(), 0
	return func(b *testing.B) {
		b.ReportAllocs()
		count := 0
		for i := 0; i < b.N; i += batch {
			c := min(batch, b.N-i)
			if j+c > n {
				j = 0
			}
			for x := range c {
				in[x] = keys.At(j + x)
			}
			found = f.ContainsMany(in[:c], found)
			for _, ok := range found[:c] {
				if ok {
					count++
				}
			}
			j += c
		}
		sink.Add(uint64(count))
	}
}

// AddBench times v's Add on new keys of w; one op is one key. Keys are made
// in chunks outside the timer, and when n keys have gone in, the filter is
// replaced by an empty one, also outside the timer, so every add goes to a
// filter between empty and full, as in a real fill. With batch, keys go in
// through AddMany, BatchSize at a time.
func AddBench(v *Variant, w Workload, batch bool) func(b *testing.B) {
	return func(b *testing.B) {
		b.ReportAllocs()
		b.StopTimer()
		var f Filter
		var s *KeyStream
		var chunk [][]byte
		left, j := uint64(0), 0
		for i := 0; i < b.N; {
			if left == 0 {
				b.StopTimer()
				f = nil
				var err error
				if f, err = v.New(w.N, w.P); err != nil {
					b.Fatal(err)
				}
				s, left = NewKeyStream(w.Keys, SetPositive, 0, w.N), w.N
				chunk, j = nil, 0
				b.StartTimer()
			}
			if j == len(chunk) {
				b.StopTimer()
				chunk, j = s.Next(), 0
				b.StartTimer()
			}
			c := 1
			if batch {
				c = min(BatchSize, len(chunk)-j, b.N-i)
				f.(BatchAdder).AddMany(chunk[j : j+c])
			} else {
				f.Add(chunk[j])
			}
			j += c
			i += c
			left -= uint64(c)
		}
		b.StopTimer()
	}
}

// OpenBench times Open and Close of the filter file at path; one op is one
// open and close.
func OpenBench(v *Variant, path string) func(b *testing.B) {
	return func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_, c, err := v.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			if err := c.Close(); err != nil {
				b.Fatal(err)
			}
		}
	}
}
