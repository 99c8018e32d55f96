package fuse

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// withShardKeys makes shards of at most n keys (tests only).
func withShardKeys(n uint64) Option { return func(c *config) { c.shardKeys = n } }

// buildFile builds keys through a Builder into path and opens the file.
func buildFile(t *testing.T, path string, keys [][]byte, p float64, opts ...Option) *Filter {
	t.Helper()
	b, err := NewBuilder(path, p, opts...)
	require.NoError(t, err)
	for _, k := range keys {
		require.NoError(t, b.Add(k))
	}
	require.NoError(t, b.Publish())
	f, err := OpenReadOnly(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

// TestBuilderMatchesBuild: a Builder that spills (a 64 KiB budget: 4096
// digests a run) and one that does not make the same filter as Build, with
// one shard and with more shards than spill buckets (2^12 > 2^10) and
// fewer (2^4), duplicates in the input; the file has every key.
func TestBuilderMatchesBuild(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	keys := keySet(4, 30000)
	in := append(append([][]byte{}, keys...), keys[:7000]...)
	r.Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
	for _, c := range []struct {
		name string
		opts []Option
	}{
		{"one-shard", nil},
		{"16-shards", []Option{withShardKeys(3000)}},
		{"4096-shards", []Option{withShardKeys(10)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, err := Build(in, 1e-3, c.opts...)
			require.NoError(t, err)
			for _, mem := range []uint64{DefaultMemory, 1 << 16} {
				dir := t.TempDir()
				path := filepath.Join(dir, "f.fuse")
				opts := append([]Option{WithMemory(mem)}, c.opts...)
				f := buildFile(t, path, in, 1e-3, opts...)
				requireAll(t, f, keys)
				require.Equal(t, uint64(len(keys)), f.Added())
				require.Equal(t, want.Shards(), f.Shards())
				require.Equal(t, want.words, f.words, "memory %d: the same payload as Build", mem)
				require.NoError(t, f.Verify())
				entries, err := os.ReadDir(dir)
				require.NoError(t, err)
				require.Len(t, entries, 1, "only the published file is left")
			}
		})
	}
}

// TestBuilderAbortLeavesNothing: Abort (and Close) after spills removes
// every temporary file; the spill file is unlinked from the start, so not
// even a SIGKILL leaves it behind.
func TestBuilderAbortLeavesNothing(t *testing.T) {
	for _, stop := range []string{"abort", "close"} {
		dir := t.TempDir()
		b, err := NewBuilder(filepath.Join(dir, "f.fuse"), 0.01, WithMemory(1<<16))
		require.NoError(t, err)
		for _, k := range keySet(1, 20000) {
			require.NoError(t, b.Add(k))
		}
		require.True(t, b.Spilled())
		entries, _ := os.ReadDir(dir)
		require.Empty(t, entries, "the spill file has no name")
		if stop == "abort" {
			require.NoError(t, b.Abort())
		} else {
			require.NoError(t, b.Close())
		}
		require.ErrorIs(t, b.Add([]byte("x")), ErrInvalid)
		require.ErrorIs(t, b.Publish(), ErrInvalid)
		entries, _ = os.ReadDir(dir)
		require.Empty(t, entries)
	}
}

// TestBuilderReplacesAtomically: Publish over an existing filter file that
// a reader maps leaves the reader answering from the old file and the path
// holding the new one, with the old file's mode.
func TestBuilderReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.fuse")
	old := keySet(1, 5000)
	f := buildFile(t, path, old, 0.01)
	require.NoError(t, os.Chmod(path, 0o640))
	fresh := keySet(2, 5000)
	b, err := NewBuilder(path, 0.01)
	require.NoError(t, err)
	for _, k := range fresh {
		require.NoError(t, b.AddString(string(k)))
	}
	require.NoError(t, b.Publish())
	requireAll(t, f, old)
	g, err := OpenReadOnly(path)
	require.NoError(t, err)
	defer g.Close()
	requireAll(t, g, fresh)
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), st.Mode().Perm())
	var a, c bytes.Buffer
	_, err = g.WriteTo(&a)
	require.NoError(t, err)
	want, err := Build(fresh, 0.01)
	require.NoError(t, err)
	_, err = want.WriteTo(&c)
	require.NoError(t, err)
	require.Equal(t, c.Bytes(), a.Bytes())
}

func TestBuilderBadArguments(t *testing.T) {
	_, err := NewBuilder(filepath.Join(t.TempDir(), "no", "such", "f.fuse"), 0.01)
	require.ErrorIs(t, err, ErrInvalid)
	_, err = NewBuilder(filepath.Join(t.TempDir(), "f.fuse"), 1e-6)
	require.ErrorIs(t, err, ErrInvalid)
	_, err = NewBuilder(filepath.Join(t.TempDir(), "f.fuse"), 0.01, WithMemory(10))
	require.ErrorIs(t, err, ErrInvalid)
	for _, p := range []float64{0, 1, -1, 2, 1e-5} {
		_, err := Build(nil, p)
		require.ErrorIs(t, err, ErrInvalid, "p = %v", p)
	}
}

// TestBuilderPathIsFolder: publishing over a folder fails with an error and
// leaves nothing beside it (the temporary file is removed), spilled or not.
func TestBuilderPathIsFolder(t *testing.T) {
	for _, mem := range []uint64{DefaultMemory, 1 << 16} {
		dir := t.TempDir()
		path := filepath.Join(dir, "f.fuse")
		require.NoError(t, os.Mkdir(path, 0o755))
		b, err := NewBuilder(path, 0.01, WithMemory(mem))
		require.NoError(t, err)
		for _, k := range keySet(1, 10000) {
			require.NoError(t, b.Add(k))
		}
		require.Error(t, b.Publish())
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Len(t, entries, 1, "only the folder")
		st, err := os.Stat(path)
		require.NoError(t, err)
		require.True(t, st.IsDir())
	}
}

// TestBuilderEmpty: a Builder given no key publishes an empty filter that
// opens and rules keys out (up to its rate); a second Publish is ErrInvalid.
func TestBuilderEmpty(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.fuse")
	b, err := NewBuilder(path, 0.01)
	require.NoError(t, err)
	require.NoError(t, b.Publish())
	require.ErrorIs(t, b.Publish(), ErrInvalid)
	f, err := OpenReadOnly(path)
	require.NoError(t, err)
	defer f.Close()
	require.Zero(t, f.Added())
	require.NoError(t, f.Verify())
	fp := 0
	for _, k := range keySet(3, 10000) {
		if f.Contains(k) {
			fp++
		}
	}
	require.Less(t, fp, 100, "about 1 in 256 of absent keys")
}
