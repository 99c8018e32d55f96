package scalable

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStageParamsIsWhatGrowthMakes: the stages a filter grows are exactly
// StageParams of its n0, p, s and r (a non-integer s included, where
// ⌈n0·s^i⌉ rounds), and bad arguments are ErrInvalid or ErrTooLarge.
func TestStageParamsIsWhatGrowthMakes(t *testing.T) {
	for _, s := range []float64{2, 1.5} {
		f, err := New(77, 0.01, WithGrowth(s), WithTightening(0.8))
		require.NoError(t, err)
		for i := uint64(0); f.NumStages() < 6; i++ {
			f.Add(binary.LittleEndian.AppendUint64(nil, i))
		}
		for i, got := range f.Stages() {
			want, err := StageParams(77, 0.01, s, 0.8, i)
			require.NoError(t, err)
			require.Equal(t, want.Capacity, got.Capacity, "s %v stage %d", s, i)
			require.Equal(t, want.Bits, got.Bits, "s %v stage %d", s, i)
			require.Equal(t, want.K, got.K, "s %v stage %d", s, i)
			require.Equal(t, want.TargetFPR, got.TargetFPR, "s %v stage %d", s, i)
		}
	}
	g, err := StageParams(77, 0.01, 1.5, 0.8, 3)
	require.NoError(t, err)
	require.EqualValues(t, 260, g.Capacity, "⌈77·1.5³⌉ = ⌈259.875⌉")
	for _, bad := range []struct {
		n0      uint64
		p, s, r float64
		i       int
	}{{0, 0.01, 2, 0.85, 0}, {1, 0, 2, 0.85, 0}, {1, 0.01, 0.5, 0.85, 0}, {1, 0.01, 2, 1, 0}, {1, 0.01, 2, 0.85, -1}} {
		_, err := StageParams(bad.n0, bad.p, bad.s, bad.r, bad.i)
		require.ErrorIs(t, err, ErrInvalid, "%+v", bad)
	}
	_, err = StageParams(1<<40, 0.01, 2, 0.85, 40)
	require.ErrorIs(t, err, ErrTooLarge)
}
