package cuckoo

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// TestFileSuite runs the shared file suite with what only a cuckoo filter
// does: removes reach a mapped reader, persist across Close and leave a
// published build.
func TestFileSuite(t *testing.T) {
	v := variant
	h := &v.Hooks
	// Set 3 (100 keys) takes the filter half a percent past its capacity
	// once the suite adds its second 10000 keys: within what a table takes
	// (about 1.5% more than its capacity).
	h.Created = func(t *testing.T, f *Filter) uint64 {
		filtertest.AddKeys(f, 3, 100)
		return 100
	}
	h.Reopened = func(t *testing.T, r *Filter) { filtertest.NoFalseNegatives(t, r, 3, 100) }
	h.Shared = func(t *testing.T, w, r *Filter) {
		require.Zero(t, w.Refused())
		var buf [16]byte
		for i := uint64(0); i < 100; i++ {
			require.True(t, w.Remove(filtertest.Key(buf[:], 3, i)))
		}
		require.Less(t, filtertest.CountFalsePositives(r, 3, 100), uint64(5), "removed keys are gone for the reader too")
	}
	h.Final = func(t *testing.T, r *Filter) {
		require.EqualValues(t, 20000, r.Added())
		require.EqualValues(t, 20000, r.ApproxCount(), "the slots that hold a fingerprint")
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

func TestAfterClose(t *testing.T) { filtertest.RunAfterClose(t, variant, afterClose) }

func TestFileErrors(t *testing.T) { filtertest.RunFileErrors(t, variant, "cuckoo") }

func TestStreamRoundTrip(t *testing.T) { filtertest.StreamRoundTrip(t, variant) }

func TestCreateOnFullDisk(t *testing.T) { filtertest.CreateOnFullDisk(t, variant) }

// afterClose checks the methods of this package beyond the shared suite's
// on a closed file-backed filter (filtertest.RunAfterClose).
var afterClose = map[string]func(t *testing.T, f *Filter){
	"count-remove": func(t *testing.T, f *Filter) {
		require.EqualValues(t, 2*BucketSize, f.CountString("x"), "rules nothing out")
		require.True(t, f.ContainsDigest(f.HashString("x")))
		if f.ReadOnly() {
			return
		}
		added := f.Added()
		require.True(t, f.RemoveString("x"), "can rule nothing out")
		require.False(t, f.AddDigest(f.HashString("x")))
		_, err := f.TryAddString("x")
		require.ErrorIs(t, err, mmapstore.ErrClosed)
		_, err = f.AddNX([]byte("x"))
		require.ErrorIs(t, err, mmapstore.ErrClosed)
		require.Equal(t, added, f.Added())
	},
	"geometry": func(t *testing.T, f *Filter) {
		require.EqualValues(t, 1000, f.Capacity())
		require.Equal(t, 0.01, f.TargetFPR())
		require.NotZero(t, f.Buckets())
		require.EqualValues(t, 10, f.FingerprintBits())
		require.EqualValues(t, 8, f.K())
		require.Zero(t, f.EstimatedFPR())
		require.NoError(t, nilOrClosed(f.PrefaultWritable()))
	},
}

// nilOrClosed maps an error wrapping ErrClosed to nil.
func nilOrClosed(err error) error {
	if err != nil && errorsIs(err, mmapstore.ErrClosed) {
		return nil
	}
	return err
}
