package counting

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// fuzzSeeds returns real filter files and damaged copies of them: cut at
// every interesting length, bits flipped in the header and the payload, and
// a file whose padding nibbles are set (a valid checksum over them).
func fuzzSeeds(f *testing.F) [][]byte {
	var seeds [][]byte
	small, _ := NewWithSize(100, 3, WithSeed(1))
	for _, k := range []string{"a", "b", "c", "a"} {
		small.AddString(k)
	}
	var buf bytes.Buffer
	if _, err := small.WriteTo(&buf); err != nil {
		f.Fatal(err)
	}
	good := buf.Bytes()
	seeds = append(seeds, good)
	for _, n := range []int{0, 7, 8, 100, mmapstore.SlotSize, mmapstore.HeaderSize - 1, mmapstore.HeaderSize, len(good) - 1} {
		seeds = append(seeds, good[:n])
	}
	for _, off := range []int{8, 10, 32, 40, 48, 88, 96, mmapstore.SlotSize - 1, mmapstore.HeaderSize + 3} {
		b := bytes.Clone(good)
		b[off] ^= 0x01
		b[mmapstore.SlotSize+off%mmapstore.SlotSize] ^= 0x01
		seeds = append(seeds, b)
	}
	h := mmapstore.Header{Variant: mmapstore.Counting, M: 20, K: 2, CellBits: 4, Capacity: 6, TargetP: 0.1}
	buf.Reset()
	if _, err := mmapstore.WriteStream(&buf, h, []uint64{0x21, ^uint64(0)}); err != nil {
		f.Fatal(err)
	}
	seeds = append(seeds, buf.Bytes())
	if golden, err := os.ReadFile(goldenPath); err == nil {
		seeds = append(seeds, golden)
	}
	return seeds
}

// typed reports whether err is one of the errors a damaged file or stream
// may produce; anything else (or a panic) is a bug.
func typed(err error) bool {
	for _, want := range []error{mmapstore.ErrTruncated, mmapstore.ErrBadMagic, mmapstore.ErrVersion,
		mmapstore.ErrHeaderChecksum, mmapstore.ErrCorrupt, mmapstore.ErrVariant, mmapstore.ErrHash,
		mmapstore.ErrTooLarge, mmapstore.ErrPayloadChecksum, io.ErrUnexpectedEOF} {
		if errors.Is(err, want) {
			return true
		}
	}
	return false
}

// exercise runs every read-only operation on a filter that opened.
func exercise(t *testing.T, f *Filter) {
	for _, k := range []string{"a", "b", "zz", ""} {
		f.ContainsString(k)
		f.CountString(k)
	}
	f.FillRatio()
	f.ApproxCount()
	f.SaturatedCounters()
	if _, err := f.ExportTo(io.Discard); err != nil {
		t.Fatalf("export of a filter that opened: %v", err)
	}
}

func FuzzOpenReadOnly(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "fuzz.bloom")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := OpenReadOnly(path)
		if err != nil {
			if !typed(err) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		defer r.Close()
		exercise(t, r)
		if err := r.Verify(); err != nil && !errors.Is(err, mmapstore.ErrPayloadChecksum) && !errors.Is(err, mmapstore.ErrChecksumStale) {
			t.Fatalf("Verify: %v", err)
		}
	})
}

func FuzzReadFrom(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := ReadFrom(bytes.NewReader(data))
		if err != nil {
			if !typed(err) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		exercise(t, g)
		// What was read writes back and reads again to the same filter.
		var out bytes.Buffer
		if _, err := g.WriteTo(&out); err != nil {
			t.Fatalf("WriteTo of a filter that was read: %v", err)
		}
		h, err := ReadFrom(&out)
		if err != nil {
			t.Fatalf("reading back: %v", err)
		}
		if h.geom != g.geom || !slices.Equal(h.words, g.words) {
			t.Fatal("round trip changed the filter")
		}
	})
}
