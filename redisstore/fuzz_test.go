package redisstore

import (
	"testing"

	"github.com/bloomkit/bloomkit"
)

// FuzzDecodeHeader feeds arbitrary field values to the header decoder: it
// must never panic, and whatever it accepts must describe a filter that
// can be served (whole blocks, segments of whole blocks, a valid file
// header).
func FuzzDecodeHeader(f *testing.F) {
	f.Add("1", "2", "1", "0", "9728", "6", "512", "1000", "0.01", "1048576", "7", "0")
	f.Add("1", "2", "1", "18446744073709551615", "72057594037927936", "64", "512", "1", "1e-300", "536870912", "1", "1")
	f.Add("2", "2", "1", "0", "512", "1", "512", "1", "0.5", "64", "1", "0")
	f.Add("1", "1", "1", "0", "100", "1", "0", "1", "NaN", "0", "", "x")
	f.Fuzz(func(t *testing.T, layout, variant, hash, seed, m, k, blockBits, capacity, targetP, segBytes, gen, base string) {
		fields := map[string]string{}
		for i, v := range []string{layout, variant, hash, seed, m, k, blockBits, capacity, targetP, segBytes, gen, base} {
			if v != "" {
				fields[headerFields[i]] = v
			}
		}
		h, err := decodeHeader("fuzz", fields)
		if err != nil {
			return
		}
		fh := h.fileHeader()
		fh.Scheme = bloomkit.Scheme1 // Validate checks the geometry; decodeHeader the scheme
		if err := fh.Validate(); err != nil {
			t.Fatalf("accepted a header whose file header is invalid: %v", err)
		}
		if !h.scheme.Valid() {
			t.Fatalf("accepted hash scheme %d", h.scheme)
		}
		bits := h.first().m
		if h.segments() > MaxSegments || bits%512 != 0 || h.segBytes%64 != 0 || h.segBytes == 0 || h.segments() == 0 {
			t.Fatalf("accepted a bad geometry: %+v", h)
		}
		var total uint64
		for i := uint64(0); i < h.segsPerUnit(0); i++ {
			if l := h.segLen(0, i); l == 0 || l%64 != 0 {
				t.Fatalf("segment %d of %d bytes", i, l)
			}
			total += h.segLen(0, i)
			if total > bits/8 || i > 1<<20 {
				break
			}
		}
	})
}
