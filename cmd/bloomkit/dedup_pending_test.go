package main

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPendingSetIsAMap replays random batches against a Go map: puts of
// new hashes (many sharing their low bits, so probes run long), gets of
// stored and absent ones, resets, growth past the first table, and the
// generation counter wrapping around.
func TestPendingSetIsAMap(t *testing.T) {
	var s pendingSet
	rng := rand.New(rand.NewPCG(1, 2))
	want := map[uint64]int{}
	for batch := range 40 {
		if batch == 20 {
			s.gen = math.MaxUint32 - 1 // the next resets wrap
		}
		n := rng.IntN(5000)
		for i := range n {
			h := rng.Uint64()
			if i%3 == 0 {
				h &^= 0xffff // same low bits: one long probe run
			}
			if _, ok := want[h]; ok {
				continue
			}
			_, ok := s.get(h)
			require.False(t, ok, "batch %d: %x found before it was put", batch, h)
			s.put(h, i)
			want[h] = i
		}
		for h, off := range want {
			got, ok := s.get(h)
			require.True(t, ok, "batch %d: %x lost", batch, h)
			require.Equal(t, off, got)
		}
		for range 100 {
			_, ok := s.get(rng.Uint64())
			require.False(t, ok)
		}
		s.reset()
		for i, sl := range s.slots {
			require.NotEqual(t, s.gen, sl.gen, "batch %d: slot %d looks full after reset", batch, i)
		}
		for h := range want {
			_, ok := s.get(h)
			require.False(t, ok, "batch %d: %x kept after reset", batch, h)
		}
		clear(want)
	}
}
