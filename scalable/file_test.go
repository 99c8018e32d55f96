package scalable

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// TestFileSuite runs the shared file suite (filtertest.RunFileSuite): the
// lifecycle with growth, files and streams agreeing, changes to a read-only
// filter, open errors and files of another variant, corrupt files (version
// 2 among them), publishing with a reader of the old file and an abandoned
// build, and the mode of a published file.
func TestFileSuite(t *testing.T) { filtertest.RunFileSuite(t, variant) }

// TestOpenTakesOnlyLimits: Open takes the limits only; what the file
// records cannot change, a refused Open leaves the file as it was, and the
// limits given apply.
func TestOpenTakesOnlyLimits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.bloom")
	f, err := Create(path, 1000, 0.01, WithSeed(3))
	require.NoError(t, err)
	filtertest.AddKeys(f, 1, 3000)
	require.NoError(t, f.Close())
	_, err = Create(filepath.Join(t.TempDir(), "bad"), 100, 0.01, WithTightening(2))
	require.ErrorIs(t, err, ErrInvalid)

	before, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, o := range []Option{WithSeed(4), WithGrowth(3), WithTightening(0.5), WithMaxStages(0)} {
		_, err = Open(path, o)
		require.ErrorIs(t, err, ErrInvalid)
	}
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after)

	// Limits set at Open apply: two stages so far, and no third.
	w, err := Open(path, WithSeed(3), WithMaxStages(2))
	require.NoError(t, err)
	require.Equal(t, 2, w.NumStages())
	filtertest.AddKeys(w, 2, 5000)
	require.ErrorIs(t, w.Err(), ErrLimit)
	require.Equal(t, 2, w.NumStages())
	require.NoError(t, w.Close())
}

// copyFile returns the bytes of path as they are now: what the file holds
// if the process that has it open dies at this moment (its writes are in
// the page cache, which outlives it).
func copyFile(t *testing.T, path string) []byte {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// TestCrashLeavesEveryCompletedStage kills a writer (it is never closed) at
// several points and opens what it left: the file as it stood, and the file
// as a crash during the next growth leaves it (the new stage's space
// allocated, in part or whole, but not yet named by the header).
func TestCrashLeavesEveryCompletedStage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.bloom")
	f, err := Create(path, 1000, 0.01)
	require.NoError(t, err)
	defer f.Close()
	filtertest.AddKeys(f, 1, 6000) // three stages
	require.Equal(t, 3, f.NumStages())
	require.NoError(t, f.Sync())
	synced := copyFile(t, path)

	// Up to just before the next stage: fill stage 2 to its capacity.
	next := fillTo(f, 2, 0, 7000)
	require.Equal(t, 3, f.NumStages())
	beforeGrow := copyFile(t, path)
	k := absentKey(t, f, 4)
	require.True(t, f.Add(k)) // grows: the fourth stage
	require.Equal(t, 4, f.NumStages())
	afterGrow := copyFile(t, path)
	require.Greater(t, len(afterGrow), len(beforeGrow))

	open := func(t *testing.T, data []byte) *Filter {
		p := filepath.Join(t.TempDir(), "crashed.bloom")
		require.NoError(t, os.WriteFile(p, data, 0o644))
		r, err := Open(p)
		require.NoError(t, err)
		t.Cleanup(func() { r.Close() })
		require.ErrorIs(t, r.Verify(), mmapstore.ErrChecksumStale)
		return r
	}

	t.Run("synced", func(t *testing.T) {
		r := open(t, synced)
		require.Equal(t, 3, r.NumStages())
		filtertest.NoFalseNegatives(t, r, 1, 6000)
	})
	t.Run("after growth", func(t *testing.T) {
		r := open(t, afterGrow)
		require.Equal(t, 4, r.NumStages())
		filtertest.NoFalseNegatives(t, r, 1, 6000)
		filtertest.NoFalseNegatives(t, r, 2, next)
		require.True(t, r.Contains(k))
		// The header recorded each stage full when it grew.
		for i, s := range r.Stages()[:3] {
			require.Equal(t, s.Capacity, s.Count, "stage %d", i)
		}
	})
	// A crash inside Grow after the file was extended (fully or in part)
	// and before the header named the stage: the old header, a longer file.
	for _, cut := range []int{len(beforeGrow), len(beforeGrow) + 4096, len(afterGrow) - 64, len(afterGrow)} {
		data := bytes.Clone(afterGrow[:cut])
		copy(data[:mmapstore.HeaderSize], beforeGrow[:mmapstore.HeaderSize])
		r := open(t, data)
		require.Equal(t, 3, r.NumStages(), "length %d", cut)
		filtertest.NoFalseNegatives(t, r, 1, 6000)
		filtertest.NoFalseNegatives(t, r, 2, next)
		// It grows again over the abandoned space, and keeps every key.
		filtertest.AddKeys(r, 3, 5000)
		require.Equal(t, 4, r.NumStages())
		filtertest.NoFalseNegatives(t, r, 1, 6000)
		filtertest.NoFalseNegatives(t, r, 3, 5000)
	}
	// Cut below what the header names: a typed error, not a panic.
	for _, cut := range []int{len(synced) - 8, mmapstore.HeaderSize + 100, 100} {
		p := filepath.Join(dir, "cut.bloom")
		require.NoError(t, os.WriteFile(p, synced[:cut], 0o644))
		_, err := OpenReadOnly(p)
		require.ErrorIs(t, err, mmapstore.ErrTruncated, "length %d", cut)
		_, err = Open(p)
		require.ErrorIs(t, err, mmapstore.ErrTruncated, "length %d", cut)
	}
}

// TestCrashRecountsNewestStage: the counts in the header are those of the
// last Sync (or growth). After a crash, Open estimates the newest stage's
// keys from its bits so that the stage is not filled past its capacity.
func TestCrashRecountsNewestStage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.bloom")
	f, err := Create(path, 10_000, 0.01)
	require.NoError(t, err)
	defer f.Close()
	filtertest.AddKeys(f, 1, 15_000) // stage 0 full, stage 1 a quarter
	require.NoError(t, f.Sync())
	filtertest.AddKeys(f, 2, 10_000) // stage 1 three quarters; not synced
	want := f.Stages()[1].Count

	p := filepath.Join(t.TempDir(), "crashed.bloom")
	require.NoError(t, os.WriteFile(p, copyFile(t, path), 0o644))
	h, err := mmapstore.ReadHeader(p)
	require.NoError(t, err)
	require.Less(t, h.Stages[1].Count, want-9000, "the header is behind")
	r, err := Open(p)
	require.NoError(t, err)
	defer r.Close()
	require.InEpsilon(t, float64(want), float64(r.Stages()[1].Count), 0.03)

	// A clean file keeps its exact counts.
	filtertest.AddKeys(r, 3, 1000)
	counts := r.Stages()
	require.NoError(t, r.Close())
	c, err := Open(p)
	require.NoError(t, err)
	defer c.Close()
	require.Equal(t, counts, c.Stages())
}

// TestCorruptStages: what only a file of several stages can get wrong, on
// the golden file (stages of 100, 200, 400 and 800), through OpenReadOnly,
// Open and ReadFrom; the corruptions every variant's file can suffer are
// the shared suite's (TestFileSuite/CorruptFiles).
func TestCorruptStages(t *testing.T) {
	good, err := os.ReadFile(goldenPath)
	require.NoError(t, err)
	flip := func(off int) []byte {
		b := bytes.Clone(good)
		b[off] ^= 0x10
		return b
	}
	stage1 := mmapstore.HeaderSize + 1536/8 // the first byte of stage 1
	cases := []struct {
		name      string
		data      []byte
		open      error // from OpenReadOnly and Open
		verifyErr error // from Verify, when open succeeds
		stream    error // from ReadFrom
	}{
		{"last stage cut", good[:len(good)-8], mmapstore.ErrTruncated, nil, mmapstore.ErrTruncated},
		// Trailing bytes are a growth that did not complete: allowed.
		{"trailing bytes", append(bytes.Clone(good), make([]byte, 4096)...), nil, nil, nil},
		{"stage table torn in one slot", flip(offStages + 8), nil, nil, nil},
		{"stage 1 bit flip", flip(stage1 + 3), nil, mmapstore.ErrPayloadChecksum, mmapstore.ErrPayloadChecksum},
		{"last stage bit flip", flip(len(good) - 1), nil, mmapstore.ErrPayloadChecksum, mmapstore.ErrPayloadChecksum},
	}
	for _, c := range corruptions {
		cases = append(cases, struct {
			name      string
			data      []byte
			open      error
			verifyErr error
			stream    error
		}{c.name, reseal(good, c.edit), mmapstore.ErrCorrupt, nil, mmapstore.ErrCorrupt})
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, "bad.bloom")
			require.NoError(t, os.WriteFile(p, c.data, 0o644))
			for i, open := range []func(string) (*Filter, error){OpenReadOnly, func(p string) (*Filter, error) { return Open(p) }} {
				r, err := open(p)
				if c.open != nil {
					require.ErrorIs(t, err, c.open)
					require.Contains(t, err.Error(), p, "the error names the file")
					continue
				}
				if writable := i == 1; writable && c.verifyErr != nil {
					// A writable Open verifies a current checksum first and
					// leaves a damaged file as it found it.
					require.ErrorIs(t, err, c.verifyErr)
					now, rerr := os.ReadFile(p)
					require.NoError(t, rerr)
					require.Equal(t, c.data, now, "a refused file is not changed")
					continue
				}
				require.NoError(t, err)
				switch {
				case c.verifyErr != nil && r.ReadOnly():
					require.ErrorIs(t, r.Verify(), c.verifyErr)
				case r.ReadOnly():
					require.NoError(t, r.Verify())
					require.Equal(t, 4, r.NumStages())
					for i := 0; i < 1000; i++ {
						require.True(t, r.ContainsString(fmt.Sprintf("key-%d", i)))
					}
				}
				require.NoError(t, r.Close())
				require.NoError(t, os.WriteFile(p, c.data, 0o644)) // Open sealed it
			}
			_, err := ReadFrom(bytes.NewReader(c.data))
			if c.stream != nil {
				require.ErrorIs(t, err, c.stream)
				if errors.Is(c.stream, mmapstore.ErrTruncated) {
					require.ErrorIs(t, err, io.ErrUnexpectedEOF)
				}
			} else {
				require.NoError(t, err)
			}
		})
	}
}

// TestConcurrentFileGrowth adds from several goroutines to a file-backed
// filter, which grows its file meanwhile, while another goroutine syncs.
func TestConcurrentFileGrowth(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.bloom")
	f, err := Create(path, 500, 0.01)
	require.NoError(t, err)
	done := make(chan struct{})
	synced := make(chan error, 1)
	go func() {
		var err error
		for {
			select {
			case <-done:
				synced <- err
				return
			default:
				if e := f.Sync(); e != nil && err == nil {
					err = e
				}
			}
		}
	}()
	filtertest.Concurrent(t, f, 4, 20_000, 2)
	close(done)
	require.NoError(t, <-synced)
	stages := f.NumStages()
	require.Greater(t, stages, 5)
	require.NoError(t, f.Close())
	r, err := OpenReadOnly(path)
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, r.Verify())
	require.Equal(t, stages, r.NumStages())
	filtertest.NoFalseNegatives(t, r, 4, 20_000)
}

func TestAfterClose(t *testing.T) { filtertest.RunAfterClose(t, variant, afterClose) }

func TestFileErrors(t *testing.T) { filtertest.RunFileErrors(t, variant, "scalable") }
