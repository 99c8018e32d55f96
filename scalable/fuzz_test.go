package scalable

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"testing"

	"github.com/zeebo/xxh3"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// Offsets in a header slot (docs/file-format.md §2 and §3).
const (
	offCapacity   = 56
	offStageCount = 104
	offGrowth     = 112
	offTightness  = 120
	offStages     = 128
	stageSize     = 56
	offChecksum   = mmapstore.SlotSize - 8
)

// reseal applies edit to both header slots of a copy of b and fixes their
// checksums, so that the edit reaches the checks behind the checksum.
func reseal(b []byte, edit func(slot []byte)) []byte {
	b = bytes.Clone(b)
	for s := 0; s < 2; s++ {
		slot := b[s*mmapstore.SlotSize : (s+1)*mmapstore.SlotSize]
		edit(slot)
		binary.LittleEndian.PutUint64(slot[offChecksum:], xxh3.Hash(slot[:offChecksum]))
	}
	return b
}

// stageField returns the bytes of field off of stage entry i in slot.
func stageField(slot []byte, i, off int) []byte { return slot[offStages+i*stageSize+off:] }

// corruptions are header edits, resealed, that describe a filter this
// package must refuse, with the error it gives.
var corruptions = []struct {
	name string
	edit func(s []byte)
}{
	{"no stages", func(s []byte) { binary.LittleEndian.PutUint32(s[offStageCount:], 0) }},
	{"71 stages", func(s []byte) { binary.LittleEndian.PutUint32(s[offStageCount:], 71) }},
	{"one stage more than the payload", func(s []byte) { binary.LittleEndian.PutUint32(s[offStageCount:], 5) }},
	{"stage m 0", func(s []byte) { binary.LittleEndian.PutUint64(stageField(s, 1, 8), 0) }},
	{"stage m not whole blocks", func(s []byte) { binary.LittleEndian.PutUint64(stageField(s, 1, 8), 3072+64) }},
	{"stage m huge", func(s []byte) { binary.LittleEndian.PutUint64(stageField(s, 3, 8), 1<<62) }},
	{"stage k 0", func(s []byte) { binary.LittleEndian.PutUint32(stageField(s, 2, 16), 0) }},
	{"stage k 65", func(s []byte) { binary.LittleEndian.PutUint32(stageField(s, 2, 16), 65) }},
	{"stage unblocked", func(s []byte) { binary.LittleEndian.PutUint32(stageField(s, 0, 20), 0) }},
	{"stage block 1024", func(s []byte) { binary.LittleEndian.PutUint32(stageField(s, 0, 20), 1024) }},
	{"stage offset", func(s []byte) { binary.LittleEndian.PutUint64(stageField(s, 2, 0), 64) }},
	{"stage rate NaN", func(s []byte) {
		binary.LittleEndian.PutUint64(stageField(s, 1, 32), math.Float64bits(math.NaN()))
	}},
	{"initial capacity 0", func(s []byte) { binary.LittleEndian.PutUint64(s[offCapacity:], 0) }},
	{"growth 0.5", func(s []byte) { binary.LittleEndian.PutUint64(s[offGrowth:], math.Float64bits(0.5)) }},
	{"tightening 1", func(s []byte) { binary.LittleEndian.PutUint64(s[offTightness:], math.Float64bits(1)) }},
	{"tightening NaN", func(s []byte) {
		binary.LittleEndian.PutUint64(s[offTightness:], math.Float64bits(math.NaN()))
	}},
}

// fuzzSeeds is the seed corpus, run by every `go test`: the golden file,
// truncations of it, bit flips in every header region, in the stage table
// and in each stage's payload, and the resealed corruptions above.
func fuzzSeeds(t testing.TB) [][]byte {
	good, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	seeds := [][]byte{good, nil, good[:8], good[:mmapstore.SlotSize], good[:mmapstore.HeaderSize],
		good[:mmapstore.HeaderSize+8], good[:len(good)-1], good[:len(good)-1600], append(bytes.Clone(good), 1, 2, 3)}
	for _, off := range []int{0, 8, 10, 12, 16, 24, 32, 40, 44, 48, 52, 56, 64, 72, 80, 88, 96, 104, 112, 120,
		offStages, offStages + 8, offStages + 16, offStages + 20, offStages + 24, offStages + stageSize + 8,
		offStages + 3*stageSize + 40, 4088, mmapstore.SlotSize + 200, mmapstore.HeaderSize,
		mmapstore.HeaderSize + 192 + 5, mmapstore.HeaderSize + 1200, len(good) - 1} {
		b := bytes.Clone(good)
		b[off] ^= 0x40
		seeds = append(seeds, b)
	}
	for _, c := range corruptions {
		seeds = append(seeds, reseal(good, c.edit))
	}
	seeds = append(seeds, reseal(good, func(s []byte) {
		binary.LittleEndian.PutUint32(s[52:], 0) // checksum not current
	}))
	return seeds
}

// exercise uses what only a scalable filter has on a filter that opened,
// after the shared fuzz bodies used what every variant has.
func exercise(t *testing.T, f *Filter) {
	f.Stages()
	f.Capacity()
	f.NumStages()
	f.Err()
}

// The fuzz bodies are filtertest's (typed errors only; what opens works,
// and what reads writes back to the same filter), with the seeds above.

func FuzzOpenReadOnly(f *testing.F) {
	filtertest.FuzzOpenReadOnly(f, variant, fuzzSeeds(f), exercise)
}

func FuzzReadFrom(f *testing.F) {
	filtertest.FuzzReadFrom(f, variant, fuzzSeeds(f), exercise)
}
