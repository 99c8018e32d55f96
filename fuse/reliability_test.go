package fuse

import (
	"flag"
	"math/rand/v2"
	"testing"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

var soak = flag.Bool("fuse.soak", false, "run the 10,000 random builds of issue 22 (several minutes)")

// TestRandomSets: random sets of 0 to 100,000 keys with duplicates (a
// random fraction of the keys repeated, in random order) all build and
// contain every key; the shard count varies too (a shard of as few as
// 1,000 keys). 10,000 builds with -fuse.soak, 300 by default, 30 with
// -short. The seed of each set is printed when it fails.
func TestRandomSets(t *testing.T) {
	builds := 300
	if *soak || filtertest.Long() { // .ci/run sets BLOOMKIT_LONG=1: about 7 minutes here
		builds = 10000
	} else if testing.Short() {
		builds = 30
	}
	r := rand.New(rand.NewPCG(22, 2022))
	shards := 0
	for b := range builds {
		seed := r.Uint64()
		s := rand.New(rand.NewPCG(seed, 1))
		n := s.IntN(100001)
		keys := keySet(seed, uint64(n))
		in := append([][]byte{}, keys...)
		if n > 0 {
			for range s.IntN(n/2 + 1) {
				in = append(in, keys[s.IntN(n)])
			}
		}
		s.Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
		p := []float64{0.01, 1e-3}[s.IntN(2)]
		opts := []Option{WithSeed(s.Uint64())}
		if s.IntN(3) == 0 {
			opts = append(opts, withShardKeys(uint64(1000+s.IntN(20000))))
		}
		f, err := Build(in, p, opts...)
		if err != nil {
			t.Fatalf("build %d (set seed %#x, %d keys): %v", b, seed, n, err)
		}
		if f.Added() != uint64(n) {
			t.Fatalf("build %d (set seed %#x): %d distinct keys, counted %d", b, seed, n, f.Added())
		}
		for i, k := range keys {
			if !f.Contains(k) {
				t.Fatalf("build %d (set seed %#x, %d keys): false negative for key %d", b, seed, n, i)
			}
		}
		shards += f.Shards()
	}
	t.Logf("%d builds, %d shards", builds, shards)
}
