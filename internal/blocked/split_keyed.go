package blocked

import "github.com/bloomkit/bloomkit/internal/hashing"

// The keyed forms of the split-block layout: the whole path from a key to
// its block in one function, the key of 9 to 16 bytes hashed in line as in
// keyed.go (the measured reason is there).

// splitHash returns the H1 and lane key of key under hash.
func splitHash(hash *hashing.Hasher, key []byte) (h1 uint64, x uint32) {
	var h uint64
	switch {
	case hash.Scheme() != hashing.Scheme2:
		d := hash.Sum(key)
		return d.H1, laneKey(d)
	case hashing.Short(len(key)):
		h = hash.Sum9to16(key)
	case hashing.Medium(len(key)):
		h = hash.Sum17to128(key)
	default:
		h = hash.Sum64(key)
	}
	return h, uint32(hashing.Mix(h) >> 32)
}

// ContainsKey reports whether key may have been added: Contains of its
// digest under hash.
func (s Split) ContainsKey(hash *hashing.Hasher, key []byte) bool {
	h1, x := splitHash(hash, key)
	if len(s.Words) == 0 {
		return true
	}
	return splitContains(splitBlock(s.Words, s.Blocks, h1), x)
}

// AddKey adds key and reports whether it was new: Add of its digest under
// hash. Safe for concurrent use.
func (s Split) AddKey(hash *hashing.Hasher, key []byte) bool {
	h1, x := splitHash(hash, key)
	if len(s.Words) == 0 {
		return false
	}
	return splitAdd(splitBlock(s.Words, s.Blocks, h1), x)
}

// AddKeyPlain is AddKey with plain stores (AddPlain): for one goroutine
// that builds a filter nobody else uses meanwhile.
func (s Split) AddKeyPlain(hash *hashing.Hasher, key []byte) bool {
	h1, x := splitHash(hash, key)
	if len(s.Words) == 0 {
		return false
	}
	return splitAddPlain(splitBlock(s.Words, s.Blocks, h1), x)
}
