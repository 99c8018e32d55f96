package fuse

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

// keySet returns keys 0..n-1 of set (16 bytes each, distinct).
func keySet(set, n uint64) [][]byte {
	keys := make([][]byte, n)
	buf := make([]byte, 16*n)
	for i := range keys {
		keys[i] = filtertest.Key(buf[16*i:], set, uint64(i))
	}
	return keys
}

func requireAll(t testing.TB, f *Filter, keys [][]byte) {
	t.Helper()
	for i, k := range keys {
		if !f.Contains(k) || !f.ContainsString(string(k)) || !f.ContainsDigest(f.Hash(k)) {
			t.Fatalf("false negative: key %d (%x) of %d", i, k, len(keys))
		}
	}
	found := f.ContainsMany(keys, nil)
	for i, ok := range found {
		if !ok {
			t.Fatalf("ContainsMany: false negative: key %d (%x)", i, keys[i])
		}
	}
}

func TestTinySets(t *testing.T) {
	for n := uint64(0); n <= 40; n++ {
		for _, p := range []float64{0.01, 1e-4} {
			keys := keySet(7, n)
			f, err := Build(keys, p)
			require.NoError(t, err)
			requireAll(t, f, keys)
			require.Equal(t, n, f.Added())
			require.Equal(t, 1, f.Shards())
		}
	}
}

func TestGeometry(t *testing.T) {
	for _, c := range []struct {
		n     uint64
		cells uint64
	}{{0, 12}, {1, 12}, {2, 12}, {1e6, (136 + 2) * 8192}} {
		require.Equal(t, c.cells, geomFor(c.n).cells(), "n = %d", c.n)
	}
}

// TestDuplicates: every key of a set given many times is contained, and
// counted once.
func TestDuplicates(t *testing.T) {
	keys := keySet(3, 5000)
	all := append(append([][]byte{}, keys...), keys...)
	all = append(all, keys[:100]...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	f, err := Build(all, 0.01)
	require.NoError(t, err)
	requireAll(t, f, keys)
	require.Equal(t, uint64(5000), f.Added())
}

func TestMix(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 1000 {
		x := r.Uint64()
		require.Equal(t, x, unmix(mix(x)))
	}
}

func TestSort(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 7))
	for _, n := range []int{0, 1, 47, 48, 49, 1000, 100000} {
		a := make([]uint64, n)
		for i := range a {
			a[i] = r.Uint64() >> (r.Uint64() % 64)
		}
		b := append([]uint64(nil), a...)
		sortUint64(a, make([]uint64, n))
		for i := 1; i < n; i++ {
			require.LessOrEqual(t, a[i-1], a[i], fmt.Sprint(n))
		}
		_ = b
	}
}
