package partitioned

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
		filtertest.KeysGolden(variant, "scheme1", goldenPath, hashing.Scheme1, 10240, 5, 97, 8192+1280, 0x57992cb1b03d01dd, 3993),
		filtertest.KeysGolden(variant, "scheme2", golden2Path, hashing.Scheme2, 10240, 5, 113, 8192+1280, 0x31847cd89b4ef955, 3958))
}
