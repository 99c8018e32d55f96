package fuse

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"github.com/bloomkit/bloomkit"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/bloomkit/bloomkit/partitioned"
)

// goldenPath is a filter of "key-0".."key-999" at p = 0.01, seed 7, in
// format version 1 (docs/file-format.md's fuse example). Rewrite it with
// -update only for a deliberate format or hashing change.
const goldenPath = "testdata/golden-v1.fuse"

func goldenKeys() [][]byte {
	keys := make([][]byte, 1000)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key-%d", i)
	}
	return keys
}

// TestGoldenFile opens the checked-in file: if the format, the hashing or
// the cell mapping changes, it no longer answers as it was built to, and
// a build of the same keys no longer writes the same bytes.
func TestGoldenFile(t *testing.T) {
	want, err := Build(goldenKeys(), 0.01, WithSeed(7))
	require.NoError(t, err)
	if *filtertest.Update {
		require.NoError(t, want.WriteFile(goldenPath))
	}
	f, err := OpenReadOnly(goldenPath)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Verify())
	require.EqualValues(t, 1000, f.Added())
	require.EqualValues(t, 8, f.FingerprintBits())
	require.EqualValues(t, 7, f.Seed())
	require.Equal(t, 1, f.Shards())
	requireAll(t, f, goldenKeys())
	var a, b bytes.Buffer
	_, err = f.WriteTo(&a)
	require.NoError(t, err)
	_, err = want.WriteTo(&b)
	require.NoError(t, err)
	require.Equal(t, b.Bytes(), a.Bytes(), "a build writes the golden bytes")
	data, err := os.ReadFile(goldenPath)
	require.NoError(t, err)
	require.Equal(t, data, a.Bytes(), "the golden file is its stream")
	// The spec example: the shard table of docs/file-format.md.
	p := data[mmapstore.PayloadOffset:]
	le := binary.LittleEndian
	require.EqualValues(t, 0, le.Uint64(p[0:]), "shard bits")
	require.EqualValues(t, 32, le.Uint64(p[8:]), "entry size")
	require.EqualValues(t, 4096, le.Uint64(p[32:]), "shard 0 at byte 4096 of the payload")
	require.EqualValues(t, 1000, le.Uint64(p[48:]), "shard 0 keys")
	require.EqualValues(t, uint64(0x64bf61b512ffabe7), le.Uint64(p[40:]), "shard 0 seed")
	require.EqualValues(t, 9, le.Uint32(p[56:]), "segment count")
	require.EqualValues(t, 7, le.Uint32(p[60:]), "log2 segment length")
	require.EqualValues(t, 1408, f.Cells(), "(9+2) * 2^7 cells")
	require.Len(t, p, 5504, "4096 + 1408 bytes")
	require.Len(t, data, 13696)
}

// tf gives a fuse filter the methods the shared file suites call on every
// variant; fuse filters have no Add, so those are never reached by the
// suites used here.
type tf struct{ *Filter }

func (tf) Add([]byte) bool                { panic("fuse: no Add") }
func (tf) AddString(string) bool          { panic("fuse: no Add") }
func (tf) AddDigest(bloomkit.Digest) bool { panic("fuse: no Add") }
func (f tf) Publish() error               { return mmapstore.ErrNotTemp }

func wrap(f *Filter, err error) (tf, error) { return tf{f}, err }

var variant = filtertest.Variant[tf]{
	Tag: mmapstore.Fuse,
	Create: func(path string, n uint64, p float64, seed uint64) (tf, error) {
		b, err := NewBuilder(path, p, WithSeed(seed))
		if err != nil {
			return tf{}, err
		}
		for _, k := range keySet(1, n) {
			if err := b.Add(k); err != nil {
				return tf{}, err
			}
		}
		if err := b.Publish(); err != nil {
			return tf{}, err
		}
		return wrap(OpenReadOnly(path))
	},
	Open:         func(path string) (tf, error) { return wrap(Open(path)) },
	OpenReadOnly: func(path string) (tf, error) { return wrap(OpenReadOnly(path)) },
	ReadFrom:     func(r io.Reader) (tf, error) { return wrap(ReadFrom(r)) },
	Words:        func(f tf) []uint64 { return f.words },
	Geometry: func(f tf) any {
		return [6]uint64{uint64(f.bits), uint64(f.shardBits), f.keys, f.cells, f.size, f.Seed()}
	},
	ErrInvalid: ErrInvalid, ErrTooLarge: ErrTooLarge,
}

// TestFileErrors: foreign, truncated, other-variant, missing and folder
// paths give the typed errors in the one shape every variant's do.
func TestFileErrors(t *testing.T) { filtertest.RunFileErrors(t, variant, "fuse") }

// TestOtherVariants: a fuse file is not a partitioned filter, nor the
// reverse.
func TestOtherVariants(t *testing.T) {
	dir := t.TempDir()
	fp := filepath.Join(dir, "f.fuse")
	buildFile(t, fp, keySet(1, 100), 0.01)
	_, err := partitioned.OpenReadOnly(fp)
	require.ErrorIs(t, err, mmapstore.ErrVariant)
	pp := filepath.Join(dir, "p.bloom")
	pf, err := partitioned.Create(pp, 100, 0.01)
	require.NoError(t, err)
	require.NoError(t, pf.Close())
	_, err = OpenReadOnly(pp)
	require.ErrorIs(t, err, mmapstore.ErrVariant)
	data, err := os.ReadFile(pp)
	require.NoError(t, err)
	_, err = ReadFrom(bytes.NewReader(data))
	require.ErrorIs(t, err, mmapstore.ErrVariant)
}

// TestCorruptFiles: a flipped cell is found by Verify (and so refused by
// mmapstore.Live), a damaged shard table by Open (ErrCorrupt), a cut file
// by Open and ReadFrom (ErrTruncated).
func TestCorruptFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.fuse")
	buildFile(t, good, keySet(1, 20000), 0.01)
	data, err := os.ReadFile(good)
	require.NoError(t, err)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}

	cell := bytes.Clone(data)
	cell[len(cell)-5000] ^= 1
	f, err := OpenReadOnly(write("cell.fuse", cell))
	require.NoError(t, err, "a cell is not checked at open: O(1)")
	require.ErrorIs(t, f.Verify(), mmapstore.ErrPayloadChecksum)
	require.NoError(t, f.Close())
	_, err = mmapstore.NewLive(filepath.Join(dir, "cell.fuse"), OpenReadOnly)
	require.ErrorIs(t, err, mmapstore.ErrPayloadChecksum)
	_, err = ReadFrom(bytes.NewReader(cell))
	require.ErrorIs(t, err, mmapstore.ErrPayloadChecksum)

	for _, off := range []int{0, 8, 16, 32, 40 + 16, 56, 60} {
		table := bytes.Clone(data)
		binary.LittleEndian.PutUint32(table[mmapstore.PayloadOffset+off:], 0xffff)
		if off == 40+16 { // keys: checked against the header's count
			binary.LittleEndian.PutUint64(table[mmapstore.PayloadOffset+48:], 3)
		}
		_, err := OpenReadOnly(write("table.fuse", table))
		require.ErrorIs(t, err, mmapstore.ErrCorrupt, "table byte %d", off)
		require.Contains(t, err.Error(), "fuse: open ")
	}

	for _, cut := range []int{1, 100, len(data) - mmapstore.HeaderSize} {
		p := write("cut.fuse", data[:len(data)-cut])
		_, err := OpenReadOnly(p)
		require.ErrorIs(t, err, mmapstore.ErrTruncated, "cut %d", cut)
		_, err = ReadFrom(bytes.NewReader(data[:len(data)-cut]))
		require.ErrorIs(t, err, mmapstore.ErrTruncated, "cut %d", cut)
		require.ErrorIs(t, err, io.ErrUnexpectedEOF, "cut %d", cut)
	}
}

// TestStreamAndBinary: WriteTo, ReadFrom, MarshalBinary and
// UnmarshalBinary give the same filter; bytes after one are ErrCorrupt.
func TestStreamAndBinary(t *testing.T) {
	keys := keySet(5, 30000)
	f, err := Build(keys, 1e-4, WithSeed(3), withShardKeys(5000))
	require.NoError(t, err)
	require.Equal(t, 8, f.Shards())
	data, err := f.MarshalBinary()
	require.NoError(t, err)
	var buf bytes.Buffer
	_, err = f.WriteTo(&buf)
	require.NoError(t, err)
	require.Equal(t, buf.Bytes(), data)
	g, err := ReadFrom(&buf)
	require.NoError(t, err)
	requireAll(t, g, keys)
	var h Filter
	require.NoError(t, h.UnmarshalBinary(data))
	requireAll(t, &h, keys)
	require.Equal(t, f.words, h.words)
	require.EqualValues(t, 3, h.Seed())
	require.ErrorIs(t, h.UnmarshalBinary(append(data, 0)), mmapstore.ErrCorrupt)
	path := filepath.Join(t.TempDir(), "f.fuse")
	require.NoError(t, g.WriteFile(path))
	m, err := OpenReadOnly(path)
	require.NoError(t, err)
	defer m.Close()
	requireAll(t, m, keys)
	require.ErrorIs(t, m.UnmarshalBinary(data), ErrInvalid)
}

// TestAfterClose: every method of a closed file-backed filter has its
// documented answer, and an in-memory filter is unaffected by Close.
func TestAfterClose(t *testing.T) {
	keys := keySet(1, 1000)
	f := buildFile(t, filepath.Join(t.TempDir(), "f.fuse"), keys, 0.01)
	bytesBefore, path := f.Bytes(), f.Path()
	require.NoError(t, f.Close())
	require.ErrorIs(t, f.Close(), ErrClosed)
	require.ErrorIs(t, f.Verify(), ErrClosed)
	require.ErrorIs(t, f.Prefault(), ErrClosed)
	_, err := f.WriteTo(io.Discard)
	require.ErrorIs(t, err, ErrClosed)
	_, err = f.MarshalBinary()
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, f.WriteFile(filepath.Join(t.TempDir(), "copy")), ErrClosed)
	for _, k := range keySet(9, 100) {
		require.True(t, f.Contains(k), "closed: rules nothing out")
		require.True(t, f.ContainsString(string(k)))
		require.True(t, f.ContainsDigest(f.Hash(k)))
	}
	for _, ok := range f.ContainsMany(keys, nil) {
		require.True(t, ok)
	}
	require.Equal(t, bytesBefore, f.Bytes())
	require.Equal(t, path, f.Path())
	require.EqualValues(t, 1000, f.Added())

	m, err := Build(keys, 0.01)
	require.NoError(t, err)
	require.NoError(t, m.Close())
	require.NoError(t, m.Close())
	requireAll(t, m, keys)
	require.NoError(t, m.Verify())
}

// TestLive: a served fuse file is swapped for a build published over it.
func TestLive(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.fuse")
	buildFile(t, path, keySet(1, 3000), 0.01)
	l, err := mmapstore.NewLive(path, OpenReadOnly)
	require.NoError(t, err)
	defer l.Close()
	lease, err := l.Acquire()
	require.NoError(t, err)
	requireAll(t, lease.Value(), keySet(1, 3000))
	buildFile(t, path, keySet(2, 3000), 0.01)
	swapped, err := l.Reload()
	require.NoError(t, err)
	require.True(t, swapped)
	requireAll(t, lease.Value(), keySet(1, 3000)) // the old lease still maps the old file
	lease.Release()
	lease, err = l.Acquire()
	require.NoError(t, err)
	requireAll(t, lease.Value(), keySet(2, 3000))
	lease.Release()
}

func TestZeroAllocs(t *testing.T) {
	keys := keySet(1, 100)
	f, err := Build(keys, 0.01)
	require.NoError(t, err)
	found := make([]bool, len(keys))
	allocs := testing.AllocsPerRun(100, func() {
		f.Contains(keys[3])
		f.ContainsString("abc")
		f.ContainsMany(keys, found)
	})
	require.Zero(t, allocs)
}
