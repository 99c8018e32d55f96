package blocked

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/prefetch"
)

// BenchmarkWarmWays looks up random digests in groups (ContainsBatch) on
// 512-bit-block filters of 4 MB to 1 GB, half their bits set, warming the
// next group with loads (warm=load) or with prefetch instructions
// (warm=prefetch, amd64 only), 4,600 digests a call (a chunk of
// bloomkit's line pipeline). ns/key is per digest.
func BenchmarkWarmWays(b *testing.B) {
	for _, mb := range []uint64{4, 12, 32, 64, 256, 1024} {
		blocks := mb << 20 / (BlockWords * 8)
		f := Filter{Words: make([]uint64, blocks*BlockWords), Blocks: blocks, K: 6}
		r := rand.New(rand.NewPCG(mb, 1))
		for i := range f.Words {
			f.Words[i] = r.Uint64()
		}
		ds := make([]hashing.Digest, 1<<20)
		for i := range ds {
			ds[i] = hashing.Digest{H1: r.Uint64(), H2: r.Uint64() | 1}
		}
		found := make([]bool, 4600)
		for _, way := range []string{"load", "prefetch"} {
			if way == "prefetch" && !prefetch.Available {
				continue
			}
			b.Run(fmt.Sprintf("size=%dMB/warm=%s", mb, way), func(b *testing.B) {
				old := usePrefetch
				usePrefetch = way == "prefetch"
				defer func() { usePrefetch = old }()
				i := 0
				for b.Loop() {
					if i+4600 > len(ds) {
						i = 0
					}
					f.ContainsBatch(ds[i:i+4600], found)
					i += 4600
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*4600), "ns/key")
			})
		}
	}
}
