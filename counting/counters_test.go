package counting

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// nibbles splits a word into its 16 counters, the reference every word-wide
// operation is checked against.
func nibbles(w uint64) (c [perWord]uint64) {
	for i := range c {
		c[i] = w >> (i * counterBits) & maxCount
	}
	return c
}

func fromNibbles(c [perWord]uint64) (w uint64) {
	for i, v := range c {
		w |= v << (i * counterBits)
	}
	return w
}

// randomWord returns a word whose counters favour the edge values 0, 1, 14
// and 15, where carries and borrows happen.
func randomWord(r *rand.Rand) uint64 {
	var c [perWord]uint64
	for i := range c {
		switch r.IntN(3) {
		case 0:
			c[i] = []uint64{0, 1, 7, 8, 14, 15}[r.IntN(6)]
		default:
			c[i] = r.Uint64N(16)
		}
	}
	return fromNibbles(c)
}

func TestWordOperationsMatchCounterByCounter(t *testing.T) {
	const seed = 20240611
	r := rand.New(rand.NewPCG(seed, 0))
	pairs := 200_000
	if testing.Short() {
		pairs = 20_000
	}
	for n := 0; n < pairs; n++ {
		a, b := randomWord(r), randomWord(r)
		ca, cb := nibbles(a), nibbles(b)
		var sum, least [perWord]uint64
		var nz, sat, presence uint64
		for i := range ca {
			sum[i] = min(ca[i]+cb[i], maxCount)
			least[i] = min(ca[i], cb[i])
			if ca[i] != 0 {
				nz |= 1 << (i * counterBits)
				presence |= 1 << i
			}
			if ca[i] == maxCount {
				sat |= 1 << (i * counterBits)
			}
		}
		if fromNibbles(sum) != addSaturating(a, b) || fromNibbles(least) != minimum(a, b) ||
			nonzero(a) != nz || full(a) != sat || presenceBits(a) != presence {
			t.Fatalf("seed %d, pair %d: a=%016x b=%016x: sum %016x/%016x min %016x/%016x nonzero %016x/%016x full %016x/%016x presence %04x/%04x",
				seed, n, a, b, fromNibbles(sum), addSaturating(a, b), fromNibbles(least), minimum(a, b),
				nz, nonzero(a), sat, full(a), presence, presenceBits(a))
		}
	}
}

func TestIncrementDecrementSaturate(t *testing.T) {
	words := make([]uint64, 2)
	for v := uint64(0); v < maxCount; v++ {
		require.Equal(t, v, increment(words, 17))
	}
	require.EqualValues(t, maxCount, increment(words, 17), "saturated: stays")
	require.EqualValues(t, maxCount, decrement(words, 17), "saturated: never decremented")
	require.EqualValues(t, maxCount, get(words, 17))
	require.Equal(t, []uint64{0, maxCount << 4}, words, "neighbours untouched")
	require.Zero(t, decrement(words, 16), "zero: stays")
	require.Zero(t, get(words, 16))
	require.Zero(t, words[0])
}

func TestPaddingIsIgnored(t *testing.T) {
	// 20 counters: the second word holds counters 16..19 and 12 padding
	// nibbles, here all set as a crafted file could have them.
	words := []uint64{0, ^uint64(0) &^ 0xFFFF}
	nonZero, saturated := census(words, 20)
	require.Zero(t, nonZero)
	require.Zero(t, saturated)
	out := make([]uint64, 1)
	require.Zero(t, presence(out, words, 20))
	require.Zero(t, out[0])
	words[1] |= 0x1F // counter 16 = 15, counter 17 = 1
	nonZero, saturated = census(words, 20)
	require.EqualValues(t, 2, nonZero)
	require.EqualValues(t, 1, saturated)
	require.EqualValues(t, 2, presence(out, words, 20))
	require.Equal(t, uint64(0b11)<<16, out[0])

	dst := make([]uint64, 2)
	require.EqualValues(t, 1, combine(dst, words, 20, addSaturating))
	require.Equal(t, []uint64{0, 0x1F}, dst, "padding of the source is not copied")
}
