package standard

import (
	"sync/atomic"
	"unsafe"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/prefetch"
)

// warmGroup is how many keys ContainsDigests warms at a time: with k words
// a key, 8 keys are about as many cache misses as a core keeps in flight.
const warmGroup = 8

// warmSink keeps the loads of warm from being optimised away.
var warmSink atomic.Uint64

// ContainsDigests sets found[i] to ContainsDigest(ds[i]) for every digest
// and returns found, grown when it is shorter than ds. It loads the k words
// of a group of keys before it tests them, so that the group's cache misses
// (k a key, on a filter larger than the CPU caches) are in flight together
// instead of one key's after the other's.
func (f *Filter) ContainsDigests(ds []bloomkit.Digest, found []bool) []bool {
	if len(found) < len(ds) {
		found = append(found, make([]bool, len(ds)-len(found))...)
	}
	found = found[:len(ds)]
	words, m, k := f.words, f.geom.M, f.geom.K
	groups(words, m, k, ds, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			found[i] = probe(words, m, k, ds[i])
		}
	})
	return found
}

// usePrefetch: groups prefetches the next group's words (package prefetch,
// on amd64) rather than loading the group's words before it is worked on.
// A variable so that a test can compare the two.
var usePrefetch = prefetch.Available

// groups calls fn(lo, hi) for each group ds[lo:hi] of warmGroup digests, in
// order, with the group's k words a key on their way first, so that their
// cache misses are in flight together: with usePrefetch the next group's
// are prefetched while this one is worked on, otherwise this group's are
// loaded (warm) just before. ContainsDigests and Builder.AddDigests share it.
func groups(words []uint64, m uint64, k uint32, ds []hashing.Digest, fn func(lo, hi int)) {
	pf := usePrefetch && k > 0 && uint64(len(words)) >= (m+63)/64 // k is 0 after Close
	if pf {
		prefetch.Positions(words, m, k, ds[:min(warmGroup, len(ds))])
	}
	for lo := 0; lo < len(ds); lo += warmGroup {
		hi := min(lo+warmGroup, len(ds))
		switch {
		case pf && hi < len(ds):
			prefetch.Positions(words, m, k, ds[hi:min(hi+warmGroup, len(ds))])
		case !pf:
			warm(words, m, k, ds[lo:hi])
		}
		fn(lo, hi)
	}
}

// warm loads the k words of each digest of ds (see probe for the bounds).
func warm(words []uint64, m uint64, k uint32, ds []hashing.Digest) {
	if uint64(len(words)) < (m+63)/64 {
		return // closed: probe reads nothing
	}
	base := unsafe.Pointer(unsafe.SliceData(words))
	var sink uint64
	for _, d := range ds {
		h := d.H1
		for range k {
			sink += atomic.LoadUint64((*uint64)(unsafe.Add(base, hashing.Reduce(h, m)>>6*8)))
			h += d.H2
		}
	}
	if sink == 0x5bd1e9955bd1e995 {
		warmSink.Store(sink)
	}
}
