package benchmarks

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/FastFilter/xorfilter"
	"github.com/zeebo/xxh3"

	"github.com/bloomkit/bloomkit/fuse"
)

// BenchmarkFuseDuel measures bloomkit's fuse filter against
// FastFilter/xorfilter's BinaryFuse8 (8-bit) and BinaryFuse[uint16]
// (16-bit), in turns as BenchmarkDuel does, on 16-byte keys that both
// hash with XXH3-64 (inside each lookup and each build):
//
//	go test -run '^$' -bench 'FuseDuel' -benchtime 200x -count 5
//
// op=hit and op=miss report each filter's median ns/key over 4096-key
// turns and the ratio fuse/xorfilter; op=build builds both from the same
// keys each round (ours on every core, xorfilter's on one, as it is) and
// reports wall ns/key of each and the ratio, and the process CPU time per
// key of each and its ratio (the work, whatever share of the cores the
// machine's other load leaves); op=many compares fuse's
// ContainsMany (batches of 4096 absent keys) with its single Contains.
func BenchmarkFuseDuel(b *testing.B) {
	for _, n := range []int{1e6, 1e7} {
		keys := NewKeySet(Key16, SetPositive, 0, n)
		absent := NewKeySet(Key16, SetNegative, 0, 1<<20)
		all := make([][]byte, n)
		for i := range all {
			all[i] = keys.At(i)
		}
		for _, bits := range []int{8, 16} {
			p := fuse.Rate8
			if bits == 16 {
				p = fuse.Rate16
			}
			name := fmt.Sprintf("n=%s/bits=%d", FormatCount(uint64(n)), bits)
			b.Run(name+"/op=build", func(b *testing.B) { fuseBuildDuel(b, all, p, bits) })
			ours, err := fuse.Build(all, p)
			if err != nil {
				b.Fatal(err)
			}
			theirs := xorContains(all, bits)
			runtime.GC()
			for _, op := range []string{"hit", "miss"} {
				set := keys
				if op == "miss" {
					set = absent
				}
				b.Run(name+"/op="+op, func(b *testing.B) {
					run := []func() float64{
						lookupTurns(bloomkitFuse(ours), set, 4096),
						lookupTurns(theirs, set, 4096),
					}
					duelReport(b, run)
				})
			}
			b.Run(name+"/op=many", func(b *testing.B) {
				run := []func() float64{
					manyTurns(ours, absent, 4096),
					lookupTurns(bloomkitFuse(ours), absent, 4096),
				}
				duelReport(b, run, "many", "single")
			})
		}
	}
}

// manyTurns returns a function that looks up the next turn keys of keys
// (cycling) in f with ContainsMany and returns the time per key.
func manyTurns(f *fuse.Filter, keys KeySet, turn int) func() float64 {
	batch := make([][]byte, turn)
	found := make([]bool, turn)
	next := 0
	return func() float64 {
		for i := range batch {
			batch[i] = keys.At(next)
			if next++; next == keys.Len() {
				next = 0
			}
		}
		start := time.Now()
		f.ContainsMany(batch, found)
		return float64(time.Since(start).Nanoseconds()) / float64(turn)
	}
}

// xorFilter looks keys up in an xorfilter binary fuse filter, hashing each
// with XXH3-64.
type xorFilter struct{ contains func(uint64) bool }

func (x xorFilter) Add([]byte)               { panic(errStatic) }
func (x xorFilter) Contains(key []byte) bool { return x.contains(xxh3.Hash(key)) }
func (x xorFilter) Bytes() uint64            { return 0 }

// xorBuild hashes keys and builds xorfilter's filter of bits.
func xorBuild(keys [][]byte, bits int) (func(uint64) bool, error) {
	hs := make([]uint64, len(keys))
	for i, k := range keys {
		hs[i] = xxh3.Hash(k)
	}
	if bits == 8 {
		f, err := xorfilter.PopulateBinaryFuse8(hs)
		if err != nil {
			return nil, err
		}
		return f.Contains, nil
	}
	f, err := xorfilter.NewBinaryFuse[uint16](hs)
	if err != nil {
		return nil, err
	}
	return f.Contains, nil
}

func xorContains(keys [][]byte, bits int) Filter {
	c, err := xorBuild(keys, bits)
	if err != nil {
		panic(err)
	}
	return xorFilter{c}
}

func fuseBuildDuel(b *testing.B, keys [][]byte, p float64, bits int) {
	n := float64(len(keys))
	var cpu [2][]float64 // process CPU time per key of each build
	timed := func(i int, build func() error) func() float64 {
		return func() float64 {
			runtime.GC()
			c0, start := processCPU(), time.Now()
			if err := build(); err != nil {
				b.Fatal(err)
			}
			cpu[i] = append(cpu[i], float64(processCPU()-c0)/n)
			return float64(time.Since(start).Nanoseconds()) / n
		}
	}
	run := []func() float64{
		timed(0, func() error { _, err := fuse.Build(keys, p); return err }),
		timed(1, func() error { _, err := xorBuild(keys, bits); return err }),
	}
	duelReport(b, run)
	b.ReportMetric(median(cpu[0]), "fuse-cpu-ns/key")
	b.ReportMetric(median(cpu[1]), "xorfilter-cpu-ns/key")
	b.ReportMetric(median(cpu[0])/median(cpu[1]), "fuse/xorfilter-cpu")
}

// processCPU is the CPU time of the whole process (every thread), in ns.
func processCPU() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// duelReport runs run[0] (fuse, or names[0]) and run[1] (xorfilter, or
// names[1]) in alternating order each round and reports their medians and
// the ratio.
func duelReport(b *testing.B, run []func() float64, names ...string) {
	if len(names) == 0 {
		names = []string{"fuse", "xorfilter"}
	}
	times := make([][]float64, 2)
	for r := 0; b.Loop(); r++ {
		for t := range run {
			i := (t + r) % 2
			times[i] = append(times[i], run[i]())
		}
	}
	ours, theirs := median(times[0]), median(times[1])
	b.ReportMetric(ours, names[0]+"-ns/key")
	b.ReportMetric(theirs, names[1]+"-ns/key")
	b.ReportMetric(ours/theirs, names[0]+"/"+names[1])
}
