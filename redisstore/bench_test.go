package redisstore

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// benchFilter returns a filter of 1e6 keys at p = 1e-4 on the shared server.
func benchFilter(b *testing.B, c redis.UniversalClient, opts ...Option) *Filter {
	ctx := context.Background()
	name := filterName(b)
	_ = Delete(ctx, c, name)
	f, err := Create(ctx, c, name, 1_000_000, 1e-4, opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { Delete(context.Background(), c, name) })
	return f
}

// BenchmarkFilter measures Add and Contains through Redis, one key per round
// trip and in pipelined batches, beside a bare PING through the same
// client. ns/op is per key; keys/s is the throughput of one client
// goroutine. filter=growing is a growing filter started at n = 1000 and
// fed 2·10^5 keys (8 stages), shared by the growing sub-benchmarks.
func BenchmarkFilter(b *testing.B) {
	c := client(b)
	ctx := context.Background()
	b.Run("op=ping", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := c.Ping(ctx).Err(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "keys/s")
	})
	for _, kind := range []string{"fixed", "growing"} {
		for _, batch := range []int{1, 100, 1000} {
			for _, op := range []string{"add", "contains"} {
				b.Run(fmt.Sprintf("filter=%s/op=%s/batch=%d", kind, op, batch), func(b *testing.B) {
					var f *Filter
					ks := keys(0, 100_000)
					if kind == "fixed" {
						f = benchFilter(b, c)
					} else {
						f = grownFilter(b, c)
					}
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
					if kind == "growing" {
						b.ReportMetric(float64(f.NumStages()), "stages")
					}
				})
			}
		}
	}
}

var grown struct {
	sync.Mutex
	f *Filter
}

// grownFilter returns the growing filter of BenchmarkFilter, made once.
func grownFilter(b *testing.B, c redis.UniversalClient) *Filter {
	grown.Lock()
	defer grown.Unlock()
	if grown.f != nil {
		return grown.f
	}
	ctx := context.Background()
	name := "bench:grown"
	_ = Delete(ctx, c, name)
	f, err := Create(ctx, c, name, 1000, 1e-4, WithGrowth(2))
	if err != nil {
		b.Fatal(err)
	}
	for lo := uint64(1 << 40); lo < 1<<40+200_000; lo += 10_000 {
		if _, err := f.AddMany(ctx, keys(lo, lo+10_000)); err != nil {
			b.Fatal(err)
		}
	}
	grown.f = f
	return f
}

// BenchmarkAddCommands compares three ways to add keys to a fixed filter
// in Redis, one key per call (batch=1) and in pipelined batches of 1000:
//
//   - lua: the Add script (what the filter uses): one command per call or
//     per segment of a batch; it reports "new" exactly and counts.
//   - bitfield: one BITFIELD SET u1 per bit, returning the old bits (new =
//     some old bit was 0); counting needs an INCRBY after it.
//   - getrange-setbit: GETRANGE of the block, then, for a new key, one
//     SETBIT per unset bit and an INCR: a second round trip.
//
// BITFIELD and SETBIT create a missing segment instead of failing, and the
// last two report "new" twice when two clients add a key at once. The
// methods run interleaved, round by round (each round adds fresh keys
// through each method, each into its own filter), and the benchmark
// reports the median over rounds of each method's time over the script's:
// below 1 would mean faster than the script.
func BenchmarkAddCommands(b *testing.B) {
	c := client(b)
	ctx := context.Background()
	methods := []string{"lua", "bitfield", "getrange-setbit"}
	for _, batch := range []int{1, 1000} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			fs := map[string]*Filter{}
			for _, m := range methods {
				name := filterName(b) + ":" + m
				_ = Delete(ctx, c, name)
				f, err := Create(ctx, c, name, 1_000_000, 1e-4)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { Delete(context.Background(), c, name) })
				fs[m] = f
			}
			per := 200
			if batch > 1 {
				per = 5 * batch
			}
			ratios := map[string][]float64{}
			next := uint64(0)
			b.ResetTimer()
			for round := 0; round < b.N; round++ {
				ks := keys(next, next+uint64(per))
				next += uint64(per)
				took := map[string]float64{}
				for _, m := range methods {
					t0 := nanotime()
					for lo := 0; lo < per; lo += batch {
						addWith(b, ctx, c, fs[m], m, ks[lo:lo+batch])
					}
					took[m] = float64(nanotime() - t0)
				}
				for _, m := range methods[1:] {
					ratios[m] = append(ratios[m], took[m]/took["lua"])
				}
			}
			for _, m := range methods[1:] {
				b.ReportMetric(median(ratios[m]), m+"/lua")
			}
		})
	}
}

// addWith adds ks to f by method m (see BenchmarkAddCommands).
func addWith(b *testing.B, ctx context.Context, c redis.UniversalClient, f *Filter, m string, ks [][]byte) {
	st := f.st.Load()
	ss := &st.stages[0]
	switch m {
	case "lua":
		var err error
		if len(ks) == 1 {
			_, err = f.Add(ctx, ks[0])
		} else {
			_, err = f.AddMany(ctx, ks)
		}
		if err != nil {
			b.Fatal(err)
		}
	case "bitfield":
		pipe := c.Pipeline()
		cmds := make([]*redis.IntSliceCmd, len(ks))
		segs := make([]uint64, len(ks))
		for i, key := range ks {
			l := st.locate(0, st.sum(&input{b: key}))
			segs[i] = l.seg
			args := []any{}
			for _, p := range positions(l.m) {
				args = append(args, "SET", "u1", 8*l.off+(p^7), 1)
			}
			cmds[i] = pipe.BitField(ctx, ss.seg[l.seg], args...)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			b.Fatal(err)
		}
		news := map[uint64]int64{}
		for i, cmd := range cmds {
			for _, v := range cmd.Val() {
				if v == 0 {
					news[segs[i]]++
					break
				}
			}
		}
		if len(news) > 0 {
			pipe = c.Pipeline()
			for seg, v := range news {
				pipe.IncrBy(ctx, ss.cnt[seg], v)
			}
			if _, err := pipe.Exec(ctx); err != nil {
				b.Fatal(err)
			}
		}
	case "getrange-setbit":
		pipe := c.Pipeline()
		cmds := make([]*redis.StringCmd, len(ks))
		type loc struct{ seg, off uint64 }
		locs := make([]loc, len(ks))
		for i, key := range ks {
			l := st.locate(0, st.sum(&input{b: key}))
			locs[i] = loc{l.seg, l.off}
			cmds[i] = pipe.GetRange(ctx, ss.seg[l.seg], int64(l.off), int64(l.off+63))
		}
		if _, err := pipe.Exec(ctx); err != nil {
			b.Fatal(err)
		}
		pipe = c.Pipeline()
		writes := 0
		for i, key := range ks {
			blk := cmds[i].Val()
			isNew := false
			for _, p := range positions(st.locate(0, st.sum(&input{b: key})).m) {
				if blk[p/8]&(1<<(p%8)) == 0 {
					pipe.SetBit(ctx, ss.seg[locs[i].seg], int64(8*locs[i].off+(p^7)), 1)
					isNew = true
					writes++
				}
			}
			if isNew {
				pipe.Incr(ctx, ss.cnt[locs[i].seg])
			}
		}
		if writes > 0 {
			if _, err := pipe.Exec(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkRatioToPing interleaves, round by round, bare PINGs and single
// Contains and Add calls through the same client, and reports the median
// over rounds of each call's time over a PING's (the target is at most
// 1.2). Interleaving keeps the ratio honest on a machine whose load
// changes. Each of the b.N rounds times 200 calls of each kind.
func BenchmarkRatioToPing(b *testing.B) {
	c := client(b)
	ctx := context.Background()
	for _, kind := range []string{"fixed", "growing"} {
		b.Run("filter="+kind, func(b *testing.B) {
			var f *Filter
			if kind == "fixed" {
				f = benchFilter(b, c)
			} else {
				f = benchFilter(b, c, WithGrowth(2))
			}
			ks := keys(0, 20_000)
			if _, err := f.AddMany(ctx, ks); err != nil {
				b.Fatal(err)
			}
			const per = 200
			var contains, add []float64
			next := 0
			b.ResetTimer()
			for round := 0; round < b.N; round++ {
				t0 := nanotime()
				for range per {
					if err := c.Ping(ctx).Err(); err != nil {
						b.Fatal(err)
					}
				}
				t1 := nanotime()
				for i := range per {
					if _, err := f.Contains(ctx, ks[(next+i)%len(ks)]); err != nil {
						b.Fatal(err)
					}
				}
				t2 := nanotime()
				for i := range per {
					if _, err := f.Add(ctx, ks[(next+i)%len(ks)]); err != nil {
						b.Fatal(err)
					}
				}
				t3 := nanotime()
				next += per
				ping := float64(t1 - t0)
				contains = append(contains, float64(t2-t1)/ping)
				add = append(add, float64(t3-t2)/ping)
			}
			b.ReportMetric(median(contains), "contains/ping")
			b.ReportMetric(median(add), "add/ping")
		})
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func nanotime() int64 { return time.Now().UnixNano() }
