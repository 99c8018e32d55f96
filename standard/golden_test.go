package standard

import (
	"testing"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/internal/hashing"
)

// The checked-in golden files, both format version 1: scheme 1's and scheme
// 2's. Rewrite them with -update only for a deliberate change, with a new
// version or scheme.
const (
	goldenPath  = "testdata/golden-v1.bloom"
	golden2Path = "testdata/golden-v1-scheme2.bloom"
)

// TestGolden opens the checked-in files: if the format, the hashing or the
// probing changes, they no longer answer as they were built to. Each holds
// keys key-0..key-999 at capacity 1000, p = 1%, seed 7.
func TestGolden(t *testing.T) {
	filtertest.Golden(t, variant,
		filtertest.KeysGolden(variant, "scheme1", goldenPath, hashing.Scheme1, 9600, 7, 113, 8192+1200, 0x5bd8789efa53c887, 4974),
		filtertest.KeysGolden(variant, "scheme2", golden2Path, hashing.Scheme2, 9600, 7, 86, 8192+1200, 0x12a60f15e2176460, 4930))
}
