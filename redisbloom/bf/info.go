package bf

import (
	"math"
	"math/bits"
	"sync/atomic"
)

// FillRatio is the share of the stages' bits that are set.
func (f *Filter) FillRatio() float64 {
	var set, all uint64
	for _, s := range *f.stages.Load() {
		set += s.ones()
		all += s.Bits
	}
	return float64(set) / float64(all)
}

func (s *stage) ones() uint64 {
	var n uint64
	for i := range s.words {
		n += uint64(bits.OnesCount64(atomic.LoadUint64(&s.words[i])))
	}
	return n
}

// EstimatedFPR is the rate the stages' fill implies: an item is a false
// positive when some stage has all its k probes set.
func (f *Filter) EstimatedFPR() float64 {
	miss := 1.0
	for _, s := range *f.stages.Load() {
		miss *= 1 - math.Pow(float64(s.ones())/float64(s.Bits), float64(s.Hashes))
	}
	return 1 - miss
}

// TargetFPR is the error rate the chain was reserved with: its first
// stage's, which RedisBloom halves for a chain that scales.
func (f *Filter) TargetFPR() float64 {
	e := (*f.stages.Load())[0].Error
	if f.options&OptNoScaling == 0 {
		e /= tightening
	}
	return min(e, 0.999999)
}

// K is the first stage's number of probes (each stage has its own).
func (f *Filter) K() uint32 { return (*f.stages.Load())[0].Hashes }

// Bits is the stages' bits together; Bytes their bytes.
func (f *Filter) Bits() uint64 {
	var n uint64
	for _, s := range *f.stages.Load() {
		n += s.Bits
	}
	return n
}

// Bytes is the memory (or mapping) the stages' arrays take.
func (f *Filter) Bytes() uint64 { return f.TotalBytes() }
