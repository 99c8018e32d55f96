package window

import (
	"testing"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

// The seed corpus, run by every `go test`, is filtertest.FuzzSeeds of the
// golden file: truncations, bit flips in every header region (the window
// fields included) and the payload, and re-checksummed headers with
// changed fields. Every input must open or fail with a typed error, never
// panic, and a filter that opens must answer every method.

func FuzzOpenReadOnly(f *testing.F) {
	filtertest.FuzzOpenReadOnly(f, variant, filtertest.GoldenSeeds(f, goldenPath), fuzzExtra)
}

func FuzzReadFrom(f *testing.F) {
	filtertest.FuzzReadFrom(f, variant, filtertest.GoldenSeeds(f, goldenPath), fuzzExtra)
}

// fuzzExtra exercises what only this variant has on a filter that opened.
func fuzzExtra(t *testing.T, f *Filter) {
	f.Generation()
	f.Fill()
	f.Kept()
	f.Span()
	f.ContainsString("x")
	if !f.ReadOnly() {
		f.AddString("x")
		f.Builder().AddString("y")
	}
}
