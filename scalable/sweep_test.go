package scalable

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/standard"
)

var sweep = flag.Bool("sweep", false, "print the tables of docs/scalable.md (about a minute)")

// stdStages is a scalable filter whose stages are classic (standard)
// filters, sized by the classic formula, with the same growth rule: the
// alternative the stage type was chosen against (docs/scalable.md). Test
// code only; it is not safe for concurrent use.
type stdStages struct {
	n0     uint64
	p      float64
	cfg    config
	stages []*standard.Filter
	counts []uint64
}

func newStdStages(n0 uint64, p float64) *stdStages {
	s := &stdStages{n0: n0, p: p, cfg: defaultConfig()}
	s.grow()
	return s
}

func (s *stdStages) grow() {
	i := len(s.stages)
	c := uint64(math.Ceil(float64(s.n0) * math.Pow(s.cfg.growth, float64(i))))
	f, err := standard.New(c, s.p*(1-s.cfg.tight)*math.Pow(s.cfg.tight, float64(i)), standard.WithSeed(s.cfg.seed))
	if err != nil {
		panic(err)
	}
	s.stages = append(s.stages, f)
	s.counts = append(s.counts, 0)
}

func (s *stdStages) AddDigest(d hashing.Digest) bool {
	if s.ContainsDigest(d) {
		return false
	}
	last := len(s.stages) - 1
	if s.counts[last] >= s.stages[last].Capacity() {
		s.grow()
		last++
	}
	s.stages[last].AddDigest(d)
	s.counts[last]++
	return true
}

func (s *stdStages) ContainsDigest(d hashing.Digest) bool {
	for i := len(s.stages) - 1; i >= 0; i-- {
		if s.stages[i].ContainsDigest(d) {
			return true
		}
	}
	return false
}

func (s *stdStages) Add(key []byte) bool { return s.AddDigest(hashing.Sum(key, s.cfg.seed)) }
func (s *stdStages) AddString(key string) bool {
	return s.AddDigest(hashing.SumString(key, s.cfg.seed))
}
func (s *stdStages) Contains(key []byte) bool { return s.ContainsDigest(hashing.Sum(key, s.cfg.seed)) }
func (s *stdStages) ContainsString(key string) bool {
	return s.ContainsDigest(hashing.SumString(key, s.cfg.seed))
}

// clone returns a copy of s, each stage copied through its stream.
func (s *stdStages) clone() benchFilter {
	c := &stdStages{n0: s.n0, p: s.p, cfg: s.cfg, counts: append([]uint64(nil), s.counts...)}
	for _, f := range s.stages {
		var buf bytes.Buffer
		if _, err := f.WriteTo(&buf); err != nil {
			panic(err)
		}
		g, err := standard.ReadFrom(&buf)
		if err != nil {
			panic(err)
		}
		c.stages = append(c.stages, g)
	}
	return c
}

func (s *stdStages) Added() uint64 {
	var n uint64
	for _, c := range s.counts {
		n += c
	}
	return n
}

func (s *stdStages) Bits() uint64 {
	var m uint64
	for _, f := range s.stages {
		m += f.Bits()
	}
	return m
}

// TestSweep prints the measurements behind the default r and the stage
// type, the tables of docs/scalable.md (about two minutes):
//
//	go test ./scalable -run TestSweep -sweep -v
func TestSweep(t *testing.T) {
	if !*sweep {
		t.Skip("run with -sweep")
	}
	const n0 = 10_000
	const trials = 2_000_000
	w := os.Stdout
	fmt.Fprintf(w, "n0 = %d, s = 2. A filter at Nx has taken N·n0 new keys (Added); bits/key = all stages' bits / (N·n0).\n", n0)
	fmt.Fprintf(w, "At 63x and 1023x every stage is full; at 64x and 1024x a new stage has just opened.\n")
	fmt.Fprintf(w, "Rates at 64x: measured on %d never-added keys; state = EstimatedFPR (from the fill of every block); Σ targets = Σ p(1-r)r^i over the stages.\n\n", trials)
	fmt.Fprintln(w, "| p | r | bits/key 63x | 64x | 1023x | 1024x | stages at 64x | measured rate / p | state / p | Σ targets / p |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, p := range []float64{0.01, 0.001} {
		for _, r := range []float64{0.5, 0.7, 0.8, 0.85, 0.9} {
			f, err := New(n0, p, WithTightening(r))
			if err != nil {
				t.Fatal(err)
			}
			bpk := map[uint64]float64{}
			var stages64 int
			var rate, state, bound float64
			next := uint64(0)
			for _, mult := range []uint64{63, 64, 1023, 1024} {
				next = fillTo(f, 1, next, mult*n0)
				bpk[mult] = float64(f.Bits()) / float64(mult*n0)
				if mult == 64 {
					stages64 = f.NumStages()
					rate = float64(filtertest.CountFalsePositives(f, 2, trials)) / trials
					state = f.EstimatedFPR()
					for _, s := range f.Stages() {
						bound += s.TargetFPR
					}
				}
			}
			if f.Err() != nil {
				t.Fatal(f.Err())
			}
			fmt.Fprintf(w, "| %g | %g | %.2f | %.2f | %.2f | %.2f | %d | %.3f | %.3f | %.3f |\n",
				p, r, bpk[63], bpk[64], bpk[1023], bpk[1024], stages64, rate/p, state/p, bound/p)
		}
	}

	fmt.Fprintf(w, "\nStage type, r = 0.85: blocked stages (blocked.Params) against classic stages (standard.New, m = -n ln p / (ln 2)^2).\n")
	fmt.Fprintf(w, "Cache lines (each possibly a page of a cold file) a lookup reads at 1023x (10 full stages), from each stage's fill f and k:\n")
	fmt.Fprintf(w, "a blocked stage costs 1; a classic one k for the stage that holds the key and (1-f^k)/(1-f) for the others (probes up to the first clear bit).\n\n")
	fmt.Fprintln(w, "| p | stages | bits/key 63x | 64x | 1023x | measured rate / p at 64x | lines per miss | lines per hit |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, p := range []float64{0.01, 0.001} {
		f, err := New(n0, p)
		if err != nil {
			t.Fatal(err)
		}
		g := newStdStages(n0, p)
		blockedLines := func() (miss, hit float64) {
			st := f.Stages()
			return lines(len(st), func(i int) (float64, float64, float64) { return 1, 1, float64(st[i].Count) })
		}
		classicLines := func() (miss, hit float64) {
			return lines(len(g.stages), func(i int) (float64, float64, float64) {
				s := g.stages[i]
				fill, k := s.FillRatio(), float64(s.K())
				return (1 - math.Pow(fill, k)) / (1 - fill), k, float64(g.counts[i])
			})
		}
		for _, c := range []struct {
			name  string
			f     filtertest.Filter
			bits  func() uint64
			added func() uint64
			lines func() (float64, float64)
		}{{"blocked", f, f.Bits, f.Added, blockedLines}, {"standard", g, g.Bits, g.Added, classicLines}} {
			bpk := map[uint64]float64{}
			var rate float64
			next := uint64(0)
			for _, mult := range []uint64{63, 64, 1023} {
				for c.added() < mult*n0 {
					c.f.Add(filtertest.Key(make([]byte, 16), 1, next))
					next++
				}
				bpk[mult] = float64(c.bits()) / float64(mult*n0)
				if mult == 64 {
					rate = float64(filtertest.CountFalsePositives(c.f, 2, trials)) / trials
				}
			}
			miss, hit := c.lines()
			fmt.Fprintf(w, "| %g | %s | %.2f | %.2f | %.2f | %.3f | %.1f | %.1f |\n", p, c.name, bpk[63], bpk[64], bpk[1023], rate/p, miss, hit)
		}
	}
}

// lines returns the cache lines a miss and an average hit read in a filter
// of n stages, given for stage i the lines a test costs when the stage does
// not hold the key and when it does, and the keys it holds. Stages are
// tested newest first.
func lines(n int, stage func(i int) (miss, hit, keys float64)) (miss, hit float64) {
	var total, above float64 // above: lines of the stages newer than i
	for i := n - 1; i >= 0; i-- {
		m, h, keys := stage(i)
		hit += keys * (above + h)
		total += keys
		above += m
	}
	return above, hit / total
}

// fillTo adds keys of set from index next on until f has taken n new keys,
// and returns the next unused index.
func fillTo(f *Filter, set, next, n uint64) uint64 {
	var buf [16]byte
	for f.Added() < n {
		f.Add(filtertest.Key(buf[:], set, next))
		next++
	}
	return next
}

// addRange adds keys from..to-1 of set.
func addRange(f filtertest.Filter, set, from, to uint64) {
	var buf [16]byte
	for i := from; i < to; i++ {
		f.Add(filtertest.Key(buf[:], set, i))
	}
}
