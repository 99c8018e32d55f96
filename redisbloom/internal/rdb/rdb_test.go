package rdb

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// Payloads DUMPed by Redis 7.0.15 with RedisBloom 2.6.28: a string (LZF
// compressed), BF.RESERVE b 0.01 100 with 30 adds, CF.RESERVE c 100.
var (
	dumpString = []byte("\x00\xc3\x13@@\x03abca\xe0\x1d\x02\x03-xyz\xe0\x07\x02\x01yz\n\x00\x18'\x12\x0c\\\xa1\xf2\x84")
	dumpCF     = []byte("\x07\x810\x16\xe5\xa2\x89\x82\x14\x04\x02\x01\x02@@\x02\x00\x02\x00\x02\x02\x02\x14\x02\x01\x02@@\x05\xc3\t@\x80\x01\x00\x00\xe0s\x00\x01\x00\x00\x00\n\x00\xe70Lr\n\x17\xc5\"")
)

func TestCRC64(t *testing.T) {
	// Redis's own check value (crc64.c's test).
	require.Equal(t, uint64(0xe9c6d914c4b8d9ca), CRC64([]byte("123456789")))
}

func TestOpenRealPayloads(t *testing.T) {
	for _, p := range [][]byte{dumpString, dumpCF} {
		body, err := Open(p)
		require.NoError(t, err)
		require.Len(t, body, len(p)-10)
	}
	bad := append([]byte(nil), dumpCF...)
	bad[12] ^= 1
	_, err := Open(bad)
	require.ErrorIs(t, err, ErrChecksum)
	_, err = Open(dumpCF[:9])
	require.ErrorIs(t, err, ErrChecksum)
	newer := append([]byte(nil), dumpCF...)
	newer[len(newer)-10] = MaxVersion + 1 // a version this reader does not know, CRC made right
	newer = Seal(newer[:len(newer)-10])
	newer[len(newer)-10] = MaxVersion + 1
	_, err = Open(newer)
	require.ErrorIs(t, err, ErrChecksum)
}

func TestLZF(t *testing.T) {
	body, err := Open(dumpString)
	require.NoError(t, err)
	// type 0 (a string), 0xc3 (LZF), compressed 19, original 64
	require.Equal(t, []byte{0x00, 0xc3, 0x13, 0x40, 0x40}, body[:5])
	out, err := lzfDecompress(body[5:5+19], 64)
	require.NoError(t, err)
	require.Equal(t, "abcabcabcabcabcabcabcabcabcabcabcabcabcabc-xyzxyzxyzxyzxyzxyzxyz", string(out))
	for cut := 0; cut < 19; cut++ {
		_, err := lzfDecompress(body[5:5+cut], 64)
		require.Error(t, err, "cut at %d", cut)
	}
	_, err = lzfDecompress(body[5:5+19], 63)
	require.Error(t, err)
	_, err = lzfDecompress([]byte{0x20, 0x05}, 10) // a reference before the start
	require.Error(t, err)
}

func TestModuleID(t *testing.T) {
	id, err := ModuleID("MBbloom--", 4)
	require.NoError(t, err)
	require.Equal(t, uint64(0x3016e5a289bef804), id)
	id, err = ModuleID("MBbloomCF", 4)
	require.NoError(t, err)
	require.Equal(t, uint64(0x3016e5a289821404), id)
	_, err = ModuleID("short", 4)
	require.ErrorIs(t, err, ErrPayload)
	_, err = ModuleID("MBbloom!!", 4)
	require.ErrorIs(t, err, ErrPayload)
}

// TestReadRealCF reads the fields RedisBloom's CFRdbSave wrote for
// CF.RESERVE c 100: one filter of 64 buckets of 2, the data LZF compressed.
func TestReadRealCF(t *testing.T) {
	body, err := Open(dumpCF)
	require.NoError(t, err)
	r := NewReader(body)
	id, err := r.ModuleHeader()
	require.NoError(t, err)
	require.Equal(t, uint64(0x3016e5a289821404), id)
	var got []uint64
	for range 7 {
		v, err := r.Uint()
		require.NoError(t, err)
		got = append(got, v)
	}
	require.Equal(t, []uint64{1, 64, 0, 0, 2, 20, 1}, got) // filters, buckets, items, deletes, bucket size, max iterations, expansion
	nb, err := r.Uint()
	require.NoError(t, err)
	require.Equal(t, uint64(64), nb)
	_, err = r.String(64) // 128 bytes of data: more than the limit
	require.ErrorIs(t, err, ErrPayload)
	r = NewReader(body)
	_, _ = r.ModuleHeader()
	for range 8 {
		_, _ = r.Uint()
	}
	data, err := r.String(128)
	require.NoError(t, err)
	require.Equal(t, make([]byte, 128), data)
	require.NoError(t, r.EOF())
}

func TestWriterRoundTrip(t *testing.T) {
	id, _ := ModuleID("MBbloom--", 4)
	for _, v := range []uint64{0, 63, 64, 16383, 16384, 1<<32 - 1, 1 << 32, 1<<64 - 1} {
		w := NewWriter(id)
		w.Uint(v)
		w.Double(0.001)
		w.String([]byte("some bytes"))
		p := Seal(w.Bytes())
		body, err := Open(p)
		require.NoError(t, err)
		r := NewReader(body)
		got, err := r.ModuleHeader()
		require.NoError(t, err)
		require.Equal(t, id, got)
		u, err := r.Uint()
		require.NoError(t, err)
		require.Equal(t, v, u)
		d, err := r.Double()
		require.NoError(t, err)
		require.Equal(t, 0.001, d)
		s, err := r.String(100)
		require.NoError(t, err)
		require.Equal(t, "some bytes", string(s))
		require.NoError(t, r.EOF())
	}
}

func TestReaderRefusals(t *testing.T) {
	id, _ := ModuleID("MBbloom--", 4)
	w := NewWriter(id)
	w.Uint(5)
	body := w.Bytes()
	r := NewReader(body)
	_, _ = r.ModuleHeader()
	_, err := r.Double() // a uint where a double is asked for
	require.ErrorIs(t, err, ErrPayload)
	r = NewReader(body[:3])
	_, err = r.ModuleHeader()
	require.ErrorIs(t, err, ErrPayload)
	r = NewReader([]byte{0})
	_, err = r.ModuleHeader()
	require.ErrorIs(t, err, ErrPayload)
	// A string that claims 2^40 bytes: refused before any allocation.
	huge := append([]byte{TypeModule2, 1, opString, 0x81}, 0, 0, 1, 0, 0, 0, 0, 0)
	r = NewReader(huge)
	_, _ = r.ModuleHeader()
	_, err = r.String(1 << 50)
	require.True(t, errors.Is(err, ErrPayload))
}

func FuzzReader(f *testing.F) {
	body, _ := Open(dumpCF)
	f.Add(body)
	f.Fuzz(func(t *testing.T, p []byte) {
		r := NewReader(p)
		if _, err := r.ModuleHeader(); err != nil {
			return
		}
		for i := 0; i < 16; i++ {
			if _, err := r.Uint(); err != nil {
				if _, err := r.String(1 << 16); err != nil {
					return
				}
			}
		}
	})
}
