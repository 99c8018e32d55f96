package partitioned

import (
	"unsafe"

	"github.com/bloomkit/bloomkit"
)

// Scheme returns the hashing scheme the filter hashes keys with, as its file
// records it: bloomkit.Scheme1 for files made before scheme 2 existed (they
// keep answering as they always did), bloomkit.Scheme2 for new filters
// unless WithScheme chose otherwise.
func (f *Filter) Scheme() bloomkit.Scheme { return f.geom.scheme }

// Hash returns the digest of key under the filter's Scheme and Seed: what
// Add and Contains compute before they probe, for the *Digest methods. Hash a key
// once and use the digest with every filter of the same Scheme and Seed (the
// shards of a sharded filter, say). It does not allocate.
func (f *Filter) Hash(key []byte) bloomkit.Digest { return f.hash.Sum(key) }

// HashString is Hash for a string key, without copying it.
func (f *Filter) HashString(key string) bloomkit.Digest {
	return f.hash.SumString(key)
}

// bytesOf returns the bytes of s without copying them, for the keyed paths
// that only read a key.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
