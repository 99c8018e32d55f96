package partitioned

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// A filter built with a Builder (Add, AddString and AddMany mixed, repeats
// included) holds exactly the bits and count of one built with Add.
func TestBuilderMatchesAdd(t *testing.T) {
	a, err := New(50_000, 0.01)
	require.NoError(t, err)
	b, err := New(50_000, 0.01)
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
			require.Equal(t, want, bl.AddMany(keys[i:i+1]) == 1, "key %d", i)
		}
	}
	bl.Flush()
	require.Equal(t, a.t.Words, b.t.Words)
	require.Equal(t, a.Added(), b.Added())
	require.Zero(t, bl.AddMany(keys[:1000]), "all present")
	require.Zero(t, testing.AllocsPerRun(10, func() { bl.Add(keys[0]) }))
	require.Zero(t, testing.AllocsPerRun(10, func() { bl.AddMany(keys[:1000]) }))
}

// A file built through a Builder and closed after Flush reopens with every
// key and the count in its header.
func TestBuilderFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.bloom")
	f, err := Create(path, 10_000, 0.01)
	require.NoError(t, err)
	bl := f.Builder()
	var keys [][]byte
	for i := uint64(0); i < 10_000; i++ {
		keys = append(keys, filtertest.Key(make([]byte, 16), 1, i))
	}
	n := bl.AddMany(keys[:5000])
	for _, k := range keys[5000:] {
		if bl.Add(k) {
			n++
		}
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
	require.PanicsWithError(t, "partitioned: Add: "+ErrReadOnly.Error()+": ", func() { f.Builder() })
}

// Issue 26 row 15: keys added through a Builder and never flushed were
// counted nowhere: a build published, closed or synced without Flush
// recorded 0 keys added, so info, the estimated rate and the capacity
// warnings were wrong. Publish, Close and Sync flush the Builder first.
func TestBuilderCountReachesFileWithoutFlush(t *testing.T) {
	const n = 3000
	build := func(t *testing.T, f *Filter) {
		bl := f.Builder()
		for i := range uint64(n) {
			require.True(t, bl.Add(filtertest.Key(make([]byte, 16), 7, i)))
		}
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		create func(path string, n uint64, p float64, opts ...Option) (*Filter, error)
		end    func(*Filter) error
	}{{"publish", CreateTemp, (*Filter).Publish}, {"close", Create, (*Filter).Close}} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".bloom")
			f, err := tc.create(path, 10_000, 0.01)
			require.NoError(t, err)
			build(t, f)
			require.NoError(t, tc.end(f))
			g, err := OpenReadOnly(path)
			require.NoError(t, err)
			defer g.Close()
			require.EqualValues(t, n, g.Added())
		})
	}
	t.Run("sync", func(t *testing.T) {
		path := filepath.Join(dir, "synced.bloom")
		f, err := Create(path, 10_000, 0.01)
		require.NoError(t, err)
		defer f.Close()
		build(t, f)
		require.NoError(t, f.Sync())
		h, err := mmapstore.ReadHeader(path)
		require.NoError(t, err)
		require.EqualValues(t, n, h.Count)
		require.EqualValues(t, n, f.Added())
	})
	t.Run("write", func(t *testing.T) {
		f, err := New(10_000, 0.01)
		require.NoError(t, err)
		build(t, f)
		var buf bytes.Buffer
		_, err = f.WriteTo(&buf)
		require.NoError(t, err)
		g, err := ReadFrom(&buf)
		require.NoError(t, err)
		require.EqualValues(t, n, g.Added())
	})
}
