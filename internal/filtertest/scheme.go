package filtertest

import (
	"bytes"
	"encoding/binary"
	"github.com/bloomkit/bloomkit"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zeebo/xxh3"

	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// Schemed is what a filter offers about its hashing scheme (the scheme its
// file records, the digest of a key under that scheme and its seed, and
// lookups of such digests: all of them the face's) and its file.
type Schemed interface {
	bloomkit.Adder
	bloomkit.FileWriter
}

// SchemedFile is a Stream that records its hashing scheme: every Stream.
type SchemedFile[F any] interface {
	Stream[F]
}

// SchemeSuite checks that variant v (its NewScheme and CreateScheme) records its hashing scheme and follows
// it everywhere: new filters use hashing.Default; WithScheme picks either
// scheme and refuses others; the scheme survives streams and files (the
// header's hash id); lookups hash with it (Hash, the *Digest methods and the
// key methods agree, without allocating); filters of different schemes do
// not combine; and a file whose hash id this build does not know is refused
// with mmapstore.ErrScheme by every reader. golden1 is the variant's
// checked-in scheme-1 file.
func SchemeSuite[F SchemedFile[F]](t *testing.T, v Variant[F], golden1 string) {
	t.Run("Default", func(t *testing.T) {
		f, err := v.NewScheme(1000, 0.01, 0, hashing.Default)
		require.NoError(t, err)
		require.Equal(t, hashing.Scheme2, f.Scheme())
		for _, s := range []hashing.Scheme{0, 3, 0xffff} {
			_, err := v.NewScheme(1000, 0.01, 0, s)
			require.ErrorIs(t, err, v.ErrInvalid, "scheme %d", s)
		}
	})
	for _, s := range []hashing.Scheme{hashing.Scheme1, hashing.Scheme2} {
		t.Run(s.String(), func(t *testing.T) { schemeRecorded(t, v, s) })
	}
	t.Run("Digests", func(t *testing.T) { schemeDigests(t, v) })
	if _, ok := any(*new(F)).(combiner[F]); ok {
		union := func(a, b F) error { return any(a).(combiner[F]).Union(b) }
		t.Run("UnionMismatch", func(t *testing.T) {
			a, err := v.NewScheme(1000, 0.01, 0, hashing.Scheme1)
			require.NoError(t, err)
			b, err := v.NewScheme(1000, 0.01, 0, hashing.Scheme2)
			require.NoError(t, err)
			require.ErrorIs(t, union(a, b), v.ErrMismatch)
			require.ErrorIs(t, union(b, a), v.ErrMismatch)
		})
	}
	t.Run("UnknownHashID", func(t *testing.T) {
		good, err := os.ReadFile(filepath.Clean(golden1))
		require.NoError(t, err)
		for _, id := range []uint16{0, 3, 0xffff} {
			bad := WithHashID(good, id)
			_, err := v.ReadFrom(bytes.NewReader(bad))
			require.ErrorIs(t, err, mmapstore.ErrScheme, "ReadFrom, hash id %d", id)
			path := filepath.Join(t.TempDir(), "bad.bloom")
			require.NoError(t, os.WriteFile(path, bad, 0o644))
			_, err = v.OpenReadOnly(path)
			require.ErrorIs(t, err, mmapstore.ErrScheme, "OpenReadOnly, hash id %d", id)
			_, err = v.Open(path)
			require.ErrorIs(t, err, mmapstore.ErrScheme, "Open, hash id %d", id)
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, bad, after, "a refused file is left as it was")
		}
	})
}

// schemeRecorded builds a filter of scheme s in memory and in a file and
// checks that every way of reading it back has scheme s and its keys.
func schemeRecorded[F SchemedFile[F]](t *testing.T, v Variant[F], s hashing.Scheme) {
	const n = 2000
	check := func(what string, f F) {
		t.Helper()
		require.Equal(t, s, f.Scheme(), what)
		NoFalseNegatives(t, f, 1, n)
	}
	f, err := v.NewScheme(n, 0.01, 3, s)
	require.NoError(t, err)
	AddKeys(f, 1, n)
	check("new", f)
	var buf bytes.Buffer
	_, err = f.WriteTo(&buf)
	require.NoError(t, err)
	h, err := mmapstore.DecodeHeader(buf.Bytes())
	require.NoError(t, err)
	require.EqualValues(t, s, h.Scheme, "the header's hash id")
	g, err := v.ReadFrom(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	check("ReadFrom", g)

	dir := t.TempDir()
	path := filepath.Join(dir, "w.bloom")
	require.NoError(t, f.WriteFile(path))
	r, err := v.OpenReadOnly(path)
	require.NoError(t, err)
	check("OpenReadOnly of WriteFile", r)
	require.NoError(t, r.Close())

	path = filepath.Join(dir, "c.bloom")
	c, err := v.CreateScheme(path, n, 0.01, 3, s)
	require.NoError(t, err)
	AddKeys(c, 1, n)
	require.NoError(t, c.Close())
	w, err := v.Open(path)
	require.NoError(t, err)
	check("Open of Create", w)
	AddKeys(w, 2, 100)
	require.NoError(t, w.Close())
	r, err = v.OpenReadOnly(path)
	require.NoError(t, err)
	check("OpenReadOnly after more adds", r)
	NoFalseNegatives(t, r, 2, 100)
	require.NoError(t, r.Close())
}

// WithHashID returns a copy of the filter file b with the hash id of both
// header slots set to id and the slots' checksums recomputed, so that only
// the hash id is wrong.
func WithHashID(b []byte, id uint16) []byte {
	out := bytes.Clone(b)
	le := binary.LittleEndian
	for s := 0; s < 2; s++ {
		slot := out[s*mmapstore.SlotSize : (s+1)*mmapstore.SlotSize]
		le.PutUint16(slot[12:], id)
		le.PutUint64(slot[mmapstore.SlotSize-8:], xxh3.Hash(slot[:mmapstore.SlotSize-8]))
	}
	return out
}

// schemeDigests: Hash, the *Digest methods and the key methods agree under
// either scheme, without allocating, and the other scheme's digests address
// other bits.
func schemeDigests[F SchemedFile[F]](t *testing.T, v Variant[F]) {
	for _, s := range []hashing.Scheme{hashing.Scheme1, hashing.Scheme2} {
		f, err := v.NewScheme(1000, 0.01, 5, s)
		require.NoError(t, err)
		var buf [16]byte
		for i := uint64(0); i < 500; i++ {
			k := Key(buf[:], 1, i)
			d := f.Hash(k)
			require.Equal(t, s.Sum(k, 5), d)
			require.Equal(t, d, f.HashString(string(k)))
			if i%2 == 0 {
				f.AddDigest(d)
			} else {
				f.Add(k)
			}
		}
		for i := uint64(0); i < 500; i++ {
			k := Key(buf[:], 1, i)
			require.True(t, f.Contains(k))
			require.True(t, f.ContainsDigest(s.Sum(k, 5)))
		}
		// The other scheme's digests address other bits: most keys
		// test absent through them.
		other := hashing.Scheme1
		if s == hashing.Scheme1 {
			other = hashing.Scheme2
		}
		found := 0
		for i := uint64(0); i < 500; i++ {
			if f.ContainsDigest(other.Sum(Key(buf[:], 1, i), 5)) {
				found++
			}
		}
		require.Less(t, found, 100, "scheme %s answers digests of %s", s, other)
		var sink hashing.Digest
		k := Key(buf[:], 1, 7)
		require.Zero(t, testing.AllocsPerRun(100, func() { sink = f.Hash(k) }))
		require.Zero(t, testing.AllocsPerRun(100, func() { sink = f.HashString("allocation-free") }))
		_ = sink
	}
}
