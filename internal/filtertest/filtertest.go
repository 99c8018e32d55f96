// Package filtertest is the correctness suite every bloomkit variant runs
// against its own constructor: no false negatives, a measured false-positive
// rate within bounds derived from the binomial deviation, lock-free
// concurrency, zero allocations, and deterministic keys to do it with.
//
// Every variant describes itself once, as a Variant (its constructors,
// openers, accessors and errors, in the package's variant_test.go), and runs
// the shared suites with it: RunFileSuite (file lifecycle, corrupt,
// truncated and foreign files, publishing), the fuzz bodies FuzzOpenReadOnly
// and FuzzReadFrom, CreateOnFullDisk, StreamRoundTrip, RejectsBadArguments
// and AddReportsNew; the variants of a fixed geometry (a Combiner: Union and
// Intersect) also UnionIntersect and FalsePositiveRate. BinaryEncoding
// checks MarshalBinary and its kin. Checks only one variant needs are passed
// in as Hooks or stay in its package.
package filtertest

import (
	"encoding/binary"
	"math"
	"os"
	"runtime"
	"sync"
	"testing"
)

// Filter is what the helpers below need of a filter: adds and lookups
// (less than bloomkit.Adder, so that a test's reference filter of another
// design can use them too).
type Filter interface {
	Add(key []byte) bool
	AddString(key string) bool
	Contains(key []byte) bool
	ContainsString(key string) bool
}

// Key writes the i-th key of key set `set` (16 bytes) into buf and returns it.
// Keys of different sets never coincide; within a set they are distinct and
// look random.
func Key(buf []byte, set, i uint64) []byte {
	binary.LittleEndian.PutUint64(buf[0:], SplitMix(set<<40^i))
	binary.LittleEndian.PutUint64(buf[8:], set)
	return buf[:16]
}

// SplitMix is the splitmix64 finalizer: a bijection on uint64.
func SplitMix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// AddKeys adds keys 0..n-1 of set to f.
func AddKeys(f Filter, set, n uint64) {
	var buf [16]byte
	for i := uint64(0); i < n; i++ {
		f.Add(Key(buf[:], set, i))
	}
}

// NoFalseNegatives checks that keys 0..n-1 of set, all added, test present in
// both byte and string form.
func NoFalseNegatives(t testing.TB, f Filter, set, n uint64) {
	t.Helper()
	var buf [16]byte
	for i := uint64(0); i < n; i++ {
		k := Key(buf[:], set, i)
		if !f.Contains(k) || !f.ContainsString(string(k)) {
			t.Fatalf("false negative: key %d of set %d (%x) was added but tests absent", i, set, k)
		}
	}
}

// CountFalsePositives queries keys 0..trials-1 of set (never added) and
// returns how many test present. Above a million trials it spreads them over
// every core (lookups are safe for concurrent use); the count is the same.
func CountFalsePositives(f Filter, set, trials uint64) uint64 {
	workers := uint64(runtime.GOMAXPROCS(0))
	if trials < 1<<20 || workers == 1 {
		return countRange(f, set, 0, trials, 1)
	}
	counts := make([]uint64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[w] = countRange(f, set, w, trials, workers)
		}()
	}
	wg.Wait()
	var fp uint64
	for _, c := range counts {
		fp += c
	}
	return fp
}

// countRange counts the false positives among keys first, first+step, ...
// below end of set.
func countRange(f Filter, set, first, end, step uint64) uint64 {
	var buf [16]byte
	var fp uint64
	for i := first; i < end; i += step {
		if f.Contains(Key(buf[:], set, i)) {
			fp++
		}
	}
	return fp
}

// TrialsFor returns how many absent keys FPRBound needs to judge
// "measured rate <= factor x target" for a filter whose formula predicts
// the rate expected: enough that the limit stands 4.4 binomial deviations
// above the expected count. It returns 0 when the formula itself is above
// the limit.
func TrialsFor(expected, target, factor float64) uint64 {
	gap := factor*target - expected
	if !(gap > 0) {
		return 0
	}
	return uint64(math.Ceil(4.4 * 4.4 * expected * (1 - expected) / (gap * gap)))
}

// FPRBound checks a measured false-positive count against the contract
// "measured rate <= factor * target", where the filter's own formula
// predicts the rate `expected`. Before it judges the filter it checks the
// test itself: the limit must stand at least 4 standard deviations of the
// binomial count above the expected count, so that a correct filter cannot
// fail by chance with any seed, while a real regression (a rate above the
// limit) still fails. It also fails a count more than 6 deviations below the
// expectation: that is a broken experiment (negatives that were added, say),
// not a good filter.
func FPRBound(t testing.TB, fp, trials uint64, expected, target, factor float64) {
	t.Helper()
	n := float64(trials)
	mean := n * expected
	sd := math.Sqrt(n * expected * (1 - expected))
	limit := factor * target * n
	if limit < mean+4*sd {
		t.Fatalf("test too weak: limit %.0f false positives is only %.1f deviations above the expected %.1f (sd %.1f); use more trials",
			limit, (limit-mean)/sd, mean, sd)
	}
	rate := float64(fp) / n
	t.Logf("false positives %d of %d: rate %.3g, target %.3g (x%.3f), formula %.3g, z = %+.2f",
		fp, trials, rate, target, rate/target, expected, (float64(fp)-mean)/sd)
	if float64(fp) > limit {
		t.Errorf("false-positive rate %.4g exceeds %.2f x target %.4g (%d of %d trials)", rate, factor, target, fp, trials)
	}
	if float64(fp) < mean-6*sd {
		t.Errorf("false-positive count %d is %.1f deviations below the expected %.1f: the experiment is broken", fp, (mean-float64(fp))/sd, mean)
	}
}

// Concurrent adds keys 0..n-1 of set from `workers` goroutines (each key by
// one of them) while as many others query them, then checks that no key was
// lost and that the number of Adds that reported a new key is plausible.
func Concurrent(t testing.TB, f Filter, set, n uint64, workers int) {
	t.Helper()
	var wg sync.WaitGroup
	news := make([]uint64, workers)
	for w := 0; w < workers; w++ {
		wg.Add(2)
		go func() { // writer: keys w, w+workers, ...
			defer wg.Done()
			var buf [16]byte
			for i := uint64(w); i < n; i += uint64(workers) {
				if f.Add(Key(buf[:], set, i)) {
					news[w]++
				}
			}
		}()
		go func() { // reader: queries its share while it is being written
			defer wg.Done()
			var buf [16]byte
			for i := uint64(w); i < n; i += uint64(workers) {
				f.ContainsString(string(Key(buf[:], set, i)))
			}
		}()
	}
	wg.Wait()
	NoFalseNegatives(t, f, set, n)
	var total uint64
	for _, c := range news {
		total += c
	}
	// Every key is new unless all its bits were already set: a false positive.
	// At most a small fraction of n; far fewer than n/2 for any sane filter.
	if total > n || total < n/2 {
		t.Errorf("%d of %d concurrent Adds reported a new key", total, n)
	}
}

// ZeroAllocs checks that adding and querying does not allocate.
func ZeroAllocs(t testing.TB, f Filter) {
	t.Helper()
	key := []byte("zero-allocation-key-0123456789")
	s := "zero-allocation-string-key"
	for name, fn := range map[string]func(){
		"Add":            func() { f.Add(key) },
		"AddString":      func() { f.AddString(s) },
		"Contains":       func() { f.Contains(key) },
		"ContainsString": func() { f.ContainsString(s) },
	} {
		if a := testing.AllocsPerRun(1000, fn); a != 0 {
			t.Errorf("%s allocates %.1f times per call", name, a)
		}
	}
}

// LongEnv is the environment variable that turns on the long statistical
// sweeps and soak runs: BLOOMKIT_LONG=1. The README's test command leaves
// them off so that it fits in a few minutes; .ci/run turns them on.
const LongEnv = "BLOOMKIT_LONG"

// Long reports whether the long sweeps and soak runs are on (LongEnv=1).
func Long() bool { return os.Getenv(LongEnv) == "1" }

// SkipUnlessLong skips t, saying what it skips, unless Long().
func SkipUnlessLong(t testing.TB, what string) {
	t.Helper()
	if !Long() {
		t.Skipf("%s: a long run, on with %s=1 (.ci/run sets it)", what, LongEnv)
	}
}
