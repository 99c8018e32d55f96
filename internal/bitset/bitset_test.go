package bitset

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSetTestCount(t *testing.T) {
	words := make([]uint64, 3)
	for _, i := range []uint64{0, 1, 63, 64, 127, 150, 191} {
		require.False(t, Test(words, i), "bit %d", i)
		require.False(t, Set(words, i), "bit %d was clear", i)
		require.True(t, Test(words, i), "bit %d", i)
		require.True(t, Set(words, i), "bit %d was set", i)
	}
	require.EqualValues(t, 7, Count(words))
	require.Equal(t, []uint64{1<<0 | 1<<1 | 1<<63, 1<<0 | 1<<63, 1<<(150-128) | 1<<63}, words)
	require.False(t, Test(words, 2))
	require.False(t, Test(words, 128))
}

// TestSetPlain: SetPlain sets the bit and answers its mask when it was
// clear, 0 when it was set, so that answers ORed together say whether any
// bit was clear.
func TestSetPlain(t *testing.T) {
	words := make([]uint64, 3)
	var missing uint64
	for _, i := range []uint64{0, 1, 63, 64, 127, 150, 191} {
		require.Equal(t, uint64(1)<<(i&63), SetPlain(words, i), "bit %d was clear", i)
		require.True(t, Test(words, i), "bit %d", i)
		require.Zero(t, SetPlain(words, i), "bit %d was set", i)
		missing |= SetPlain(words, i)
	}
	require.Zero(t, missing, "every bit set: none missing")
	require.EqualValues(t, 7, Count(words))
}

func TestOrAnd(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	a, b := make([]uint64, 50), make([]uint64, 50)
	for i := range a {
		a[i], b[i] = r.Uint64(), r.Uint64()
	}
	or, and := append([]uint64(nil), a...), append([]uint64(nil), a...)
	Or(or, b)
	And(and, b)
	for i := range a {
		require.Equal(t, a[i]|b[i], or[i])
		require.Equal(t, a[i]&b[i], and[i])
	}
}

// TestConcurrentSetLosesNothing sets every bit of a few words from many
// goroutines at once, each goroutine its own bits, interleaved so that every
// word is written by all of them: a plain read-modify-write would lose bits.
func TestConcurrentSetLosesNothing(t *testing.T) {
	const words, workers, rounds = 64, 4, 200
	for round := 0; round < rounds; round++ {
		w := make([]uint64, words)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for g := uint64(0); g < workers; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for i := g; i < words*64; i += workers {
					Set(w, i)
				}
			}()
		}
		close(start)
		wg.Wait()
		for i := range w {
			require.Equal(t, ^uint64(0), w[i], "round %d word %d lost bits", round, i)
		}
		require.EqualValues(t, words*64, Count(w))
	}
}
