package redisstore

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
)

// benchFilter returns a filter of 1e6 keys at p = 1e-4 on the shared server,
// with the first half of keys(0, 1e6) added.
func benchFilter(b *testing.B, c redis.UniversalClient) *Filter {
	ctx := context.Background()
	name := filterName(b)
	_ = Delete(ctx, c, name)
	f, err := Create(ctx, c, name, 1_000_000, 1e-4)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { Delete(context.Background(), c, name) })
	return f
}

// BenchmarkFilter measures Add and Contains through Redis, one key per round
// trip and in pipelined batches. ns/op is per key; keys/s is the throughput
// of one client goroutine.
func BenchmarkFilter(b *testing.B) {
	c := client(b)
	ctx := context.Background()
	for _, batch := range []int{1, 100, 1000} {
		for _, op := range []string{"add", "contains"} {
			b.Run(fmt.Sprintf("op=%s/batch=%d", op, batch), func(b *testing.B) {
				f := benchFilter(b, c)
				ks := keys(0, 100_000)
				found := make([]bool, batch)
				if op == "contains" {
					if _, err := f.AddMany(ctx, ks[:50_000]); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				done := 0
				for done < b.N {
					n := min(batch, b.N-done)
					lo := done % (len(ks) - batch)
					var err error
					switch {
					case op == "add" && batch == 1:
						_, err = f.Add(ctx, ks[lo])
					case op == "add":
						_, err = f.AddMany(ctx, ks[lo:lo+n])
					case batch == 1:
						_, err = f.Contains(ctx, ks[lo])
					default:
						err = f.ContainsMany(ctx, ks[lo:lo+n], found)
					}
					if err != nil {
						b.Fatal(err)
					}
					done += n
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "keys/s")
			})
		}
	}
}
