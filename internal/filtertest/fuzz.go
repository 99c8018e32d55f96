package filtertest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/zeebo/xxh3"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// FuzzSeeds returns a seed corpus made from good, a valid filter file:
// good itself, truncations of it, bit flips in every header region and the
// payload, and headers whose fields were changed and then re-checksummed, so
// that the fuzzer starts past the checksum and reaches the geometry checks.
func FuzzSeeds(good []byte) [][]byte {
	seeds := [][]byte{good, nil, good[:8], good[:mmapstore.SlotSize], good[:mmapstore.HeaderSize],
		good[:mmapstore.HeaderSize+8], good[:len(good)-1], append(bytes.Clone(good), 1, 2, 3)}
	for _, off := range []int{0, 8, 10, 12, 16, 24, 32, 40, 44, 48, 52, 56, 64, 72, 80, 88, 96, 104, 4088,
		mmapstore.SlotSize + 32, mmapstore.HeaderSize, len(good) - 1} {
		b := bytes.Clone(good)
		b[off] ^= 0x40
		seeds = append(seeds, b)
	}
	le := binary.LittleEndian
	resealed := func(edit func(slot []byte)) []byte {
		b := bytes.Clone(good)
		for s := 0; s < 2; s++ {
			slot := b[s*mmapstore.SlotSize : (s+1)*mmapstore.SlotSize]
			edit(slot)
			le.PutUint64(slot[4088:], xxh3.Hash(slot[:4088]))
		}
		return b
	}
	for _, edit := range []func([]byte){
		func(s []byte) { le.PutUint64(s[32:], 0) },                            // m = 0
		func(s []byte) { le.PutUint64(s[32:], math.MaxUint64) },               // m huge
		func(s []byte) { le.PutUint64(s[32:], 9601) },                         // m vs payload
		func(s []byte) { le.PutUint32(s[40:], 0) },                            // k = 0
		func(s []byte) { le.PutUint32(s[40:], 1000) },                         // k huge
		func(s []byte) { le.PutUint64(s[88:], 1<<62) },                        // payload length
		func(s []byte) { le.PutUint64(s[80:], 4096) },                         // payload offset
		func(s []byte) { le.PutUint16(s[10:], 2) },                            // variant
		func(s []byte) { le.PutUint16(s[12:], 9) },                            // hash algorithm
		func(s []byte) { le.PutUint32(s[52:], 0) },                            // checksum not current
		func(s []byte) { le.PutUint32(s[104:], 200) },                         // stage count
		func(s []byte) { le.PutUint64(s[64:], math.Float64bits(math.NaN())) }, // p
	} {
		seeds = append(seeds, resealed(edit))
	}
	return seeds
}

// GoldenSeeds is FuzzSeeds of the file at path (a package's golden file).
func GoldenSeeds(tb testing.TB, path string) [][]byte {
	tb.Helper()
	good, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return FuzzSeeds(good)
}

// Typed reports whether err is one of the errors a damaged file or stream
// may produce; anything else is a bug.
func Typed(err error) bool {
	for _, want := range []error{mmapstore.ErrTruncated, mmapstore.ErrBadMagic, mmapstore.ErrVersion,
		mmapstore.ErrHeaderChecksum, mmapstore.ErrCorrupt, mmapstore.ErrVariant, mmapstore.ErrScheme,
		mmapstore.ErrTooLarge, mmapstore.ErrPayloadChecksum, io.ErrUnexpectedEOF} {
		if errors.Is(err, want) {
			return true
		}
	}
	return false
}

// exercise runs the read-only operations every variant has on a filter that
// opened, to show no accepted input can make a query read out of bounds,
// then the variant's own (extra, which may be nil).
func exercise[F Stream[F]](t *testing.T, f F, extra func(*testing.T, F)) {
	for _, k := range []string{"", "a", "b", "zz", "key-1", "other-5"} {
		f.ContainsString(k)
	}
	f.ApproxCount()
	f.FillRatio()
	f.EstimatedFPR()
	if err := f.Verify(); err != nil && !errors.Is(err, mmapstore.ErrPayloadChecksum) && !errors.Is(err, mmapstore.ErrChecksumStale) {
		t.Fatalf("Verify: %v", err)
	}
	if extra != nil {
		extra(t, f)
	}
}

// FuzzOpenReadOnly is the body of a variant's FuzzOpenReadOnly: any bytes
// written to a file either fail to open with a typed error or open to a
// filter whose every read-only operation (extra: the variant's own) works.
func FuzzOpenReadOnly[F Stream[F]](f *testing.F, v Variant[F], seeds [][]byte, extra func(*testing.T, F)) {
	for _, s := range seeds {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "fuzz.bloom")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := v.OpenReadOnly(path)
		if err != nil {
			if !Typed(err) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		exercise(t, r, extra)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzReadFrom is the body of a variant's FuzzReadFrom: any stream either
// fails with a typed error or reads to a filter that works (extra: the
// variant's own checks) and writes back to a stream that reads the same.
func FuzzReadFrom[F Stream[F]](f *testing.F, v Variant[F], seeds [][]byte, extra func(*testing.T, F)) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := v.ReadFrom(bytes.NewReader(data))
		if err != nil {
			if !Typed(err) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		exercise(t, g, extra)
		// What was read writes back and reads again to the same filter.
		var out bytes.Buffer
		if _, err := g.WriteTo(&out); err != nil {
			t.Fatalf("WriteTo of a filter that was read: %v", err)
		}
		h, err := v.ReadFrom(&out)
		if err != nil {
			t.Fatalf("reading back: %v", err)
		}
		if v.Geometry(h) != v.Geometry(g) || !slices.Equal(v.Words(h), v.Words(g)) {
			t.Fatal("round trip changed the filter")
		}
	})
}
