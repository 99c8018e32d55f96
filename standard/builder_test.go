package standard

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

// A filter built with a Builder (Add, AddString and AddDigest mixed,
// repeats included) holds exactly the bits and count of one built with Add.
func TestBuilderMatchesAdd(t *testing.T) {
	a, err := New(20_000, 0.01, WithSeed(0x5eed))
	require.NoError(t, err)
	b, err := New(20_000, 0.01, WithSeed(0x5eed))
	require.NoError(t, err)
	var keys [][]byte
	for i := uint64(0); i < 20_000; i++ {
		keys = append(keys, filtertest.Key(make([]byte, 16), 1, i))
	}
	keys = append(keys, keys[:100]...) // repeats are not new
	bl := b.Builder()
	for i, k := range keys {
		want := a.Add(k)
		switch i % 3 {
		case 0:
			require.Equal(t, want, bl.Add(k), "key %d", i)
		case 1:
			require.Equal(t, want, bl.AddString(string(k)), "key %d", i)
		case 2:
			require.Equal(t, want, bl.AddDigest(b.Hash(k)), "key %d", i)
		}
	}
	require.Zero(t, b.Added(), "counts reach the filter at Flush")
	bl.Flush()
	require.Equal(t, a.words, b.words)
	require.Equal(t, a.Added(), b.Added())
	require.Zero(t, testing.AllocsPerRun(10, func() { bl.Add(keys[0]) }))
}

// A file built through a Builder and closed after Flush reopens with every
// key and the count in its header; after Close the Builder writes nothing.
func TestBuilderFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.bloom")
	f, err := Create(path, 10_000, 0.01)
	require.NoError(t, err)
	bl := f.Builder()
	n := uint64(0)
	var keys [][]byte
	for i := uint64(0); i < 10_000; i++ {
		k := filtertest.Key(make([]byte, 16), 1, i)
		keys = append(keys, k)
		if bl.Add(k) {
			n++
		}
	}
	bl.Flush()
	require.NoError(t, f.Close())
	require.False(t, bl.Add([]byte("after close")))
	r, err := OpenReadOnly(path)
	require.NoError(t, err)
	defer r.Close()
	require.Equal(t, n, r.Added())
	for i, k := range keys {
		require.True(t, r.Contains(k), "key %d", i)
	}
}

func TestBuilderOnReadOnlyPanics(t *testing.T) {
	f, err := New(100, 0.01)
	require.NoError(t, err)
	f.readOnly = true
	require.PanicsWithError(t, "standard: Builder: "+ErrReadOnly.Error()+": ", func() { f.Builder() })
}
