package scalable

import (
	"math"

	"github.com/bloomkit/bloomkit/internal/blocked"
)

// The introspection of a scalable filter: its stages, sizes, counts and
// rates.

// NumStages returns the number of stages. O(1).
func (f *Filter) NumStages() int { return len(f.current()) }

// Capacity returns the keys the current stages hold together. The filter
// grows past it: the next stage adds s times the newest one's capacity.
func (f *Filter) Capacity() uint64 {
	var c uint64
	for _, s := range f.current() {
		c += s.capacity
	}
	return c
}

// InitialCapacity returns n0, the capacity of the first stage.
func (f *Filter) InitialCapacity() uint64 { return f.n0 }

// TargetFPR returns p, the bound on the compound false-positive rate.
func (f *Filter) TargetFPR() float64 { return f.p }

// Growth returns s, the capacity ratio between consecutive stages.
func (f *Filter) Growth() float64 { return f.cfg.growth }

// Tightening returns r, the error ratio between consecutive stages.
func (f *Filter) Tightening() float64 { return f.cfg.tight }

// K returns the probes per key of the newest stage (each stage has its
// own), or 0 for a closed filter.
func (f *Filter) K() uint32 {
	st := f.current()
	if len(st) == 0 {
		return 0
	}
	return st[len(st)-1].k
}

// Bits returns the bits of all stages together.
func (f *Filter) Bits() uint64 {
	var m uint64
	for _, s := range f.current() {
		m += s.bits()
	}
	return m
}

// Bytes returns the memory of all stages together (Bits / 8).
func (f *Filter) Bytes() uint64 {
	if f.stages.Load() == nil {
		return 0
	}
	return f.Bits() / 8
}

// Seed returns the hash seed.
func (f *Filter) Seed() uint64 { return f.cfg.seed }

// Added returns how many Add calls reported a new key: the sum of the
// stages' counts (for a filter from a file, as of its last Sync or Close,
// plus its Adds since it was opened).
func (f *Filter) Added() uint64 {
	var n uint64
	for _, s := range f.current() {
		n += s.count.Load()
	}
	return n
}

// ApproxCount estimates the distinct keys added from the set bits of every
// block of every stage (see estimateCount). O(Bits/64).
func (f *Filter) ApproxCount() uint64 {
	var c float64
	for _, s := range f.current() {
		c += estimateCount(s.words, s.k)
	}
	if c >= math.MaxUint64 {
		return math.MaxUint64
	}
	return uint64(math.Round(c))
}

// FillRatio returns the fraction of all bits that are set. O(Bits/64).
func (f *Filter) FillRatio() float64 {
	var set, m uint64
	for _, s := range f.current() {
		set += blocked.Count(s.words)
		m += s.bits()
	}
	if m == 0 {
		return 0
	}
	return float64(set) / float64(m)
}

// EstimatedFPR returns the compound false-positive rate implied by each
// stage's fill: 1 - Π(1 - rate_i), rate_i the mean over its blocks of
// (set bits/512)^k. O(Bits/64).
func (f *Filter) EstimatedFPR() float64 {
	miss := 1.0
	for _, s := range f.current() {
		miss *= 1 - blocked.StateFPR(s.words, s.k)
	}
	return 1 - miss
}

// ReadOnly reports whether the filter was opened with OpenReadOnly.
func (f *Filter) ReadOnly() bool { return f.readOnly }

// estimateCount estimates the keys in the blocked bit array words of k
// probes per key, block by block: a block with c of its B = 512 bits set
// holds about ln(1 - c/B) / (k ln(1 - 1/B)) keys. Summing per block, rather
// than inverting the fill of the whole array, is not misled by the uneven
// loads of blocks. A full block counts as B - 1/2 bits set.
func estimateCount(words []uint64, k uint32) float64 {
	var keys [blocked.BlockBits + 1]float64 // by set bits, filled on first use
	var seen [blocked.BlockBits + 1]bool
	per := float64(k) * math.Log1p(-1.0/blocked.BlockBits)
	var sum float64
	for b := 0; b+blocked.BlockWords <= len(words); b += blocked.BlockWords {
		c := int(blocked.Count(words[b : b+blocked.BlockWords]))
		if !seen[c] {
			x := math.Min(float64(c), blocked.BlockBits-0.5)
			keys[c], seen[c] = math.Log1p(-x/blocked.BlockBits)/per, true
		}
		sum += keys[c]
	}
	return sum
}
