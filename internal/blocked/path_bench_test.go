package blocked

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bloomkit/bloomkit/internal/hashing"
)

// Whole-path benchmarks: a 16-byte key is hashed (scheme 2, as new filters
// do) and tested or added, one key after another with nothing between them,
// so what is measured includes how far one lookup's cache miss overlaps the
// next one's. Filters at 1% for n = 1e6 (1.2 MB), 1e7 (12 MB) and 860e6
// (1.07 GB). The small ones hold their n keys; the 1 GB one has its bits
// set at random to half (the density at capacity) and holds the 2^20 hit
// keys. Run:
//
//	go test -run '^$' -bench 'Path' -count 5 ./internal/blocked

const pathKeys = 1 << 20

type pathSize struct {
	name string
	n    uint64
}

var pathSizes = []pathSize{{"1MB", 1_000_000}, {"12MB", 10_000_000}, {"1GB", 860_000_000}}

// pathKeySet returns pathKeys 16-byte keys of set, back to back.
func pathKeySet(set uint64) []byte {
	flat := make([]byte, 16*pathKeys)
	for i := range uint64(pathKeys) {
		x := remix(set<<56|i, 7)
		binary.LittleEndian.PutUint64(flat[16*i:], x)
		binary.LittleEndian.PutUint64(flat[16*i+8:], remix(x, 9))
	}
	return flat
}

var (
	pathHits   = sync.OnceValue(func() []byte { return pathKeySet(1) })
	pathMisses = sync.OnceValue(func() []byte { return pathKeySet(2) })
)

type pathFilter struct {
	words  []uint64
	blocks uint64
	k      uint32
}

var pathFilters = map[string]*pathFilter{}

func pathSum(key []byte) hashing.Digest { return hashing.Scheme2.Sum(key, 0) }

// pathFilterOf returns the filled filter of size s, building it once per
// process; only one 1 GB filter is kept.
func pathFilterOf(b *testing.B, s pathSize) *pathFilter {
	if f, ok := pathFilters[s.name]; ok {
		return f
	}
	m, k, err := Params(s.n, 0.01)
	if err != nil {
		b.Fatal(err)
	}
	f := &pathFilter{AlignedWords(m / 64), m / BlockBits, k}
	hits := pathHits()
	if s.n > pathKeys {
		if s.n > 100_000_000 {
			for i := range f.words {
				f.words[i] = remix(uint64(i), 3)
			}
		} else {
			var key [16]byte
			for i := range s.n {
				binary.LittleEndian.PutUint64(key[:], i)
				binary.LittleEndian.PutUint64(key[8:], 0xfeed)
				over(f.words, f.blocks, f.k).Add(pathSum(key[:]))
			}
		}
	}
	for i := 0; i < min(len(hits), int(s.n)*16); i += 16 {
		over(f.words, f.blocks, f.k).Add(pathSum(hits[i : i+16]))
	}
	pathFilters[s.name] = f
	return f
}

type containsFunc func([]uint64, uint64, hashing.Digest, uint32) bool

var pathSink atomic.Uint64

// BenchmarkPathDuel runs the lookup designs in turns, 4096 keys each, and
// reports for each the median time per key over its turns: on a shared,
// noisy machine every design sees the same noise, so the ratios hold even
// when the absolute numbers drift. One op is one round of turns.
//
//	go test -run '^$' -bench 'PathDuel' -benchtime 2000x -count 5 ./internal/blocked
func BenchmarkPathDuel(b *testing.B) {
	impls := []struct {
		name string
		fn   containsFunc
	}{{"old", containsOld}, {"new", containsDigest}, {"early7", containsEarly7}, {"shift", containsShift}, {"masks", containsMasks}}
	const turn = 4096
	for _, s := range pathSizes {
		for _, op := range []string{"hit", "miss"} {
			b.Run(fmt.Sprintf("size=%s/op=%s", s.name, op), func(b *testing.B) {
				f := pathFilterOf(b, s)
				keys := pathMisses()
				if op == "hit" {
					keys = pathHits()[:16*min(pathKeys, s.n)]
				}
				times := make([][]float64, len(impls))
				off, found := 0, 0
				for r := 0; b.Loop(); r++ {
					for t := range impls {
						i := (t + r) % len(impls) // rotate: no design always follows another
						fn := impls[i].fn
						start := time.Now()
						for range turn {
							if fn(f.words, f.blocks, pathSum(keys[off:off+16:off+16]), f.k) {
								found++
							}
							if off += 16; off == len(keys) {
								off = 0
							}
						}
						times[i] = append(times[i], float64(time.Since(start).Nanoseconds())/turn)
					}
				}
				for i, impl := range impls {
					b.ReportMetric(median(times[i]), impl.name+"-ns/key")
				}
				pathSink.Add(uint64(found))
			})
		}
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkPathAddDuel adds new keys to empty filters of each size, the
// designs in turns as in BenchmarkPathDuel, each design into its own filter
// (cleared, untimed, when it holds its n keys).
//
//	go test -run '^$' -bench 'PathAddDuel' -benchtime 1000x -count 5 ./internal/blocked
func BenchmarkPathAddDuel(b *testing.B) {
	impls := []struct {
		name string
		fn   containsFunc
	}{{"old", addOld}, {"new", addDigest}, {"masks", addMasks}, {"single", addPlainDigest}, {"single-masks", addSingleMasks}}
	const turn = 4096
	for _, s := range pathSizes {
		b.Run("size="+s.name, func(b *testing.B) {
			m, k, err := Params(s.n, 0.01)
			if err != nil {
				b.Fatal(err)
			}
			type state struct {
				words      []uint64
				added, off uint64
			}
			st := make([]state, len(impls))
			for i := range st {
				st[i].words = AlignedWords(m / 64)
			}
			keys := pathHits()
			times := make([][]float64, len(impls))
			fresh := 0
			for r := 0; b.Loop(); r++ {
				for t := range impls {
					i := (t + r) % len(impls)
					fn, s2 := impls[i].fn, &st[i]
					if s2.added+turn > s.n {
						clear(s2.words)
						s2.added = 0
					}
					start := time.Now()
					for range turn {
						o := s2.off % pathKeys * 16
						if fn(s2.words, m/BlockBits, hashing.Scheme2.Sum(keys[o:o+16:o+16], s2.off/pathKeys), k) {
							fresh++
						}
						s2.off++
					}
					times[i] = append(times[i], float64(time.Since(start).Nanoseconds())/turn)
					s2.added += turn
				}
			}
			for i, impl := range impls {
				b.ReportMetric(median(times[i]), impl.name+"-ns/key")
			}
			pathSink.Add(uint64(fresh))
		})
	}
}

// BenchmarkPathBatchDuel compares, in turns, one key at a time (hash and
// Contains) with batches: wCxG hashes C keys, then warms (Warm) and tests
// them G at a time (w64x16 was ContainsMany before issue 13); pCxG warms
// group j+1 before it tests group j (p64x32 is ContainsMany now).
//
//	go test -run '^$' -bench 'PathBatchDuel' -benchtime 300x -count 5 ./internal/blocked
func BenchmarkPathBatchDuel(b *testing.B) {
	type batchFunc func(f *pathFilter, keys []byte, found []bool)
	single := func(f *pathFilter, keys []byte, found []bool) {
		for i := range found {
			found[i] = over(f.words, f.blocks, f.k).Contains(pathSum(keys[16*i : 16*i+16 : 16*i+16]))
		}
	}
	// warm hashes chunk keys, then warms and tests them g at a time.
	warm := func(chunk, g int) batchFunc {
		return func(f *pathFilter, keys []byte, found []bool) {
			var ds [256]hashing.Digest
			for len(found) > 0 {
				n := min(len(found), chunk)
				for i := range n {
					ds[i] = pathSum(keys[16*i : 16*i+16 : 16*i+16])
				}
				for j := 0; j < n; j += g {
					e := min(j+g, n)
					over(f.words, f.blocks, 0).Warm(ds[j:e])
					for i := j; i < e; i++ {
						found[i] = over(f.words, f.blocks, f.k).Contains(ds[i])
					}
				}
				keys, found = keys[16*n:], found[n:]
			}
		}
	}
	// pipe warms group j+1 before it tests group j.
	pipe := func(chunk, g int) batchFunc {
		return func(f *pathFilter, keys []byte, found []bool) {
			var ds [256]hashing.Digest
			for len(found) > 0 {
				n := min(len(found), chunk)
				for i := range n {
					ds[i] = pathSum(keys[16*i : 16*i+16 : 16*i+16])
				}
				over(f.words, f.blocks, 0).Warm(ds[:min(g, n)])
				for j := 0; j < n; j += g {
					e := min(j+g, n)
					if e < n {
						over(f.words, f.blocks, 0).Warm(ds[e:min(e+g, n)])
					}
					for i := j; i < e; i++ {
						found[i] = over(f.words, f.blocks, f.k).Contains(ds[i])
					}
				}
				keys, found = keys[16*n:], found[n:]
			}
		}
	}
	impls := []struct {
		name string
		fn   batchFunc
	}{{"single", single}, {"w64x16", warm(64, 16)}, {"w64x32", warm(64, 32)}, {"w64x64", warm(64, 64)},
		{"p64x16", pipe(64, 16)}, {"p64x32", pipe(64, 32)}}
	const turn = 4096
	for _, s := range pathSizes {
		for _, op := range []string{"hit", "miss"} {
			b.Run(fmt.Sprintf("size=%s/op=%s", s.name, op), func(b *testing.B) {
				f := pathFilterOf(b, s)
				keys := pathMisses()
				if op == "hit" {
					keys = pathHits()[:16*min(pathKeys, s.n)]
				}
				found := make([]bool, 256)
				times := make([][]float64, len(impls))
				off, count := 0, 0
				for r := 0; b.Loop(); r++ {
					for t := range impls {
						i := (t + r) % len(impls)
						fn := impls[i].fn
						start := time.Now()
						for range turn / 256 {
							if off+16*256 > len(keys) {
								off = 0
							}
							fn(f, keys[off:off+16*256], found)
							for _, ok := range found {
								if ok {
									count++
								}
							}
							off += 16 * 256
						}
						times[i] = append(times[i], float64(time.Since(start).Nanoseconds())/turn)
					}
				}
				for i, impl := range impls {
					b.ReportMetric(median(times[i]), impl.name+"-ns/key")
				}
				pathSink.Add(uint64(count))
			})
		}
	}
}

// The digest forms as functions of the words, for the design tables above.
func containsDigest(words []uint64, blocks uint64, d hashing.Digest, k uint32) bool {
	return over(words, blocks, k).Contains(d)
}

func addDigest(words []uint64, blocks uint64, d hashing.Digest, k uint32) bool {
	return over(words, blocks, k).Add(d)
}

func addPlainDigest(words []uint64, blocks uint64, d hashing.Digest, k uint32) bool {
	return over(words, blocks, k).AddPlain(d)
}
