package partitioned

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/mmapstore"
)

func TestFileLifecycle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.bloom")
	f, err := Create(path, 20000, 0.01, WithSeed(9))
	require.NoError(t, err)
	require.Equal(t, path, f.Path())
	filtertest.AddKeys(f, 1, 10000)
	require.NoError(t, f.Sync())
	require.ErrorIs(t, f.Verify(), mmapstore.ErrChecksumStale, "open for writing")
	require.NoError(t, f.Close())
	require.ErrorIs(t, f.Close(), mmapstore.ErrClosed)

	r, err := OpenReadOnly(path)
	require.NoError(t, err)
	require.True(t, r.ReadOnly())
	require.EqualValues(t, 10000, r.Added())
	require.EqualValues(t, 9, r.Seed())
	require.NoError(t, r.Verify())
	filtertest.NoFalseNegatives(t, r, 1, 10000)
	require.NoError(t, r.Prefault())

	// A writer adds more while the reader has the file mapped; the reader's
	// shared mapping sees the new bits.
	w, err := Open(path)
	require.NoError(t, err)
	filtertest.AddKeys(w, 2, 10000)
	filtertest.NoFalseNegatives(t, r, 2, 10000)
	require.NoError(t, w.Close())
	require.NoError(t, r.Close())

	r, err = OpenReadOnly(path)
	require.NoError(t, err)
	defer r.Close()
	// Every key counted once, except the few that were false positives when
	// added (about p of the second 10000).
	require.LessOrEqual(t, r.Added(), uint64(20000))
	require.Greater(t, r.Added(), uint64(20000-200))
	require.NoError(t, r.Verify())
	filtertest.NoFalseNegatives(t, r, 1, 10000)
	filtertest.NoFalseNegatives(t, r, 2, 10000)
}

func TestFileAndStreamAgree(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.bloom")
	f, err := Create(path, 30000, 0.001)
	require.NoError(t, err)
	m, err := New(30000, 0.001)
	require.NoError(t, err)
	filtertest.AddKeys(f, 1, 30000)
	filtertest.AddKeys(m, 1, 30000)
	require.NoError(t, f.Close())

	// The stream of the in-memory filter maps as a file...
	var buf bytes.Buffer
	_, err = m.WriteTo(&buf)
	require.NoError(t, err)
	streamPath := filepath.Join(dir, "stream.bloom")
	require.NoError(t, os.WriteFile(streamPath, buf.Bytes(), 0o644))
	s, err := OpenReadOnly(streamPath)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Verify())
	filtertest.NoFalseNegatives(t, s, 1, 30000)

	// ...its payload is byte for byte the file's, and the file reads as a stream.
	fileBytes, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, fileBytes[mmapstore.PayloadOffset:], buf.Bytes()[mmapstore.PayloadOffset:])
	g, err := ReadFrom(bytes.NewReader(fileBytes))
	require.NoError(t, err)
	require.Equal(t, m.words, g.words)
	require.Equal(t, m.Added(), g.Added())

	// A mapped filter streams the same bytes as the in-memory one.
	var again bytes.Buffer
	_, err = s.WriteTo(&again)
	require.NoError(t, err)
	require.Equal(t, buf.Bytes(), again.Bytes())
}

func TestAddToReadOnlyPanicsWithErrReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ro.bloom")
	f, err := Create(path, 100, 0.01)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	r, err := OpenReadOnly(path)
	require.NoError(t, err)
	defer r.Close()
	defer func() {
		v := recover()
		err, ok := v.(error)
		require.True(t, ok, "panic value %v", v)
		require.ErrorIs(t, err, ErrReadOnly)
	}()
	other, _ := New(100, 0.01)
	require.ErrorIs(t, r.Union(other), ErrReadOnly)
	require.ErrorIs(t, r.Intersect(other), ErrReadOnly)
	r.Add([]byte("x"))
	t.Fatal("Add on a read-only filter returned")
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, err = OpenReadOnly(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, fs.ErrNotExist)

	path := filepath.Join(dir, "f.bloom")
	f, err := Create(path, 1000, 0.01)
	require.NoError(t, err)
	_, err = Create(path, 1000, 0.01)
	require.ErrorIs(t, err, fs.ErrExist)
	_, err = Open(path)
	require.ErrorIs(t, err, mmapstore.ErrLocked, "one writer at a time")
	require.NoError(t, f.Close())

	_, err = Create(filepath.Join(dir, "bad"), 0, 0.01)
	require.ErrorIs(t, err, ErrInvalid)
	_, err = os.Stat(filepath.Join(dir, "bad"))
	require.ErrorIs(t, err, fs.ErrNotExist, "nothing is left behind")

	// A file of another variant.
	h := mmapstore.Header{Variant: mmapstore.Counting, M: 1000, K: 3, CellBits: 4, Capacity: 100, TargetP: 0.01,
		PayloadLen: mmapstore.CellBytes(1000, 4)}
	cf, err := mmapstore.Create(filepath.Join(dir, "counting.bloom"), h)
	require.NoError(t, err)
	require.NoError(t, cf.Close(0))
	_, err = OpenReadOnly(filepath.Join(dir, "counting.bloom"))
	require.ErrorIs(t, err, mmapstore.ErrVariant)
	_, err = ReadFrom(mustOpen(t, filepath.Join(dir, "counting.bloom")))
	require.ErrorIs(t, err, mmapstore.ErrVariant)
}

func mustOpen(t *testing.T, path string) *os.File {
	f, err := os.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

func TestCorruptFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "good.bloom")
	f, err := New(5000, 0.01)
	require.NoError(t, err)
	filtertest.AddKeys(f, 1, 5000)
	require.NoError(t, f.WriteFile(path))
	good, err := os.ReadFile(path)
	require.NoError(t, err)

	mutate := func(fn func([]byte) []byte) []byte { return fn(bytes.Clone(good)) }
	flip := func(off int) []byte { return mutate(func(b []byte) []byte { b[off] ^= 0x10; return b }) }
	both := func(off int) []byte {
		return mutate(func(b []byte) []byte { b[off] ^= 0x10; b[mmapstore.SlotSize+off] ^= 0x10; return b })
	}
	for _, c := range []struct {
		name      string
		data      []byte
		open      error // from OpenReadOnly
		verifyErr error // from Verify, when open succeeds
		stream    error // from ReadFrom
	}{
		{"empty", nil, mmapstore.ErrTruncated, nil, mmapstore.ErrTruncated},
		{"foreign", []byte("PK\x03\x04 this is a zip file, not a filter, and long enough"), mmapstore.ErrBadMagic, nil, mmapstore.ErrBadMagic},
		{"header cut", good[:5000], mmapstore.ErrTruncated, nil, mmapstore.ErrTruncated},
		{"payload cut", good[:len(good)-8], mmapstore.ErrTruncated, nil, mmapstore.ErrTruncated},
		// A stream stops at the end of its payload; a file must end there.
		{"trailing bytes", append(bytes.Clone(good), 0), mmapstore.ErrCorrupt, nil, nil},
		{"version 2", mutate(func(b []byte) []byte { b[8], b[mmapstore.SlotSize+8] = 2, 2; return b }), mmapstore.ErrVersion, nil, mmapstore.ErrVersion},
		{"header checksum", both(40), mmapstore.ErrHeaderChecksum, nil, mmapstore.ErrHeaderChecksum},
		{"one slot torn", flip(40), nil, nil, nil},
		{"payload bit flip", flip(mmapstore.PayloadOffset + 100), nil, mmapstore.ErrPayloadChecksum, mmapstore.ErrPayloadChecksum},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, "bad.bloom")
			require.NoError(t, os.WriteFile(p, c.data, 0o644))
			r, err := OpenReadOnly(p)
			if c.open != nil {
				require.ErrorIs(t, err, c.open)
				require.Contains(t, err.Error(), p, "the error names the file")
			} else {
				require.NoError(t, err)
				if c.verifyErr != nil {
					require.ErrorIs(t, r.Verify(), c.verifyErr)
				} else {
					require.NoError(t, r.Verify())
					filtertest.NoFalseNegatives(t, r, 1, 5000)
				}
				require.NoError(t, r.Close())
			}
			_, err = ReadFrom(bytes.NewReader(c.data))
			if c.stream != nil {
				require.ErrorIs(t, err, c.stream)
			} else {
				require.NoError(t, err)
			}
		})
	}
}

func TestPublishReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "live.bloom")
	old, _ := New(1000, 0.01)
	old.AddString("old")
	require.NoError(t, old.WriteFile(path))

	reader, err := OpenReadOnly(path)
	require.NoError(t, err)
	defer reader.Close()

	b, err := CreateTemp(path, 1000, 0.01)
	require.NoError(t, err)
	require.NotEqual(t, path, b.Path())
	require.Equal(t, dir, filepath.Dir(b.Path()), "built beside its target")
	b.AddString("new")
	// Until Publish, the target is the old filter.
	cur, err := OpenReadOnly(path)
	require.NoError(t, err)
	require.True(t, cur.ContainsString("old"))
	require.False(t, cur.ContainsString("new"))
	require.NoError(t, cur.Close())

	require.NoError(t, b.Publish())
	cur, err = OpenReadOnly(path)
	require.NoError(t, err)
	require.True(t, cur.ContainsString("new"))
	require.NoError(t, cur.Verify())
	require.NoError(t, cur.Close())
	// The reader that mapped the old file keeps its consistent old view.
	require.True(t, reader.ContainsString("old"))
	require.False(t, reader.ContainsString("new"))

	entries, _ := os.ReadDir(dir)
	require.Len(t, entries, 1, "no temporary file left")

	// An abandoned build leaves nothing behind and the target untouched.
	b, err = CreateTemp(path, 1000, 0.01)
	require.NoError(t, err)
	require.NoError(t, b.Close())
	entries, _ = os.ReadDir(dir)
	require.Len(t, entries, 1)
	require.ErrorIs(t, old.Publish(), mmapstore.ErrNotTemp)
}

func TestPublishedFileIsReadableByOthers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mode.bloom")
	f, _ := New(10, 0.01)
	require.NoError(t, f.WriteFile(path))
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), st.Mode().Perm())
	// A rebuild keeps the mode the operator gave the file.
	require.NoError(t, os.Chmod(path, 0o640))
	b, err := CreateTemp(path, 10, 0.01)
	require.NoError(t, err)
	require.NoError(t, b.Publish())
	st, err = os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), st.Mode().Perm())
}
