package mmapstore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func scalableHeader() Header {
	return Header{Variant: Scalable, CellBits: 1, Capacity: 1000, TargetFPR: 0.01, Growth: 2, Tightening: 0.85,
		Stages:     []Stage{{M: 8192, K: 7, BlockBits: 512, Capacity: 1000, TargetFPR: 0.0015}},
		M:          8192,
		PayloadLen: CellBytes(8192, 1)}
}

func TestGrowIsDurableAndCrashSafe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.bloom")
	f, err := Create(path, scalableHeader())
	require.NoError(t, err)
	f.Stages().Words(0)[3] = 0xaa

	// Three growths, each stage written as soon as it exists.
	for i := 1; i <= 3; i++ {
		w, err := f.Stages().Grow(Stage{M: 8192 << i, K: 7, BlockBits: 512, Capacity: 1000 << i, TargetFPR: 0.001})
		require.NoError(t, err)
		require.Len(t, w, (8192<<i)/64)
		w[len(w)-1] = uint64(i)
		require.Equal(t, w, f.Stages().Words(i))
	}
	require.Equal(t, uint64(0xaa), f.Stages().Words(0)[3], "earlier stages stay mapped")
	require.NoError(t, f.Sync(0))

	// A growth that dies after allocating, before the header names the
	// stage, leaves a file that opens with the stages that completed.
	growFault = func(step string) error {
		if step == "allocated" {
			return errors.New("simulated crash")
		}
		return nil
	}
	_, err = f.Stages().Grow(Stage{M: 8192 << 4, K: 7, BlockBits: 512, Capacity: 16000, TargetFPR: 0.001})
	growFault = nil
	require.Error(t, err)
	require.NoError(t, f.Close(0))

	st, err := os.Stat(path)
	require.NoError(t, err)
	h, err := ReadHeader(path)
	require.NoError(t, err)
	require.Len(t, h.Stages, 4)
	require.Greater(t, st.Size(), int64(HeaderSize+h.PayloadLen), "the unfinished stage's blocks are there")

	r, err := OpenReadOnly(path, Scalable)
	require.NoError(t, err)
	require.NoError(t, r.Verify(), "the checksum spans every stage")
	for i := 1; i <= 3; i++ {
		w := r.Stages().Words(i)
		require.Equal(t, uint64(i), w[len(w)-1])
	}
	require.Equal(t, uint64(0xaa), r.Stages().Words(0)[3])
	require.NoError(t, r.Close(0))

	// The abandoned space may hold bits: a stage whose pages reached the
	// disk while its header did not. Reopened for writing, the file grows
	// again over that space, and the new stage starts clear.
	raw, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = raw.WriteAt([]byte{0xff, 0xff, 0xff, 0xff}, int64(HeaderSize+h.PayloadLen)+100)
	require.NoError(t, err)
	require.NoError(t, raw.Close())
	w, err := Open(path, Scalable)
	require.NoError(t, err)
	words, err := w.Stages().Grow(Stage{M: 8192 << 4, K: 7, BlockBits: 512, Capacity: 16000, TargetFPR: 0.001})
	require.NoError(t, err)
	for _, x := range words {
		require.Zero(t, x)
	}
	require.NoError(t, w.Close(0))
	h, err = ReadHeader(path)
	require.NoError(t, err)
	require.Len(t, h.Stages, 5)

	// Grow refuses other variants and read-only files.
	sf, err := Create(filepath.Join(t.TempDir(), "std.bloom"), testHeader())
	require.NoError(t, err)
	_, err = sf.Stages().Grow(Stage{M: 512, K: 1})
	require.ErrorIs(t, err, ErrVariant)
	require.NoError(t, sf.Close(0))
	ro, err := OpenReadOnly(path, Scalable)
	require.NoError(t, err)
	_, err = ro.Stages().Grow(Stage{M: 512, K: 1, BlockBits: 512, TargetFPR: 0.1})
	require.ErrorIs(t, err, ErrReadOnly)
	require.NoError(t, ro.Close(0))
}
