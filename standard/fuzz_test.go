package standard

import (
	"testing"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

// The seed corpus, run by every `go test`, is filtertest.FuzzSeeds of the
// golden file: truncations, bit flips in every header region and the
// payload, and re-checksummed headers with changed fields.

func FuzzOpenReadOnly(f *testing.F) {
	filtertest.FuzzOpenReadOnly(f, variant, filtertest.GoldenSeeds(f, goldenPath), nil)
}

func FuzzReadFrom(f *testing.F) {
	filtertest.FuzzReadFrom(f, variant, filtertest.GoldenSeeds(f, goldenPath), nil)
}
