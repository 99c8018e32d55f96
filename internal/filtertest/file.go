package filtertest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// RunFileSuite runs every shared test of a variant's files and streams as
// subtests: the file lifecycle, files and streams agreeing, changes to a
// read-only filter, open errors, corrupt files, atomic publish and the mode
// of a published file.
func RunFileSuite[F Stream[F]](t *testing.T, v Variant[F]) {
	t.Run("Lifecycle", func(t *testing.T) { FileLifecycle(t, v) })
	t.Run("FileAndStreamAgree", func(t *testing.T) { FileAndStreamAgree(t, v) })
	t.Run("ReadOnlyChanges", func(t *testing.T) { ReadOnlyChanges(t, v) })
	t.Run("OpenErrors", func(t *testing.T) { OpenErrors(t, v) })
	t.Run("CorruptFiles", func(t *testing.T) { CorruptFiles(t, v) })
	t.Run("Publish", func(t *testing.T) { PublishReplacesAtomically(t, v) })
	t.Run("PublishedMode", func(t *testing.T) { PublishedFileIsReadableByOthers(t, v) })
}

// FileLifecycle creates a file, syncs, closes and reopens it read-only and
// for writing, with a reader mapping the file while a writer adds.
func FileLifecycle[F Stream[F]](t *testing.T, v Variant[F]) {
	h := v.Hooks
	path := filepath.Join(t.TempDir(), "f.bloom")
	f, err := v.Create(path, 20000, 0.01, 9)
	require.NoError(t, err)
	require.Equal(t, path, f.Path())
	AddKeys(f, 1, 10000)
	// A key can be a false positive of the keys added before it, so Added
	// may fall short of 10000: the expected shortfall at half capacity is
	// below 1; 10 or more has a chance below 1e-9.
	require.Greater(t, f.Added(), uint64(10000-10))
	added := f.Added()
	if h.Created != nil {
		added += h.Created(t, f)
	}
	require.NoError(t, f.Sync())
	require.ErrorIs(t, f.Verify(), mmapstore.ErrChecksumStale, "open for writing")
	require.NoError(t, f.Close())
	require.ErrorIs(t, f.Close(), mmapstore.ErrClosed)
	if h.Closed != nil {
		h.Closed(t, f)
	}

	r, err := v.OpenReadOnly(path)
	require.NoError(t, err)
	require.True(t, r.ReadOnly())
	require.EqualValues(t, added, r.Added())
	require.EqualValues(t, 9, r.Seed())
	require.NoError(t, r.Verify())
	NoFalseNegatives(t, r, 1, 10000)
	if h.Reopened != nil {
		h.Reopened(t, r)
	}
	require.NoError(t, r.Prefault())

	// A writer changes the file while the reader has it mapped; the reader's
	// shared mapping sees the new bits.
	w, err := v.Open(path)
	require.NoError(t, err)
	AddKeys(w, 2, 10000)
	if h.Shared != nil {
		h.Shared(t, w, r)
	}
	NoFalseNegatives(t, r, 2, 10000)
	require.NoError(t, w.Close())
	require.NoError(t, r.Close())

	r, err = v.OpenReadOnly(path)
	require.NoError(t, err)
	defer r.Close()
	// Every key counted once, except the few that were false positives when
	// added (about p of the second 10000).
	require.LessOrEqual(t, r.Added(), uint64(20000))
	require.Greater(t, r.Added(), uint64(20000-200))
	require.NoError(t, r.Verify())
	NoFalseNegatives(t, r, 1, 10000)
	NoFalseNegatives(t, r, 2, 10000)
	if h.Final != nil {
		h.Final(t, r)
	}
}

// FileAndStreamAgree checks that a stream maps as a file and a file reads as
// a stream, with the same payload bytes.
func FileAndStreamAgree[F Stream[F]](t *testing.T, v Variant[F]) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.bloom")
	f, err := v.Create(path, 30000, 0.001, 0)
	require.NoError(t, err)
	m, err := v.New(30000, 0.001, 0)
	require.NoError(t, err)
	AddKeys(f, 1, 30000)
	AddKeys(m, 1, 30000)
	require.NoError(t, f.Close())

	// The stream of the in-memory filter maps as a file...
	var buf bytes.Buffer
	_, err = m.WriteTo(&buf)
	require.NoError(t, err)
	streamPath := filepath.Join(dir, "stream.bloom")
	require.NoError(t, os.WriteFile(streamPath, buf.Bytes(), 0o644))
	s, err := v.OpenReadOnly(streamPath)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Verify())
	NoFalseNegatives(t, s, 1, 30000)

	// ...its payload is byte for byte the file's, and the file reads as a stream.
	fileBytes, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, fileBytes[mmapstore.PayloadOffset:], buf.Bytes()[mmapstore.PayloadOffset:])
	g, err := v.ReadFrom(bytes.NewReader(fileBytes))
	require.NoError(t, err)
	require.Equal(t, v.Words(m), v.Words(g))
	require.Equal(t, m.Added(), g.Added())

	// A mapped filter streams the same bytes as the in-memory one.
	var again bytes.Buffer
	_, err = s.WriteTo(&again)
	require.NoError(t, err)
	require.Equal(t, buf.Bytes(), again.Bytes())
}

// ReadOnlyChanges checks that Union and Intersect into a read-only filter
// return ErrReadOnly (for a variant that has them) and that Add, AddString
// and v.Changes panic with an error that wraps ErrReadOnly and names the
// file.
func ReadOnlyChanges[F Stream[F]](t *testing.T, v Variant[F]) {
	path := filepath.Join(t.TempDir(), "ro.bloom")
	f, err := v.Create(path, 100, 0.01, 0)
	require.NoError(t, err)
	f.AddString("x")
	require.NoError(t, f.Close())
	r, err := v.OpenReadOnly(path)
	require.NoError(t, err)
	defer r.Close()
	if c, ok := any(r).(combiner[F]); ok {
		other, err := v.New(100, 0.01, 0)
		require.NoError(t, err)
		require.ErrorIs(t, c.Union(other), v.ErrReadOnly)
		require.ErrorIs(t, c.Intersect(other), v.ErrReadOnly)
	}
	changes := map[string]func(F){
		"Add":       func(r F) { r.Add([]byte("x")) },
		"AddString": func(r F) { r.AddString("y") },
	}
	for name, change := range v.Changes {
		changes[name] = change
	}
	for name, change := range changes {
		func() {
			defer func() {
				p := recover()
				err, ok := p.(error)
				require.True(t, ok, "%s: panic value %v", name, p)
				require.ErrorIs(t, err, v.ErrReadOnly, name)
				require.Contains(t, err.Error(), path, "%s: the panic names the file", name)
			}()
			change(r)
			t.Fatalf("%s on a read-only filter returned", name)
		}()
	}
	require.True(t, r.ContainsString("x"))
	require.False(t, r.ContainsString("y"), "nothing changed")
	if v.Hooks.ReadOnly != nil {
		v.Hooks.ReadOnly(t, r)
	}
}

// MustOpen opens path for reading, closed when the test ends.
func MustOpen(t testing.TB, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

// OpenErrors checks missing files, a second Create and a second writer, bad
// arguments that leave nothing behind, and files of another variant.
func OpenErrors[F Stream[F]](t *testing.T, v Variant[F]) {
	dir := t.TempDir()
	_, err := v.Open(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, err = v.OpenReadOnly(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, fs.ErrNotExist)

	path := filepath.Join(dir, "f.bloom")
	f, err := v.Create(path, 1000, 0.01, 0)
	require.NoError(t, err)
	_, err = v.Create(path, 1000, 0.01, 0)
	require.ErrorIs(t, err, fs.ErrExist)
	_, err = v.Open(path)
	require.ErrorIs(t, err, mmapstore.ErrLocked, "one writer at a time")
	require.NoError(t, f.Close())

	_, err = v.Create(filepath.Join(dir, "bad"), 0, 0.01, 0)
	require.ErrorIs(t, err, v.ErrInvalid)
	_, err = os.Stat(filepath.Join(dir, "bad"))
	require.ErrorIs(t, err, fs.ErrNotExist, "nothing is left behind")

	// Files of another variant.
	foreign := map[string]func(string) error{"header": func(path string) error {
		h := foreignHeader(v.Tag)
		mf, err := mmapstore.Create(path, h)
		if err != nil {
			return err
		}
		return mf.Close(0)
	}}
	for name, write := range v.Foreign {
		foreign[name] = write
	}
	for name, write := range foreign {
		p := filepath.Join(dir, name+".bloom")
		require.NoError(t, write(p), name)
		_, err = v.OpenReadOnly(p)
		require.ErrorIs(t, err, mmapstore.ErrVariant, name)
		_, err = v.Open(p)
		require.ErrorIs(t, err, mmapstore.ErrVariant, name)
		_, err = v.ReadFrom(MustOpen(t, p))
		require.ErrorIs(t, err, mmapstore.ErrVariant, name)
	}
}

// CorruptFiles flips and truncates the bytes of a real file and checks the
// typed error OpenReadOnly, Verify and ReadFrom return.
func CorruptFiles[F Stream[F]](t *testing.T, v Variant[F]) {
	dir := t.TempDir()
	path := filepath.Join(dir, "good.bloom")
	f, err := v.New(5000, 0.01, 0)
	require.NoError(t, err)
	AddKeys(f, 1, 5000)
	require.NoError(t, f.WriteFile(path))
	good, err := os.ReadFile(path)
	require.NoError(t, err)

	trailing := mmapstore.ErrCorrupt
	if v.Grows {
		trailing = nil
	}
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
		// A stream stops at the end of its payload; a file must end there,
		// unless it grows in place (an interrupted growth leaves it longer).
		{"trailing bytes", append(bytes.Clone(good), 0), trailing, nil, nil},
		{"version 2", mutate(func(b []byte) []byte { b[8], b[mmapstore.SlotSize+8] = 2, 2; return b }), mmapstore.ErrVersion, nil, mmapstore.ErrVersion},
		{"header checksum", both(40), mmapstore.ErrHeaderChecksum, nil, mmapstore.ErrHeaderChecksum},
		{"one slot torn", flip(40), nil, nil, nil},
		{"payload bit flip", flip(mmapstore.PayloadOffset + 100), nil, mmapstore.ErrPayloadChecksum, mmapstore.ErrPayloadChecksum},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, "bad.bloom")
			require.NoError(t, os.WriteFile(p, c.data, 0o644))
			r, err := v.OpenReadOnly(p)
			if c.open != nil {
				require.ErrorIs(t, err, c.open)
				require.Contains(t, err.Error(), p, "the error names the file")
			} else {
				require.NoError(t, err)
				if c.verifyErr != nil {
					require.ErrorIs(t, r.Verify(), c.verifyErr)
				} else {
					require.NoError(t, r.Verify())
					NoFalseNegatives(t, r, 1, 5000)
				}
				require.NoError(t, r.Close())
			}
			_, err = v.ReadFrom(bytes.NewReader(c.data))
			if c.stream != nil {
				require.ErrorIs(t, err, c.stream)
			} else {
				require.NoError(t, err)
			}
		})
	}
}

// PublishReplacesAtomically builds beside a live file and publishes over it
// while a reader keeps the old mapping; an abandoned build leaves nothing.
func PublishReplacesAtomically[F Stream[F]](t *testing.T, v Variant[F]) {
	dir := t.TempDir()
	path := filepath.Join(dir, "live.bloom")
	old, err := v.New(1000, 0.01, 0)
	require.NoError(t, err)
	old.AddString("old")
	require.NoError(t, old.WriteFile(path))

	reader, err := v.OpenReadOnly(path)
	require.NoError(t, err)
	defer reader.Close()

	b, err := v.CreateTemp(path, 1000, 0.01, 0)
	require.NoError(t, err)
	require.NotEqual(t, path, b.Path())
	require.Equal(t, dir, filepath.Dir(b.Path()), "built beside its target")
	b.AddString("new")
	if v.Hooks.Building != nil {
		v.Hooks.Building(t, b)
	}
	// Until Publish, the target is the old filter.
	cur, err := v.OpenReadOnly(path)
	require.NoError(t, err)
	require.True(t, cur.ContainsString("old"))
	require.False(t, cur.ContainsString("new"))
	require.NoError(t, cur.Close())

	require.NoError(t, b.Publish())
	cur, err = v.OpenReadOnly(path)
	require.NoError(t, err)
	require.True(t, cur.ContainsString("new"))
	if v.Hooks.Published != nil {
		v.Hooks.Published(t, cur)
	}
	require.NoError(t, cur.Verify())
	require.NoError(t, cur.Close())
	// The reader that mapped the old file keeps its consistent old view.
	require.True(t, reader.ContainsString("old"))
	require.False(t, reader.ContainsString("new"))

	entries, _ := os.ReadDir(dir)
	require.Len(t, entries, 1, "no temporary file left")

	// An abandoned build leaves nothing behind and the target untouched.
	b, err = v.CreateTemp(path, 1000, 0.01, 0)
	require.NoError(t, err)
	require.NoError(t, b.Close())
	entries, _ = os.ReadDir(dir)
	require.Len(t, entries, 1)
	require.ErrorIs(t, old.Publish(), mmapstore.ErrNotTemp)
}

// PublishedFileIsReadableByOthers checks the mode of a written file (0644)
// and that a rebuild keeps the mode the operator gave it.
func PublishedFileIsReadableByOthers[F Stream[F]](t *testing.T, v Variant[F]) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mode.bloom")
	f, err := v.New(10, 0.01, 0)
	require.NoError(t, err)
	require.NoError(t, f.WriteFile(path))
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), st.Mode().Perm())
	// A rebuild keeps the mode the operator gave the file.
	require.NoError(t, os.Chmod(path, 0o640))
	b, err := v.CreateTemp(path, 10, 0.01, 0)
	require.NoError(t, err)
	require.NoError(t, b.Publish())
	st, err = os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), st.Mode().Perm())
}
