package compare

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/bloom"
	"github.com/zeromicro/go-zero/core/logx"
	zredis "github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/bloomkit/bloomkit/redisstore"
	"github.com/bloomkit/bloomkit/redisstore/redistest"
)

const (
	// n is the capacity of both filters. go-zero sizes by bits: its doc
	// recommends 20 bits per item with its fixed 14 probes, a rate of
	// (1 - e^(-14/20))^14 = 6.7e-5; redisstore gets the same target rate.
	n       = 1_000_000
	zeroP   = 6.7e-5
	keyPool = 200_000
)

var server *redistest.Server

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	logx.Disable()
	return redistest.Main(m, "redisstore-compare-", &server)
}

// filters is one redisstore filter and one go-zero filter on the server.
type filters struct {
	ours *redisstore.Filter
	zero *bloom.Filter
	keys [][]byte
}

func setup(tb testing.TB, tag string) *filters {
	tb.Helper()
	if server == nil {
		tb.Skipf("redis-server not installed and %s=1", redistest.SkipEnv)
	}
	ctx := context.Background()
	c := goredis.NewClient(&goredis.Options{Addr: server.Addr})
	tb.Cleanup(func() { c.Close() })
	name := "compare:" + tag
	_ = redisstore.Delete(ctx, c, name)
	ours, err := redisstore.Create(ctx, c, name, n, zeroP)
	if err != nil {
		tb.Fatal(err)
	}
	zkey := "compare:gozero:" + tag
	c.Del(ctx, zkey)
	zero := bloom.New(zredis.MustNewRedis(zredis.RedisConf{Host: server.Addr, Type: zredis.NodeType}), zkey, 20*n)
	ks := make([][]byte, keyPool)
	for i := range ks {
		k := binary.LittleEndian.AppendUint64(make([]byte, 0, 16), uint64(i)*0x9e3779b97f4a7c15)
		ks[i] = binary.LittleEndian.AppendUint64(k, uint64(i))
	}
	return &filters{ours: ours, zero: zero, keys: ks}
}

// op runs count keys from keys[lo:] through one library and operation,
// batch keys per call (go-zero has no batch call: batch must be 1).
func (f *filters) op(tb testing.TB, lib, op string, batch, lo, count int) {
	ctx := context.Background()
	found := make([]bool, batch)
	for done := 0; done < count; done += batch {
		i := (lo + done) % (len(f.keys) - batch)
		var err error
		switch {
		case lib == "go-zero" && op == "add":
			err = f.zero.AddCtx(ctx, f.keys[i])
		case lib == "go-zero":
			_, err = f.zero.ExistsCtx(ctx, f.keys[i])
		case op == "add" && batch == 1:
			_, err = f.ours.Add(ctx, f.keys[i])
		case op == "add":
			_, err = f.ours.AddMany(ctx, f.keys[i:i+batch])
		case batch == 1:
			_, err = f.ours.Contains(ctx, f.keys[i])
		default:
			err = f.ours.ContainsMany(ctx, f.keys[i:i+batch], found)
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// opConcurrent runs count single-key calls from clients goroutines at once.
func (f *filters) opConcurrent(tb testing.TB, lib, op string, clients, lo, count int) {
	var wg sync.WaitGroup
	per := count / clients
	for g := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.op(tb, lib, op, 1, lo+g*per, per)
		}()
	}
	wg.Wait()
}

// prefill adds the first half of the key pool to both filters, so that
// Contains sees hits and misses.
func (f *filters) prefill(tb testing.TB) {
	f.op(tb, "bloomkit", "add", 1000, 0, keyPool/2)
	for i := 0; i < keyPool/2; i += 1 {
		if i%20 == 0 { // go-zero has no batch; a sample keeps setup short
			if err := f.zero.AddCtx(context.Background(), f.keys[i]); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// BenchmarkThroughput measures each library alone: ns/op and keys/s are per
// key, one client goroutine.
func BenchmarkThroughput(b *testing.B) {
	for _, c := range []struct {
		lib   string
		batch int
	}{{"go-zero", 1}, {"bloomkit", 1}, {"bloomkit", 100}, {"bloomkit", 1000}} {
		for _, op := range []string{"add", "contains"} {
			b.Run(fmt.Sprintf("lib=%s/op=%s/batch=%d", c.lib, op, c.batch), func(b *testing.B) {
				f := setup(b, fmt.Sprintf("%s-%s-%d", c.lib, op, c.batch))
				if op == "contains" {
					f.prefill(b)
				}
				b.ResetTimer()
				f.op(b, c.lib, op, c.batch, 0, b.N)
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "keys/s")
			})
		}
	}
	// Single calls from many goroutines at once: the server's work per
	// call, not the round trip, bounds the throughput.
	for _, lib := range []string{"go-zero", "bloomkit"} {
		for _, op := range []string{"add", "contains"} {
			b.Run(fmt.Sprintf("lib=%s/op=%s/batch=1/clients=%d", lib, op, clients), func(b *testing.B) {
				f := setup(b, fmt.Sprintf("%s-%s-c", lib, op))
				if op == "contains" {
					f.prefill(b)
				}
				b.ResetTimer()
				f.opConcurrent(b, lib, op, clients, 0, max(b.N, clients))
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "keys/s")
			})
		}
	}
}

// clients is the number of goroutines of the concurrent measurements.
const clients = 8

// BenchmarkRatio interleaves the libraries: each of its b.N rounds times
// roundKeys keys through go-zero and through bloomkit back to back, and it
// reports the median over rounds of bloomkit's throughput over go-zero's:
// x-single for single calls from one goroutine (both libraries), x-batchN
// for bloomkit's batches of N against go-zero's single calls (it has no
// batch call), x-clients8 for single calls from 8 goroutines (both). On a
// noisy machine these ratios are steadier than separate benchmarks.
func BenchmarkRatio(b *testing.B) {
	const roundKeys = 1000
	for _, op := range []string{"add", "contains"} {
		b.Run("op="+op, func(b *testing.B) {
			f := setup(b, "ratio-"+op)
			if op == "contains" {
				f.prefill(b)
			}
			names := []string{"x-single", "x-batch100", "x-batch1000", fmt.Sprintf("x-clients%d", clients)}
			ratios := make([][]float64, len(names))
			timed := func(run func()) float64 {
				t0 := time.Now()
				run()
				return time.Since(t0).Seconds()
			}
			// A warm-up round: connections dialled, scripts loaded.
			f.op(b, "go-zero", op, 1, 0, 100)
			f.opConcurrent(b, "go-zero", op, clients, 0, 100)
			f.op(b, "bloomkit", op, 1, 0, 100)
			f.opConcurrent(b, "bloomkit", op, clients, 0, 100)
			b.ResetTimer()
			for r := 0; r < b.N; r++ {
				lo := r * roundKeys * 6
				zero := timed(func() { f.op(b, "go-zero", op, 1, lo, roundKeys) })
				zeroPar := timed(func() { f.opConcurrent(b, "go-zero", op, clients, lo+roundKeys, roundKeys) })
				ours := []float64{
					timed(func() { f.op(b, "bloomkit", op, 1, lo+2*roundKeys, roundKeys) }),
					timed(func() { f.op(b, "bloomkit", op, 100, lo+3*roundKeys, roundKeys) }),
					timed(func() { f.op(b, "bloomkit", op, 1000, lo+4*roundKeys, roundKeys) }),
					timed(func() { f.opConcurrent(b, "bloomkit", op, clients, lo+5*roundKeys, roundKeys) }),
				}
				for j := range names {
					base := zero
					if j == len(names)-1 {
						base = zeroPar
					}
					ratios[j] = append(ratios[j], base/ours[j])
				}
			}
			for j, name := range names {
				b.ReportMetric(median(ratios[j]), name)
			}
		})
	}
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// TestSameAnswers checks the comparison is of working filters: every added
// key is found by both.
func TestSameAnswers(t *testing.T) {
	f := setup(t, "answers")
	ctx := context.Background()
	for _, k := range f.keys[:500] {
		if _, err := f.ours.Add(ctx, k); err != nil {
			t.Fatal(err)
		}
		if err := f.zero.AddCtx(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	for i, k := range f.keys[:500] {
		ok, err := f.ours.Contains(ctx, k)
		if err != nil || !ok {
			t.Fatalf("bloomkit lost key %d: %v", i, err)
		}
		ok, err = f.zero.ExistsCtx(ctx, k)
		if err != nil || !ok {
			t.Fatalf("go-zero lost key %d: %v", i, err)
		}
	}
}
