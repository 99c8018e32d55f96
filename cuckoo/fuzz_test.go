package cuckoo

import (
	"bytes"
	"testing"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// fuzzSeeds returns real filter files and damaged copies of them: a small
// filter cut at every interesting length, bits flipped in both header
// slots and the payload, a file whose padding bits are set (a valid
// checksum over them), then filtertest.FuzzSeeds of both golden files.
func fuzzSeeds(f *testing.F) [][]byte {
	var seeds [][]byte
	small, _ := New(10, 0.1, WithSeed(1))
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
	for _, off := range []int{8, 10, 32, 40, 48, 88, 96, 128, mmapstore.SlotSize - 1, mmapstore.HeaderSize + 3} {
		b := bytes.Clone(good)
		b[off] ^= 0x01
		b[mmapstore.SlotSize+off%mmapstore.SlotSize] ^= 0x01
		seeds = append(seeds, b)
	}
	// 3 buckets of 5-bit fingerprints: 60 bits, the top 4 of the word are
	// padding, set here.
	h := mmapstore.Header{Variant: mmapstore.Cuckoo, M: 3, K: BucketSize, CellBits: 5, Capacity: 10, TargetFPR: 0.5,
		MaxKicks: 3, PayloadLen: 8}
	buf.Reset()
	if _, err := mmapstore.WriteStream(&buf, h, []uint64{^uint64(0)}); err != nil {
		f.Fatal(err)
	}
	seeds = append(seeds, buf.Bytes())
	seeds = append(seeds, filtertest.GoldenSeeds(f, goldenPath)...)
	return append(seeds, filtertest.GoldenSeeds(f, goldenWidePath)...)
}

// exercise runs the operations only a cuckoo filter has, on a filter that
// opened: lookups by count, and (on a writable copy) adds, removes and a
// full search, none of which may read or write outside the table.
func exercise(t *testing.T, f *Filter) {
	for _, k := range []string{"a", "b", "zz", ""} {
		f.CountString(k)
	}
	if f.ReadOnly() {
		var buf bytes.Buffer
		if _, err := f.WriteTo(&buf); err != nil {
			return
		}
		g, err := ReadFrom(&buf)
		if err != nil {
			return // a payload the mapping took but its checksum refuses
		}
		f = g
	}
	for i := range 64 {
		k := string(rune('a' + i%26))
		f.TryAddString(k)
		f.AddNXString(k + k)
		if i%3 == 0 {
			f.RemoveString(k)
		}
	}
	f.ApproxCount()
}

func FuzzOpenReadOnly(f *testing.F) {
	filtertest.FuzzOpenReadOnly(f, variant, fuzzSeeds(f), exercise)
}

func FuzzReadFrom(f *testing.F) {
	filtertest.FuzzReadFrom(f, variant, fuzzSeeds(f), exercise)
}
