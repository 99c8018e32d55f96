package mmapstore

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/hashing"
)

func testHeader() Header {
	return Header{Variant: Standard, Scheme: 1, Seed: 42, M: 1000, K: 7, CellBits: 1, Capacity: 100,
		TargetFPR: 0.01, Count: 3, PayloadLen: CellBytes(1000, 1), PayloadSum: 0xabc, Flags: FlagChecksumCurrent,
		Version: CurrentVersion, Generation: 5}
}

func TestSlotRoundTrip(t *testing.T) {
	h := testHeader()
	var b [HeaderSize]byte
	encodeSlot(&h, b[:SlotSize])
	got, err := decodeSlot(b[:SlotSize])
	require.NoError(t, err)
	require.Equal(t, h, got)
	require.Equal(t, Magic, string(b[:8]))

	s := Header{Variant: Scalable, Scheme: 1, CellBits: 1, Capacity: 10, TargetFPR: 0.01, Growth: 2, Tightening: 0.85,
		Version: CurrentVersion}
	for i := 0; i < MaxStages; i++ {
		st := Stage{Offset: s.PayloadLen, M: 512 * uint64(i+1), K: 5, BlockBits: 512, Capacity: 10 << i, TargetFPR: 0.001, Count: uint64(i)}
		s.Stages = append(s.Stages, st)
		s.M += st.M
		s.PayloadLen += CellBytes(st.M, 1)
	}
	encodeSlot(&s, b[:SlotSize])
	got, err = decodeSlot(b[:SlotSize])
	require.NoError(t, err)
	require.Equal(t, s, got)
	require.Equal(t, 70, MaxStages) // (4088-128)/56
}

func TestDecodeHeaderPicksNewestValidSlot(t *testing.T) {
	var b [HeaderSize]byte
	old, cur := testHeader(), testHeader()
	old.Generation, cur.Generation, cur.Count = 6, 7, 99
	encodeSlot(&old, b[:SlotSize])
	encodeSlot(&cur, b[SlotSize:])
	got, err := DecodeHeader(b[:])
	require.NoError(t, err)
	require.EqualValues(t, 99, got.Count)

	// The newer slot torn mid-write: the older one is used.
	b[SlotSize+100] ^= 1
	got, err = DecodeHeader(b[:])
	require.NoError(t, err)
	require.EqualValues(t, 3, got.Count)

	// Both torn: a checksum error.
	b[100] ^= 1
	_, err = DecodeHeader(b[:])
	require.ErrorIs(t, err, ErrHeaderChecksum)
}

func TestValidateRejectsImpossibleGeometry(t *testing.T) {
	for name, mut := range map[string]func(*Header){
		"m zero":          func(h *Header) { h.M = 0; h.PayloadLen = 0 },
		"m huge":          func(h *Header) { h.M = MaxCells + 64; h.PayloadLen = CellBytes(h.M, 1) },
		"k zero":          func(h *Header) { h.K = 0 },
		"k huge":          func(h *Header) { h.K = 65 },
		"payload len":     func(h *Header) { h.PayloadLen += 8 },
		"p zero":          func(h *Header) { h.TargetFPR = 0 },
		"p NaN":           func(h *Header) { h.TargetFPR = math.NaN() },
		"unknown flag":    func(h *Header) { h.Flags |= 1 << 7 },
		"unknown variant": func(h *Header) { h.Variant = 999 },
		"cell bits":       func(h *Header) { h.CellBits = 4 },
		"block bits":      func(h *Header) { h.BlockBits = 512 },
		"stages":          func(h *Header) { h.Stages = []Stage{{}} },
		"partitioned m":   func(h *Header) { h.Variant = Partitioned; h.BlockBits = 512 }, // 1000 % 512 != 0
	} {
		h := testHeader()
		mut(&h)
		require.ErrorIs(t, h.Validate(), ErrCorrupt, name)
	}
	for _, id := range []hashing.Scheme{0, 3, 0xffff} {
		h := testHeader()
		h.Scheme = id
		require.ErrorIs(t, h.Validate(), ErrScheme, "hash id %d", id)
	}
	for _, id := range []hashing.Scheme{1, 2} {
		h := testHeader()
		h.Scheme = id
		require.NoError(t, h.Validate(), "hash id %d", id)
	}
}

func TestStreamErrors(t *testing.T) {
	words := make([]uint64, CellBytes(1000, 1)/8)
	words[3] = 0xdeadbeef
	var buf bytes.Buffer
	_, err := WriteStream(&buf, testHeader(), words)
	require.NoError(t, err)
	full := buf.Bytes()

	h, got, err := ReadStream(bytes.NewReader(full), Standard)
	require.NoError(t, err)
	require.Equal(t, words, got)
	require.True(t, h.ChecksumCurrent())

	for _, cut := range []int{0, 7, 100, HeaderSize - 1, HeaderSize, len(full) - 1} {
		_, _, err := ReadStream(bytes.NewReader(full[:cut]), Standard)
		require.ErrorIs(t, err, ErrTruncated, "cut at %d", cut)
		require.ErrorIs(t, err, io.ErrUnexpectedEOF, "cut at %d", cut)
	}
	_, _, err = ReadStream(bytes.NewReader(full), Counting)
	require.ErrorIs(t, err, ErrVariant)

	// A header claiming an enormous payload on a short stream fails without
	// allocating it.
	big := testHeader()
	big.M = 1 << 40 // 128 GiB of bits
	big.PayloadLen = CellBytes(big.M, 1)
	var hb [HeaderSize]byte
	encodeSlot(&big, hb[:SlotSize])
	encodeSlot(&big, hb[SlotSize:])
	allocs := testing.AllocsPerRun(1, func() {
		_, _, err = ReadStream(io.MultiReader(bytes.NewReader(hb[:]), bytes.NewReader(make([]byte, 1000))), Standard)
	})
	require.True(t, errors.Is(err, ErrTruncated) || errors.Is(err, ErrTooLarge), "got %v", err)
	require.Less(t, allocs, 100.0)

	// Words that change during WriteStream are reported.
	_, err = WriteStream(changingWriter{words: words}, testHeader(), words)
	require.ErrorIs(t, err, ErrModified)
}

// changingWriter modifies the words being written after the header is out.
type changingWriter struct{ words []uint64 }

func (w changingWriter) Write(p []byte) (int, error) {
	w.words[0]++
	return len(p), nil
}

func TestReadHeader(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/f.bloom"
	f, err := Create(path, testHeader())
	require.NoError(t, err)
	require.NoError(t, f.Close(7))
	h, err := ReadHeader(path)
	require.NoError(t, err)
	require.Equal(t, Standard, h.Variant)
	require.EqualValues(t, 7, h.Count)
	require.True(t, h.ChecksumCurrent())
	_, err = ReadHeader(dir + "/missing")
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.NoError(t, os.Truncate(path, HeaderSize+8))
	_, err = ReadHeader(path)
	require.ErrorIs(t, err, ErrTruncated)
}

// A short file that does not begin like the magic (a 6-byte text file) is
// a foreign file, not a truncated filter file: `bloomkit info` of one said
// "truncated". A short file that does begin like it is truncated.
func TestShortForeignFileIsBadMagic(t *testing.T) {
	_, err := DecodeHeader([]byte("hello\n"))
	require.ErrorIs(t, err, ErrBadMagic)
	require.NotErrorIs(t, err, ErrTruncated)
	_, err = DecodeHeader([]byte(Magic[:5]))
	require.ErrorIs(t, err, ErrTruncated)
	_, err = DecodeHeader([]byte(Magic + "\x01\x00"))
	require.ErrorIs(t, err, ErrTruncated)
}
