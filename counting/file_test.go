package counting

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// TestFileSuite runs the shared file suite with what only a counting filter
// does: Remove on a read-only filter panics, an exported file is of another
// variant, and removes reach a mapped reader, persist across Close and
// leave a published build.
func TestFileSuite(t *testing.T) {
	v := variant
	v.Changes = map[string]func(*Filter){
		"Remove":       func(r *Filter) { r.Remove([]byte("x")) },
		"RemoveString": func(r *Filter) { r.RemoveString("x") },
	}
	v.Foreign = map[string]func(string) error{
		// The standard filter an export writes.
		"export": func(path string) error {
			c, err := New(1000, 0.01)
			if err != nil {
				return err
			}
			return c.ExportFile(path)
		},
	}
	h := &v.Hooks
	h.Created = func(t *testing.T, f *Filter) uint64 {
		filtertest.AddKeys(f, 3, 1000)
		return 1000
	}
	h.Closed = func(t *testing.T, f *Filter) {
		_, err := f.ExportTo(io.Discard)
		require.ErrorIs(t, err, mmapstore.ErrClosed, "a closed filter does not export as empty")
	}
	h.Reopened = func(t *testing.T, r *Filter) { filtertest.NoFalseNegatives(t, r, 3, 1000) }
	// A writer removes while the reader has the file mapped; the reader's
	// shared mapping sees the changed counters.
	h.Shared = func(t *testing.T, w, r *Filter) {
		var buf [16]byte
		for i := uint64(0); i < 1000; i++ {
			require.True(t, w.Remove(filtertest.Key(buf[:], 3, i)))
		}
		require.Less(t, filtertest.CountFalsePositives(r, 3, 1000), uint64(50), "removed keys are gone for the reader too")
	}
	// The Removes persisted across Close and Open: the file holds exactly the
	// counters of a filter that never saw set 3.
	h.Final = func(t *testing.T, r *Filter) {
		require.EqualValues(t, 20000, r.Added())
		want, _ := New(20000, 0.01, WithSeed(9))
		filtertest.AddKeys(want, 1, 10000)
		filtertest.AddKeys(want, 2, 10000)
		require.Equal(t, want.words, r.words)
	}
	h.ReadOnly = func(t *testing.T, r *Filter) {
		require.EqualValues(t, 1, r.CountString("x"), "nothing changed")
	}
	h.Building = func(t *testing.T, b *Filter) {
		b.AddString("gone")
		require.True(t, b.RemoveString("gone"))
	}
	h.Published = func(t *testing.T, cur *Filter) {
		require.False(t, cur.ContainsString("gone"))
		require.EqualValues(t, 1, cur.Added())
	}
	filtertest.RunFileSuite(t, v)
}

// TestHeaderNeedsFourBitCells: a header that says counting but with 1-bit
// cells is refused.
func TestHeaderNeedsFourBitCells(t *testing.T) {
	h := mmapstore.Header{Variant: mmapstore.Counting, M: 1000, K: 3, CellBits: 1, Capacity: 100, TargetFPR: 0.01,
		PayloadLen: mmapstore.CellBytes(1000, 1)}
	_, err := mmapstore.Create(filepath.Join(t.TempDir(), "cells.bloom"), h)
	require.ErrorIs(t, err, mmapstore.ErrCorrupt)
}

func TestAfterClose(t *testing.T) { filtertest.RunAfterClose(t, variant, afterClose) }

func TestFileErrors(t *testing.T) { filtertest.RunFileErrors(t, variant, "counting") }
