package benchmarks

import (
	"github.com/bloomkit/bloomkit/fuse"
)

// bloomkitFuse is bloomkit's static binary fuse filter (sharded, mapped from
// its file) to the harness: Face, whose Add panics. Build collects the keys
// and calls fuse.Build.
func bloomkitFuse(f *fuse.Filter) Filter { return Face(f, FaceOptions{}) }

func buildBloomkitFuse(p float64) func(keys KeySource, n uint64) (Filter, error) {
	return func(keys KeySource, n uint64) (Filter, error) {
		all := make([][]byte, 0, n)
		for c := keys.Next(); c != nil; c = keys.Next() {
			for _, k := range c {
				all = append(all, append([]byte(nil), k...))
			}
		}
		f, err := fuse.Build(all, p)
		if err != nil {
			return nil, err
		}
		return bloomkitFuse(f), nil
	}
}

func init() {
	register(&Variant{
		Name:              "fuse",
		Library:           "github.com/bloomkit/bloomkit/fuse",
		Kind:              KindStatic,
		Ours:              true,
		Design:            "binary fuse filter, 8-bit fingerprints, sharded by digest prefix (static, built in parallel)",
		ConcurrentLookups: true,
		Build:             buildBloomkitFuse(fuse.Rate8),
		Rate:              fuse.Rate8,
		Open:              openFace,
	})
	register(&Variant{
		Name:              "fuse-16",
		Library:           "github.com/bloomkit/bloomkit/fuse",
		Kind:              KindStatic,
		Ours:              true,
		Design:            "binary fuse filter, 16-bit fingerprints, sharded by digest prefix (static, built in parallel)",
		ConcurrentLookups: true,
		Build:             buildBloomkitFuse(fuse.Rate16),
		Rate:              fuse.Rate16,
		Open:              openFace,
	})
}
