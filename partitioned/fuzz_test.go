package partitioned

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/zeebo/xxh3"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// fuzzSeeds is the seed corpus, run by every `go test`: the golden file,
// truncations of it, bit flips in every header region and the payload, and
// headers whose fields were changed and then re-checksummed, so that the
// fuzzer starts past the checksum and reaches the geometry checks.
func fuzzSeeds(t testing.TB) [][]byte {
	good, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
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

// exercise uses a filter that opened, to show no accepted input can make a
// query read out of bounds.
func exercise(f *Filter) {
	for _, k := range []string{"", "a", "key-1", "other-5"} {
		f.ContainsString(k)
	}
	_ = f.Verify()
	f.ApproxCount()
	f.EstimatedFPR()
}

func FuzzOpenReadOnly(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "fuzz.bloom")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := OpenReadOnly(path)
		if err != nil {
			return
		}
		exercise(r)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzReadFrom(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ReadFrom(bytes.NewReader(data))
		if err != nil {
			return
		}
		exercise(r)
		// What was accepted writes back to a stream that reads the same.
		var buf bytes.Buffer
		if _, err := r.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		again, err := ReadFrom(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if r.geom != again.geom || len(r.words) != len(again.words) {
			t.Fatal("round trip changed the filter")
		}
	})
}
