package bloomkit_test

import (
	"fmt"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/standard"
)

// Hash a key once and test it against several shards that share a scheme
// and a seed.
func ExampleHash() {
	var shards [4]*standard.Filter
	for i := range shards {
		shards[i], _ = standard.New(1000, 0.01)
	}
	d := shards[0].HashString("user:42") // the same digest for every shard
	if d != bloomkit.HashString(bloomkit.DefaultScheme, "user:42", standard.DefaultSeed) {
		panic("the shards hash with the default scheme and seed")
	}
	shards[d.H1%4].AddDigest(d)

	found := 0
	for _, s := range shards {
		if s.ContainsDigest(d) {
			found++
		}
	}
	fmt.Println(found, shards[d.H1%4].ContainsString("user:42"))
	// Output: 1 true
}
