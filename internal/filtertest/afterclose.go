package filtertest

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// RunAfterClose calls every exported method of a closed filter and checks
// the answer each documents (issue 15): a file-backed filter, writable,
// read-only or published, rules nothing out (Contains true: no false
// negative for the keys added before Close), answers Add with false and
// changes nothing (the file reopens with the same keys and count), keeps
// Path, ReadOnly, Seed and Added (a variant that Grows has no stages left:
// Added is 0), reports an empty array in
// Bytes and the estimates, and returns an error wrapping mmapstore.ErrClosed
// from every method that needs the file or the array; none of them panics or
// faults. An in-memory filter stays usable after Close. more names the
// variant's own methods (Count, Remove, AddMany...): each is called on a
// closed file-backed filter, writable or read-only, and checks its own
// documented answer; on a read-only filter it may expect the ErrReadOnly
// panic every change gives.
func RunAfterClose[F Stream[F]](t *testing.T, v Variant[F], more map[string]func(t *testing.T, f F)) {
	check := func(t *testing.T, f F, path string, readOnly bool, added uint64) {
		t.Helper()
		closedErrors(t, v, f, path)
		closedAnswers(t, v, f, readOnly)
		closedIntrospection(t, v, f, path, readOnly, added)
		for name, call := range more {
			t.Run(name, func(t *testing.T) { call(t, f) })
		}
	}
	t.Run("file=writable", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "f.bloom")
		f, err := v.Create(path, 1000, 0.01, 0)
		require.NoError(t, err)
		fillClosed(f)
		added := f.Added()
		require.NoError(t, f.Close())
		check(t, f, path, false, added)
		r, err := v.OpenReadOnly(path)
		require.NoError(t, err, "calls after Close left the file whole")
		require.NoError(t, r.Verify())
		require.Equal(t, added, r.Added())
		NoFalseNegatives(t, r, 1, 500)
		require.NoError(t, r.Close())
	})
	t.Run("file=read-only", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "f.bloom")
		f, err := v.Create(path, 1000, 0.01, 0)
		require.NoError(t, err)
		fillClosed(f)
		require.NoError(t, f.Close())
		r, err := v.OpenReadOnly(path)
		require.NoError(t, err)
		added := r.Added()
		require.NoError(t, r.Close())
		check(t, r, path, true, added)
	})
	t.Run("file=published", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "f.bloom")
		f, err := v.CreateTemp(path, 1000, 0.01, 0)
		require.NoError(t, err)
		fillClosed(f)
		tmp, added := f.Path(), f.Added()
		require.NoError(t, f.Publish())
		check(t, f, tmp, false, added)
	})
	t.Run("memory", func(t *testing.T) { closedInMemory(t, v) })
}

// fillClosed adds the keys RunAfterClose's filters hold: 0..499 of set 1.
func fillClosed(f Filter) { AddKeys(f, 1, 500) }

// closedErrors: every method of a closed filter that needs the file or the
// array returns an error wrapping mmapstore.ErrClosed and writes nothing.
func closedErrors[F Stream[F]](t *testing.T, v Variant[F], f F, path string) {
	t.Helper()
	require.ErrorIs(t, f.Close(), mmapstore.ErrClosed, "second Close")
	require.ErrorIs(t, f.Sync(), mmapstore.ErrClosed, "Sync")
	require.ErrorIs(t, f.Verify(), mmapstore.ErrClosed, "Verify")
	require.ErrorIs(t, f.Prefault(), mmapstore.ErrClosed, "Prefault")
	require.ErrorIs(t, f.Publish(), mmapstore.ErrClosed, "Publish")
	var out bytes.Buffer
	n, err := f.WriteTo(&out)
	require.ErrorIs(t, err, mmapstore.ErrClosed, "WriteTo")
	require.Zero(t, n)
	require.Zero(t, out.Len())
	copyPath := filepath.Join(t.TempDir(), "copy.bloom")
	require.ErrorIs(t, f.WriteFile(copyPath), mmapstore.ErrClosed, "WriteFile")
	_, err = os.Stat(copyPath)
	require.ErrorIs(t, err, os.ErrNotExist, "WriteFile left no file")
	if m, ok := any(f).(interface{ MarshalBinary() ([]byte, error) }); ok {
		_, err := m.MarshalBinary()
		require.ErrorIs(t, err, mmapstore.ErrClosed, "MarshalBinary")
	}
	if m, ok := any(f).(interface{ AppendBinary([]byte) ([]byte, error) }); ok {
		b, err := m.AppendBinary([]byte("x"))
		require.ErrorIs(t, err, mmapstore.ErrClosed, "AppendBinary")
		require.Equal(t, []byte("x"), b)
	}
	if m, ok := any(f).(interface{ UnmarshalBinary([]byte) error }); ok {
		g, err := v.New(1000, 0.01, 0)
		require.NoError(t, err)
		data, err := any(g).(interface{ MarshalBinary() ([]byte, error) }).MarshalBinary()
		require.NoError(t, err)
		require.ErrorIs(t, m.UnmarshalBinary(data), v.ErrInvalid, "UnmarshalBinary into a closed file-backed filter")
		require.Equal(t, path, f.Path(), "still the closed file")
	}
	if c, ok := any(f).(combiner[F]); ok {
		g, err := v.New(1000, 0.01, 0)
		require.NoError(t, err)
		require.ErrorIs(t, c.Union(g), mmapstore.ErrClosed, "Union into a closed filter")
		require.ErrorIs(t, c.Intersect(g), mmapstore.ErrClosed, "Intersect into a closed filter")
		gc := any(g).(combiner[F])
		require.ErrorIs(t, gc.Union(f), mmapstore.ErrClosed, "Union of a closed filter")
		require.ErrorIs(t, gc.Intersect(f), mmapstore.ErrClosed, "Intersect of a closed filter")
	}
}

// closedAnswers: a closed filter rules nothing out, so a key added before
// Close is never reported absent; Add answers false and changes nothing, or
// panics with the documented ErrReadOnly on a read-only filter.
func closedAnswers[F Stream[F]](t *testing.T, v Variant[F], f F, readOnly bool) {
	t.Helper()
	buf := make([]byte, 16)
	for i := uint64(0); i < 500; i++ {
		require.True(t, f.Contains(Key(buf, 1, i)), "Contains after Close")
		require.True(t, f.ContainsString(string(Key(buf, 1, i))), "ContainsString after Close")
	}
	if readOnly {
		requirePanicIs(t, v.ErrReadOnly, func() { f.Add(Key(buf, 2, 0)) })
		requirePanicIs(t, v.ErrReadOnly, func() { f.AddString("x") })
		return
	}
	for i := uint64(0); i < 500; i++ {
		require.False(t, f.Add(Key(buf, 2, i)), "Add after Close")
		require.False(t, f.AddString(string(Key(buf, 3, i))), "AddString after Close")
	}
}

// closedIntrospection: a closed filter keeps Path, ReadOnly, Seed and
// Added (a variant that Grows has no stages left: Added is 0) and reports
// an empty array in Bytes and the estimates.
func closedIntrospection[F Stream[F]](t *testing.T, v Variant[F], f F, path string, readOnly bool, added uint64) {
	t.Helper()
	require.Equal(t, path, f.Path())
	require.Equal(t, readOnly, f.ReadOnly())
	if v.Grows { // scalable: a closed filter has no stages to count
		require.Zero(t, f.Added())
	} else {
		require.Equal(t, added, f.Added(), "Added kept, Adds after Close not counted")
	}
	require.Zero(t, f.Seed(), "the seed kept (the suite uses 0)")
	require.Zero(t, f.Bytes())
	require.Zero(t, f.ApproxCount())
	require.Zero(t, f.FillRatio())
	// K and EstimatedFPR are each variant's to document (more).
	_, _ = f.K(), f.EstimatedFPR()
}

// closedInMemory: Close of an in-memory filter does nothing; it stays
// usable.
func closedInMemory[F Stream[F]](t *testing.T, v Variant[F]) {
	f, err := v.New(1000, 0.01, 0)
	require.NoError(t, err)
	fillClosed(f)
	require.NoError(t, f.Close(), "Close of an in-memory filter does nothing")
	require.NoError(t, f.Close(), "and again")
	require.Empty(t, f.Path())
	require.NoError(t, f.Sync())
	require.NoError(t, f.Verify())
	require.NoError(t, f.Prefault())
	require.ErrorIs(t, f.Publish(), mmapstore.ErrNotTemp)
	NoFalseNegatives(t, f, 1, 500)
	buf := make([]byte, 16)
	require.True(t, f.Add(Key(buf, 2, 0)))
	require.True(t, f.Contains(Key(buf, 2, 0)))
	_, err = f.WriteTo(io.Discard)
	require.NoError(t, err)
}

// requirePanicIs checks that fn panics with an error wrapping target.
func requirePanicIs(t *testing.T, target error, fn func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		err, ok := r.(error)
		require.True(t, ok, "panics with an error, got %v", r)
		require.True(t, errors.Is(err, target), "panic %v wraps %v", err, target)
	}()
	fn()
}
