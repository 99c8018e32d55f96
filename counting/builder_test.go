package counting

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

// A filter built with a Builder (Add, AddString and AddDigest mixed,
// repeats included, some counters driven to saturation) holds exactly the
// counters, count and saturation count of one built with Add.
func TestBuilderMatchesAdd(t *testing.T) {
	a, err := New(20_000, 0.01, WithSeed(0x5eed))
	require.NoError(t, err)
	b, err := New(20_000, 0.01, WithSeed(0x5eed))
	require.NoError(t, err)
	var keys [][]byte
	for i := uint64(0); i < 20_000; i++ {
		keys = append(keys, filtertest.Key(make([]byte, 16), 1, i))
	}
	for range 20 { // one key 20 times: its counters saturate at 15
		keys = append(keys, keys[7])
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
	require.Equal(t, a.Saturated(), b.Saturated())
	require.NotZero(t, b.Saturated())
	// Remove after a Builder's adds restores the counters as after Add.
	for _, k := range keys[:500] {
		require.Equal(t, a.Remove(k), b.Remove(k))
	}
	bl.Flush()
	require.Equal(t, a.words, b.words)
	require.Zero(t, testing.AllocsPerRun(10, func() { bl.Add(keys[0]) }))
}

// A file built through a Builder and closed after Flush reopens with every
// key and the count in its header.
func TestBuilderFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.bloom")
	f, err := Create(path, 10_000, 0.01)
	require.NoError(t, err)
	bl := f.Builder()
	n := 0
	var keys [][]byte
	for i := uint64(0); i < 10_000; i++ {
		k := filtertest.Key(make([]byte, 16), 1, i)
		keys = append(keys, k)
		bl.Add(k)
		n++
	}
	bl.Flush()
	require.NoError(t, f.Close())
	r, err := OpenReadOnly(path)
	require.NoError(t, err)
	defer r.Close()
	require.EqualValues(t, n, r.Added())
	for i, k := range keys {
		require.True(t, r.Contains(k), "key %d", i)
	}
}

func TestBuilderOnReadOnlyPanics(t *testing.T) {
	f, err := New(100, 0.01)
	require.NoError(t, err)
	f.readOnly = true
	require.PanicsWithError(t, "counting: Builder: "+ErrReadOnly.Error()+": ", func() { f.Builder() })
}

// After Close a Builder writes nothing and reports nothing new, as Add.
func TestBuilderAfterClose(t *testing.T) {
	f, err := Create(filepath.Join(t.TempDir(), "c.bloom"), 100, 0.01)
	require.NoError(t, err)
	bl := f.Builder()
	require.NoError(t, f.Close())
	require.False(t, bl.Add([]byte("k")))
}
