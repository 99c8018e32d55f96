package counting

import (
	"bytes"
	"io"
	"testing"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// fuzzSeeds returns real filter files and damaged copies of them: cut at
// every interesting length, bits flipped in the header and the payload, and
// a file whose padding nibbles are set (a valid checksum over them); then
// filtertest.FuzzSeeds of the golden file.
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
	h := mmapstore.Header{Variant: mmapstore.Counting, M: 20, K: 2, CellBits: 4, Capacity: 6, TargetFPR: 0.1}
	buf.Reset()
	if _, err := mmapstore.WriteStream(&buf, h, []uint64{0x21, ^uint64(0)}); err != nil {
		f.Fatal(err)
	}
	seeds = append(seeds, buf.Bytes())
	return append(seeds, filtertest.GoldenSeeds(f, goldenPath)...)
}

// exercise runs the read-only operations only a counting filter has, on a
// filter that opened.
func exercise(t *testing.T, f *Filter) {
	for _, k := range []string{"a", "b", "zz", ""} {
		f.CountString(k)
	}
	f.SaturatedCounters()
	if _, err := f.ExportTo(io.Discard); err != nil {
		t.Fatalf("export of a filter that opened: %v", err)
	}
}

func FuzzOpenReadOnly(f *testing.F) {
	filtertest.FuzzOpenReadOnly(f, variant, fuzzSeeds(f), exercise)
}

func FuzzReadFrom(f *testing.F) {
	filtertest.FuzzReadFrom(f, variant, fuzzSeeds(f), exercise)
}
