package fuse

import (
	"testing"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

// The seed corpus, run by every `go test`, is filtertest.FuzzSeeds of the
// golden file (truncations, bit flips, re-checksummed headers with changed
// fields) and of the same file with shard-table bytes flipped.

func fuzzSeeds(f *testing.F) [][]byte {
	seeds := filtertest.GoldenSeeds(f, goldenPath)
	good := seeds[0]
	for _, off := range []int{0, 8, 16, 24, 32, 40, 48, 56, 60, 4096, 4200} {
		b := append([]byte(nil), good...)
		b[8192+off] ^= 0x11
		seeds = append(seeds, b)
	}
	return seeds
}

func FuzzOpenReadOnly(f *testing.F) {
	filtertest.FuzzOpenReadOnly(f, variant, fuzzSeeds(f), func(t *testing.T, g tf) {
		g.ContainsMany([][]byte{[]byte("a"), []byte("key-1")}, nil)
	})
}

func FuzzReadFrom(f *testing.F) {
	filtertest.FuzzReadFrom(f, variant, fuzzSeeds(f), func(t *testing.T, g tf) {
		g.ContainsMany([][]byte{[]byte("a"), []byte("key-1")}, nil)
	})
}
