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
	if usePrefetch && uint64(len(words)) >= (m+63)/64 {
		// The next group's words are prefetched while this one is tested.
		prefetch.Positions(words, m, k, ds[:min(warmGroup, len(ds))])
		for lo := 0; lo < len(ds); lo += warmGroup {
			hi := min(lo+warmGroup, len(ds))
			if hi < len(ds) {
				prefetch.Positions(words, m, k, ds[hi:min(hi+warmGroup, len(ds))])
			}
			for i, d := range ds[lo:hi] {
				found[lo+i] = probe(words, m, k, d)
			}
		}
		return found
	}
	for lo := 0; lo < len(ds); lo += warmGroup {
		group := ds[lo:min(lo+warmGroup, len(ds))]
		warm(words, m, k, group)
		for i, d := range group {
			found[lo+i] = probe(words, m, k, d)
		}
	}
	return found
}

// usePrefetch: ContainsDigests prefetches the next group's words (package
// prefetch, on amd64) rather than loading the group's words before it
// tests them. A variable so that a test can compare the two.
var usePrefetch = prefetch.Available

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
