package mmapstore

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// cuckooHeader is a valid header of a cuckoo filter: 1000 buckets of four
// 10-bit fingerprints.
func cuckooHeader() Header {
	return Header{Version: CurrentVersion, Variant: Cuckoo, Scheme: 2, Seed: 9, M: 1000, K: CuckooBucketSize,
		CellBits: 10, Capacity: 3840, TargetFPR: 0.01, Count: 17, MaxKicks: 4000, Generation: 3,
		PayloadLen: CellBytes(4000, 10)}
}

// TestCuckooHeader: the cuckoo tag's name, its max-kicks field round trip
// through a slot, and Validate's checks of its geometry.
func TestCuckooHeader(t *testing.T) {
	require.Equal(t, "cuckoo", Cuckoo.String())
	require.EqualValues(t, 7, Cuckoo, "the tag is part of the format")
	h := cuckooHeader()
	require.EqualValues(t, 5000, h.PayloadLen, "40000 bits in whole words")
	var b [SlotSize]byte
	encodeSlot(&h, b[:])
	got, err := decodeSlot(b[:])
	require.NoError(t, err)
	require.Equal(t, h, got)
	require.EqualValues(t, 4000, le32(b[offMaxKicks:]))

	for name, c := range map[string]func(h *Header){
		"bucket size":    func(h *Header) { h.K = 2 },
		"narrow":         func(h *Header) { h.CellBits, h.PayloadLen = 3, CellBytes(4000, 3) },
		"wide":           func(h *Header) { h.CellBits, h.PayloadLen = 33, CellBytes(4000, 33) },
		"block bits":     func(h *Header) { h.BlockBits = 512 },
		"no buckets":     func(h *Header) { h.M, h.PayloadLen = 0, 0 },
		"huge":           func(h *Header) { h.M = 1 << 60 },
		"payload":        func(h *Header) { h.PayloadLen += 8 },
		"max kicks":      func(h *Header) { h.MaxKicks = CuckooMaxMaxKicks + 1 },
		"stages":         func(h *Header) { h.Stages = []Stage{{M: 512, K: 3}} },
		"target p":       func(h *Header) { h.TargetFPR = 1 },
		"another length": func(h *Header) { h.M++ },
	} {
		h := cuckooHeader()
		c(&h)
		require.ErrorIs(t, h.Validate(), ErrCorrupt, name)
	}
	// The widest fingerprints and a table of one bucket.
	h = cuckooHeader()
	h.M, h.CellBits, h.PayloadLen = 1, 32, 16
	require.NoError(t, h.Validate())
	// Another variant's header does not carry max kicks.
	s := testHeader()
	s.MaxKicks = 5
	encodeSlot(&s, b[:])
	got, err = decodeSlot(b[:])
	require.NoError(t, err)
	require.Zero(t, got.MaxKicks)
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
